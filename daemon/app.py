"""The composition root: ``create_app(settings, paths)`` builds the whole daemon.

The store is opened and closed by a cleanup context, so tests, the CLI's foreground run and
the detached daemon all share one lifecycle.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from aiohttp import web

from daemon import keys
from daemon.api import all_dialects, all_endpoints
from daemon.api.mcp_http import mcp_context
from daemon.endpoints import wrap
from daemon.jobs import jobs_context
from daemon.middleware import commit_middleware, error_middleware, guard_middleware
from daemon.rate_limit import KeyRateLimiter, share_counts
from daemon.runtime.services import Services
from state.config import Settings
from state.group_commit import disable_group_commit, enable_group_commit
from state.paths import Paths
from state.secrets import open_secret_store
from state.setup import ensure_installation
from state.store import open_store


async def _store_context(app: web.Application) -> AsyncIterator[None]:
    paths = app[keys.PATHS]
    store = open_store(paths, app[keys.SETTINGS])
    secrets = open_secret_store(paths.secrets_file)
    ensure_installation(store, secrets)
    app[keys.STORE] = store
    app[keys.SERVICES] = Services.build(store, paths, secrets)
    app[keys.STARTED_AT] = time.time()
    # Group commit on the request connection: the writes of one event-loop turn share one
    # COMMIT, and answers wait for it (commit_middleware). Only here, in the daemon: the CLI
    # and direct users of Store commit each transaction as it ends.
    enable_group_commit(store.conn, asyncio.get_running_loop())
    # On PostgreSQL, searches, pulls and the busiest writes wait for the database in worker
    # threads on pools of their own (state/pg/apart_pool.py); nothing on SQLite.
    settings = app[keys.SETTINGS]
    store.open_apart_pools(settings.database_read_connections, settings.database_writes_apart)
    try:
        yield
    finally:
        app[keys.SERVICES].mem1.close()  # deferred session summaries are written
        disable_group_commit(store.conn)  # commits what is pending
        store.close()


async def _feed_context(app: web.Application) -> AsyncIterator[None]:
    """Waiting pulls (GET /api/sync/changes?wait=N): woken by the other processes' commits on
    PostgreSQL (LISTEN); on shutdown they answer at once (on_shutdown runs before aiohttp
    waits for the requests in progress)."""
    waiters = app[keys.SERVICES].feed.waiters
    listener = app[keys.STORE].feed_listener(waiters.wake)
    if listener is not None:
        listener.start()
    try:
        yield
    finally:
        waiters.close()
        if listener is not None:
            await listener.stop()


async def _rate_context(app: web.Application) -> AsyncIterator[None]:
    """The cloud role's request budget shared by the processes on one PostgreSQL database
    (daemon/rate_limit.py); nothing to share on SQLite or with the limit off."""
    limiter = app.get(keys.RATE_LIMITER)
    counts = app[keys.STORE].rate_counts() if limiter is not None else None
    if limiter is None or counts is None:
        yield
        return
    task = asyncio.get_running_loop().create_task(share_counts(limiter, counts))
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await asyncio.to_thread(counts.close)


async def _end_waiting_pulls(app: web.Application) -> None:
    app[keys.SERVICES].feed.waiters.close()


def create_app(settings: Settings, paths: Paths) -> web.Application:
    """A configured daemon application; the store opens when the app starts."""
    paths.ensure()
    app = web.Application(
        middlewares=[error_middleware, guard_middleware, commit_middleware],
        client_max_size=settings.max_body_bytes,
    )
    app[keys.SETTINGS] = settings
    app[keys.PATHS] = paths
    if settings.role == "cloud" and settings.rate_limit_per_minute > 0:
        app[keys.RATE_LIMITER] = KeyRateLimiter(settings.rate_limit_per_minute)
    endpoints = all_endpoints(settings.role, settings.serve_sync_extension)
    app[keys.ENDPOINTS] = endpoints
    app[keys.DIALECTS] = all_dialects()
    for endpoint in endpoints:
        app.router.add_route(endpoint.method, endpoint.path, wrap(endpoint))
    app.cleanup_ctx.append(_store_context)
    app.cleanup_ctx.append(_feed_context)
    app.cleanup_ctx.append(_rate_context)
    app.on_shutdown.append(_end_waiting_pulls)
    app.cleanup_ctx.append(jobs_context)
    app.cleanup_ctx.append(mcp_context)
    return app
