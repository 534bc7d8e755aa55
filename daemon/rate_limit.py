"""A per-caller request budget for the cloud role (issue #18): a team server is reachable by
every key it issued, and one runaway agent must not take it from the others.

A token bucket per identity: ``per_minute`` requests a minute on average, up to a minute's
worth at once. The owner (a person at the CLI or the TUI) is not limited. The check is a few
microseconds, with no database round trip.

**Several processes on one PostgreSQL database** share the budget: each process adds the
requests it admitted to a table about once a second (:func:`share_counts`,
state/pg/rate_counts.py, off the event loop) and reads back every process's total for the
minute; a caller whose total reached ``per_minute`` is refused by every process until that
minute ends. So a key gets its budget from the team server, not from each process behind the
load balancer, give or take what the processes admit in the second before they learn it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from state.errors import RateLimited

log = logging.getLogger(__name__)

# How often a process shares its counts (and learns the others'): the most a caller can
# overrun its team-wide budget by is about what the processes admit in this time.
SHARE_SECONDS = 1.0


class KeyRateLimiter:
    def __init__(
        self,
        per_minute: int,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.per_second = per_minute / 60.0
        self.capacity = float(per_minute)
        self.clock = clock
        self.wall = wall
        self._buckets: dict[str, tuple[float, float]] = {}  # identity -> (tokens, when)
        # For the budget shared with other processes: this minute's callers with the requests
        # admitted since the counts were last shared, and the minute each caller's team-wide
        # budget ran out in.
        self._minute = self._this_minute()
        self._admitted: dict[str, int] = {}
        self._spent: dict[str, int] = {}

    def admit(self, identity_id: str) -> None:
        """Take one request from the caller's budget, or raise RateLimited (HTTP 429, with
        the seconds until the next request is allowed)."""
        if self._spent and self._spent.get(identity_id) == self._this_minute():
            self._refuse(max(1, math.ceil(60 - self.wall() % 60)), "on this team server")
        now = self.clock()
        tokens, then = self._buckets.get(identity_id, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - then) * self.per_second)
        if tokens < 1.0:
            self._buckets[identity_id] = (tokens, now)
            self._refuse(math.ceil((1.0 - tokens) / self.per_second), "")
        self._buckets[identity_id] = (tokens - 1.0, now)
        self._admitted[identity_id] = self._admitted.get(identity_id, 0) + 1

    def _refuse(self, wait: int, where: str) -> None:
        raise RateLimited(
            f"too many requests from this key: at most {int(self.capacity)} a minute"
            f"{' ' + where if where else ''} (setting rate_limit_per_minute); try again in {wait} s",
            details={"retry_after_seconds": wait},
        )

    def _this_minute(self) -> int:
        return int(self.wall() // 60)

    # -- sharing the budget (several processes) -----------------------------------------------

    def take_admitted(self) -> tuple[int, dict[str, int]]:
        """(this minute, caller -> requests admitted since the last call) for every caller seen
        this minute (0 for those with none since: their total is still worth learning)."""
        minute = self._this_minute()
        if minute != self._minute:  # a new minute: last minute's callers start again
            self._minute = minute
            self._admitted = {identity: n for identity, n in self._admitted.items() if n}
        taken = dict(self._admitted)
        self._admitted = dict.fromkeys(taken, 0)
        return minute, taken

    def give_back(self, used: dict[str, int]) -> None:
        """Counts that could not be shared (the database unreachable): shared next time."""
        for identity, n in used.items():
            self._admitted[identity] = self._admitted.get(identity, 0) + n

    def learn(self, minute: int, totals: dict[str, int]) -> None:
        """Every process's total of ``minute`` per caller: those at the budget are refused
        until the minute ends."""
        self._spent = {identity: m for identity, m in self._spent.items() if m >= minute}
        for identity, total in totals.items():
            if total >= self.capacity:
                self._spent[identity] = minute


async def share_counts(limiter: KeyRateLimiter, counts: Any, every: float = SHARE_SECONDS) -> None:
    """Share ``limiter``'s counts through ``counts`` (state/pg/rate_counts.py) every ``every``
    seconds until cancelled."""
    failing = False
    while True:
        await asyncio.sleep(every)
        minute, used = limiter.take_admitted()
        if not used:
            continue
        try:
            totals = await asyncio.to_thread(counts.add, minute, used)
        except Exception as exc:  # the database away: each process keeps its own budget meanwhile
            limiter.give_back(used)
            if not failing:  # once per outage, not every second
                log.warning("sharing request counts with the other processes failed: %s", exc)
            failing = True
            continue
        if failing:
            log.info("sharing request counts with the other processes again")
            failing = False
        limiter.learn(minute, totals)
