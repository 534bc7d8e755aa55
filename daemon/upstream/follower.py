"""Follow the upstream's feed: pull as soon as a change commits there, not at the next round.

When the upstream lets a pull wait (its ``/api/sync/info`` has ``wait_max_seconds``: a
MemoryCloud Companion in the cloud role, on SQLite or PostgreSQL), one request at a time asks
for the changes after this daemon's cursor with ``wait``; the upstream answers when one of
the workspace's changes commits on any of its processes (daemon/runtime/feed_waiters.py),
and this daemon then runs its usual sync round (push, then pull). The scheduled round
(``sync_upstream_seconds``) goes on beside it, so a follower that stops loses nothing but
speed. An upstream without waiting pulls (the MemoryCloud service, an older companion) is
not followed: asking it in a loop would only poll it hard.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from daemon.upstream.client import UpstreamRejected, UpstreamUnreachable
from daemon.upstream.pusher import backoff_seconds

if TYPE_CHECKING:
    from daemon.upstream.client import UpstreamClient

log = logging.getLogger(__name__)

# How long one request waits upstream: under the idle timeout of the proxies between (60 s is
# common); the upstream may allow less (its wait_max_seconds).
FOLLOW_WAIT_SECONDS = 25


class FeedFollower:
    """A task that runs ``sync`` whenever the upstream's feed has something after ``cursor()``."""

    def __init__(
        self,
        client: Callable[[], UpstreamClient],
        cursor: Callable[[], int],
        following: Callable[[], bool],
        sync: Callable[[], Awaitable[str]],
        timeout: float,
    ) -> None:
        self.client = client
        self.cursor = cursor
        self.following = following  # still connected to an upstream with the sync extension
        self.sync = sync
        self.timeout = timeout  # the upstream's answer time, on top of the wait
        self.rounds = 0  # sync rounds this follower started (status and tests)
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> None:
        if not self.running and self.following():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="upstream-follower")
            self._task.add_done_callback(_log_crash)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        failures = 0
        wait: int | None = None
        loop = asyncio.get_running_loop()
        while self.following():
            client = self.client()
            cursor = self.cursor()
            asked = loop.time()
            try:
                if wait is None:
                    wait = await self._allowed_wait(client)
                    if wait is None:
                        log.info(
                            "upstream %s does not let pulls wait: its changes come each round", client.url
                        )
                        return
                page = await client.call(
                    "GET",
                    "/api/sync/changes",
                    params={"cursor": cursor, "limit": 1, "wait": wait},
                    time_limit=wait + self.timeout,
                )
            except (UpstreamUnreachable, UpstreamRejected) as exc:
                failures += 1
                log.info("following the upstream's feed: %s; again in %.0f s", exc, backoff_seconds(failures))
                await asyncio.sleep(backoff_seconds(failures))
                continue
            if not page.get("changes"):
                failures = 0
                if loop.time() - asked < 1.0:  # answered at once (a server stopping): not a loop
                    await asyncio.sleep(1.0)
                continue
            self.rounds += 1
            await self.sync()
            if self.cursor() == cursor:  # the round did not get past it (the upstream failed)
                failures += 1
                await asyncio.sleep(backoff_seconds(failures))
            else:
                failures = 0

    @staticmethod
    async def _allowed_wait(client: UpstreamClient) -> int | None:
        info = await client.call("GET", "/api/sync/info")
        allowed = info.get("wait_max_seconds") if isinstance(info, dict) else None
        if not isinstance(allowed, int) or isinstance(allowed, bool) or allowed <= 0:
            return None
        return min(allowed, FOLLOW_WAIT_SECONDS)


def _log_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("following the upstream's feed stopped", exc_info=task.exception())
