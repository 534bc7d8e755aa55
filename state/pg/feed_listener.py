"""LISTEN for the changes feed on PostgreSQL: every daemon process serving one database
learns of a change committed by any of them (the NOTIFY of migration m0003), so a pull that
waits for changes (GET /api/sync/changes?wait=N) answers as soon as one commits, wherever.

One connection per process, psycopg's async one (the notifications arrive on the event loop,
no thread). A dropped connection is made again after a pause; what was missed meanwhile is
told as "anything may have changed" (``on_change(None)``), so no waiting pull sleeps through
a change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from state.pg.engine import connect_options, masked, psycopg_module

log = logging.getLogger(__name__)

CHANNEL = "memorycloud_feed"  # m0003_feed_notify.sql
RECONNECT_SECONDS = (1.0, 2.0, 5.0, 10.0, 30.0)  # pauses after a dropped connection, then 30 s


class FeedListener:
    """Calls ``on_change(namespace)`` for each notified change; ``on_change(None)`` when
    changes may have been missed (the connection was lost and is back)."""

    def __init__(
        self, url: str, on_change: Callable[[str | None], None], password: str | None = None
    ) -> None:
        self.url = url
        self._password = password
        self.on_change = on_change
        self.listening = asyncio.Event()  # set while LISTEN is in effect (tests wait for it)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="pg-feed-listener")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        psycopg = psycopg_module()
        failures = 0
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.url, **connect_options(self._password))
            except psycopg.Error as exc:
                failures += 1
                await self._pause(failures, f"cannot connect: {exc}")
                continue
            try:
                await conn.execute(f"listen {CHANNEL}")
                self.listening.set()
                if failures:
                    self.on_change(None)  # back after a gap: whatever waits looks again
                failures = 0
                async for notify in conn.notifies():
                    self.on_change(notify.payload or None)
            except psycopg.Error as exc:
                failures += 1
                self.listening.clear()
                await self._pause(failures, f"connection lost: {exc}")
            finally:
                self.listening.clear()
                await conn.close()

    async def _pause(self, failures: int, why: str) -> None:
        seconds = RECONNECT_SECONDS[min(failures, len(RECONNECT_SECONDS)) - 1]
        log.warning("PostgreSQL feed listener at %s: %s; again in %.0f s", masked(self.url), why, seconds)
        # Waiting pulls answer now; until it is back, they learn of another process's changes
        # only at the end of their wait (their own process's changes still wake them).
        self.on_change(None)
        await asyncio.sleep(seconds)
