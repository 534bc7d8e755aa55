"""Typed application keys: the only way handlers reach shared objects (no module globals)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from daemon.rate_limit import KeyRateLimiter
from daemon.runtime.services import Services
from state.config import Settings
from state.paths import Paths
from state.store import Store

if TYPE_CHECKING:  # the modules that define these import this one
    from daemon.api.mcp_http import McpHttp
    from daemon.dialects import Dialects
    from daemon.endpoints import Endpoint
    from daemon.jobs import IndexRebuild, JobBoard

SETTINGS = web.AppKey("settings", Settings)
PATHS = web.AppKey("paths", Paths)
STORE = web.AppKey("store", Store)
SERVICES = web.AppKey("services", Services)
RATE_LIMITER: web.AppKey[KeyRateLimiter] = web.AppKey("rate_limiter")  # the cloud role's
ENDPOINTS: web.AppKey[list[Endpoint]] = web.AppKey("endpoints")  # for /api/protocol/schema
STARTED_AT = web.AppKey("started_at", float)
SCHEDULER = web.AppKey("scheduler", AsyncIOScheduler)
JOBS: web.AppKey[JobBoard] = web.AppKey("jobs")
MCP_HTTP: web.AppKey[McpHttp] = web.AppKey("mcp_http")  # while the app runs
REBUILD: web.AppKey[IndexRebuild] = web.AppKey("rebuild")  # while the app runs
DIALECTS: web.AppKey[Dialects] = web.AppKey("dialects")  # envelopes, request hooks
