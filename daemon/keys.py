"""Typed application keys: the only way handlers reach shared objects (no module globals)."""

from __future__ import annotations

from aiohttp import web
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from daemon.runtime.services import Services
from state.config import Settings
from state.paths import Paths
from state.store import Store

SETTINGS = web.AppKey("settings", Settings)
PATHS = web.AppKey("paths", Paths)
STORE = web.AppKey("store", Store)
SERVICES = web.AppKey("services", Services)
ENDPOINTS = web.AppKey("endpoints", list)  # list[Endpoint], for /api/protocol/schema
STARTED_AT = web.AppKey("started_at", float)
SCHEDULER = web.AppKey("scheduler", AsyncIOScheduler)
JOBS = web.AppKey("jobs", object)  # daemon.jobs.JobBoard
MCP_HTTP = web.AppKey("mcp_http", object)  # daemon.api.mcp_http.McpHttp (while the app runs)
REBUILD = web.AppKey("rebuild", object)  # daemon.jobs.IndexRebuild (while the app runs)
DIALECTS = web.AppKey("dialects", object)  # daemon.dialects.Dialects: envelopes, request hooks
