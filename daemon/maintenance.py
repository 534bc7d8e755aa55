"""Background upkeep of the store while the daemon runs.

Until the scheduler arrives this is one asyncio task: a WAL checkpoint every few seconds on
its own connection in a worker thread, so no request pays for copying the WAL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import AsyncIterator

from aiohttp import web

from daemon import keys
from state.db import checkpoint, connect

log = logging.getLogger(__name__)

CHECKPOINT_SECONDS = 5.0


async def _checkpoint_loop(app: web.Application) -> None:
    conn = await asyncio.to_thread(connect, app[keys.PATHS].database)
    try:
        while True:
            await asyncio.sleep(CHECKPOINT_SECONDS)
            try:
                await asyncio.to_thread(checkpoint, conn)
            except Exception:  # a busy database is retried at the next tick
                log.exception("WAL checkpoint failed")
    finally:
        conn.close()


async def maintenance_context(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: start the checkpoint task after the store is open, stop it on shutdown."""
    app[keys.STORE].disable_autocheckpoint()
    task = asyncio.create_task(_checkpoint_loop(app), name="wal-checkpoint")
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
