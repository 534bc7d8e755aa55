"""Owner-only local API (CLI and TUI) and the unauthenticated health check."""

from __future__ import annotations

import os
import time
from typing import Any

from aiohttp import web

from daemon import __version__, keys
from daemon.endpoints import Call, Endpoint


async def health(request: web.Request, call: Call) -> dict[str, Any]:
    """Liveness only: reveals nothing but that the daemon is up."""
    return {"status": "ok", "service": "memorycloud-companion", "version": __version__}


async def status(request: web.Request, call: Call) -> dict[str, Any]:
    app = request.app
    store = app[keys.STORE]
    settings = app[keys.SETTINGS]
    conn = store.conn
    counts = {
        "memories": store.memories.count(),
        "agents": len(store.identities.agents()),
        "workspaces": len(store.identities.workspaces()),
        "project_bindings": conn.execute("select count(*) from project_bindings").fetchone()[0],
        "context_packs": conn.execute("select count(*) from context_packs").fetchone()[0],
    }
    return {
        "schema": "memorycloud.daemon-status.v1",
        "version": __version__,
        "pid": os.getpid(),
        "uptime_seconds": round(time.time() - app[keys.STARTED_AT], 1),
        "host": settings.host,
        "port": settings.port,
        "database": str(app[keys.PATHS].database),
        "store_bytes": store.size_bytes(),
        "versions": store.versions(),
        "embedder": {"name": store.embedder.name, "dimension": store.embedder.dimension},
        "counts": counts,
    }


ENDPOINTS = [
    Endpoint("GET", "/healthz", health, "Liveness check.", auth="none"),
    Endpoint("GET", "/api/local/status", status, "Daemon status for the CLI and TUI.",
             owner_only=True, response_schema="memorycloud.daemon-status.v1"),
]
