"""Background jobs of the daemon, on APScheduler's asyncio scheduler.

* WAL checkpoint every few seconds, on its own connection in a worker thread, so no request
  pays for copying the WAL (automatic checkpoints are off on the request connection).
* Fallback caches and summary files of installed startup items: refreshed shortly after the
  memory of their project changes (debounced, so a burst of writes costs one refresh) and on
  a schedule, so even a quiet project's cache never gets very old.
"""

from __future__ import annotations

import asyncio
import logging
from typing import AsyncIterator

from aiohttp import web
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from daemon import keys
from daemon.runtime.services import Services
from state.db import checkpoint, connect

log = logging.getLogger(__name__)

CHECKPOINT_SECONDS = 5
REFRESH_MINUTES = 10
DEBOUNCE_SECONDS = 0.5


class CacheRefresher:
    """Coalesces "memory changed" notices into one refresh per affected binding."""

    def __init__(self, services: Services, delay: float = DEBOUNCE_SECONDS) -> None:
        self.services = services
        self.delay = delay
        self.pending: set[tuple[str, str | None]] = set()
        self.handle: asyncio.TimerHandle | None = None

    def on_change(self, workspace_id: str, project_key: str | None) -> None:
        self.pending.add((workspace_id, project_key))
        if self.handle is None:
            self.handle = asyncio.get_running_loop().call_later(self.delay, self.flush)

    def flush(self) -> None:
        self.handle = None
        changes, self.pending = self.pending, set()
        bindings = {b for ws, pk in changes for b in self.services.startup.bindings_for(ws, pk)}
        for binding_id in sorted(bindings):
            try:
                self.services.startup.refresh(binding_id)
            except Exception:
                log.exception("refreshing the startup items of %s failed", binding_id)

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None


async def refresh_all(services: Services) -> None:
    try:
        count = services.startup.refresh()
        log.debug("refreshed %d startup installations", count)
    except Exception:
        log.exception("scheduled refresh of startup items failed")


async def jobs_context(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: start the scheduler after the store is open; stop it first on shutdown."""
    store = app[keys.STORE]
    services = app[keys.SERVICES]
    store.disable_autocheckpoint()
    checkpoint_conn = await asyncio.to_thread(connect, app[keys.PATHS].database)

    async def checkpoint_job() -> None:
        try:
            await asyncio.to_thread(checkpoint, checkpoint_conn)
        except Exception:  # a busy database is simply retried at the next tick
            log.exception("WAL checkpoint failed")

    refresher = CacheRefresher(services)
    services.changes.subscribe(refresher.on_change)
    scheduler = AsyncIOScheduler()
    scheduler.add_job(checkpoint_job, "interval", seconds=CHECKPOINT_SECONDS, id="wal_checkpoint",
                      max_instances=1, coalesce=True)
    scheduler.add_job(refresh_all, "interval", minutes=REFRESH_MINUTES, args=[services],
                      id="refresh_startup_items", max_instances=1, coalesce=True)
    scheduler.start()
    app[keys.SCHEDULER] = scheduler
    try:
        yield
    finally:
        refresher.cancel()
        scheduler.shutdown(wait=False)
        checkpoint_conn.close()
