"""Pulls that wait for the next change of a workspace (GET /api/sync/changes?wait=N).

A downstream daemon asks for the changes after its cursor and, when there are none, the
request waits here until one commits, instead of the daemon asking again every
``sync_upstream_seconds``. Three things wake a waiting pull:

* a write of this process (ContextChanges, at once);
* a write of another process on the same PostgreSQL database (state/pg/feed_listener.py:
  LISTEN/NOTIFY, at its commit);
* anything else that added to the feed (a CLI process writing the SQLite file, a write path
  that tells nobody): the newest feed cursor, read once a second while a pull waits.

A wake-up only makes the pull look again: what it answers is always read from the store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from state.store import Store

log = logging.getLogger(__name__)

# How often the newest cursor is read while pulls wait: the longest a change that woke no
# one waits for its pull (one primary-key read, however many pulls wait).
TICK_SECONDS = 1.0


class FeedWaiters:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.closing = False  # the daemon is stopping: nobody waits any more
        self._events: dict[str, set[asyncio.Event]] = {}
        self._ticker: asyncio.Task[None] | None = None

    @property
    def waiting(self) -> int:
        return sum(len(events) for events in self._events.values())

    @contextmanager
    def watch(self, workspace_id: str) -> Iterator[asyncio.Event]:
        """An event set whenever ``workspace_id`` may have changed, from now until the end
        of the ``with`` block."""
        event = asyncio.Event()
        if self.closing:
            event.set()
        self._events.setdefault(workspace_id, set()).add(event)
        self._start_ticker()
        try:
            yield event
        finally:
            events = self._events.get(workspace_id)
            if events is not None:
                events.discard(event)
                if not events:
                    del self._events[workspace_id]

    def wake(self, workspace_id: str | None) -> None:
        """``workspace_id`` changed (None: any workspace may have)."""
        if workspace_id is None:
            targets = [e for events in self._events.values() for e in events]
        else:
            targets = list(self._events.get(workspace_id, ()))
        for event in targets:
            event.set()

    def close(self) -> None:
        """The daemon stops: every waiting pull answers now (aiohttp's graceful shutdown waits
        for running requests)."""
        self.closing = True
        self.wake(None)
        if self._ticker is not None:
            self._ticker.cancel()

    def _start_ticker(self) -> None:
        if self._ticker is None or self._ticker.done():
            # Read now, before the new waiter reads the feed: a change committed between the
            # two is then one the ticker sees as new.
            seen = self._newest(None)
            self._ticker = asyncio.get_running_loop().create_task(self._tick(seen), name="feed-waiters-tick")

    async def _tick(self, seen: int | None) -> None:
        while self._events and not self.closing:
            await asyncio.sleep(TICK_SECONDS)
            newest = self._newest(seen)
            if newest != seen:
                self.wake(None)
            seen = newest

    def _newest(self, otherwise: int | None) -> int | None:
        try:
            return self.store.upstream.latest_change()
        except Exception:  # the store is unreachable: the pulls end at their wait
            log.warning("waiting pulls: cannot read the newest feed cursor", exc_info=True)
            return otherwise
