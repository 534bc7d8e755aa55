"""A per-caller request budget for the cloud role (issue #18): a team server is reachable by
every key it issued, and one runaway agent must not take it from the others.

A token bucket per identity: ``per_minute`` requests a minute on average, up to a minute's
worth at once. The owner (a person at the CLI or the TUI) is not limited. Each process keeps
its own buckets: behind several team-server processes a caller's budget is per process (the
load balancer's spread decides how much of it they see), which keeps the check to a few
microseconds with no database round trip.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from state.errors import RateLimited


class KeyRateLimiter:
    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_second = per_minute / 60.0
        self.capacity = float(per_minute)
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # identity -> (tokens, when)

    def admit(self, identity_id: str) -> None:
        """Take one request from the caller's budget, or raise RateLimited (HTTP 429, with
        the seconds until the next request is allowed)."""
        now = self.clock()
        tokens, then = self._buckets.get(identity_id, (self.capacity, now))
        tokens = min(self.capacity, tokens + (now - then) * self.per_second)
        if tokens < 1.0:
            self._buckets[identity_id] = (tokens, now)
            wait = math.ceil((1.0 - tokens) / self.per_second)
            raise RateLimited(
                f"too many requests from this key: at most {int(self.capacity)} a minute"
                f" (setting rate_limit_per_minute); try again in {wait} s",
                details={"retry_after_seconds": wait},
            )
        self._buckets[identity_id] = (tokens - 1.0, now)
