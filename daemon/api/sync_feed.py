"""HTTP side of the sync extension (see daemon/runtime/sync_feed.py): what a downstream daemon
uses besides AMP's own write endpoints."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon import keys
from daemon.endpoints import Call, Endpoint
from daemon.validation import Field, Query, RequestSchema

CREATE = RequestSchema("sync-record-create", (
    Field("origin_memory_id", str, required=True, min_length=1, max_length=80,
          description="the sender's own id of the record; a retry with the same id is a no-op"),
    Field("kind", str, required=True, min_length=1, max_length=80),
    Field("content", str, required=True, max_length=1_000_000),
    Field("title", str, max_length=400, default=""),
    Field("importance", int, minimum=1, maximum=5, default=3),
    Field("project_key", str, max_length=160),
    Field("path", str, max_length=1000),
    Field("source", str, max_length=80),
    Field("triggers", list, items=str, max_items=50, max_length=200, default=[]),
    Field("provenance", dict, default={}),
))

CHANGE = RequestSchema("sync-record-change", (
    Field("operation", str, required=True, description="update | delete"),
    Field("base_version", int, required=True, minimum=1, maximum=2**31,
          description="the upstream version the sender's change is based on"),
    Field("content", str, max_length=1_000_000),
    Field("title", str, max_length=400),
    Field("importance", int, minimum=1, maximum=5),
))

REDACT = RequestSchema("sync-record-redact", (
    Field("content_sha256", str, required=True, min_length=64, max_length=64),
))


async def info(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.feed.info(call.require_identity(), request.app[keys.SETTINGS].role)


CURSOR = Query("cursor", int, default=0, minimum=0, maximum=2**62, description="the last seq you have")
LIMIT = Query("limit", int, default=200, minimum=1, maximum=1000)


async def changes(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.feed.feed(call.require_identity(), CURSOR.read(request), LIMIT.read(request))


async def create(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.feed.create(call.require_identity(), call.body)


async def change(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.feed.change(call.require_identity(), request.match_info["memory_id"], call.body)


async def redact(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.feed.redact(call.require_identity(), request.match_info["memory_id"],
                                     call.body["content_sha256"])


ENDPOINTS = [
    Endpoint("GET", "/api/sync/info", info, "Sync extension: the caller's workspace and feed cursor.",
             scope="memory:read", response_schema="memorycloud.sync-info.v1"),
    Endpoint("GET", "/api/sync/changes", changes,
             "Sync extension: versions and redactions after ?cursor= in the caller's workspace.",
             scope="memory:read", response_schema="memorycloud.sync-changes.v1", query=(CURSOR, LIMIT)),
    Endpoint("POST", "/api/sync/records", create,
             "Sync extension: add a record that has no AMP write endpoint (deduplicated).",
             scope="sync:write", request=CREATE, response_schema="memorycloud.sync-record.v1", idempotent=True),
    Endpoint("POST", "/api/sync/records/{memory_id}", change,
             "Sync extension: update or delete at base_version (409 with the current record).",
             scope="sync:write", request=CHANGE, response_schema="memorycloud.sync-record.v1", idempotent=True),
    Endpoint("POST", "/api/sync/records/{memory_id}/redact", redact,
             "Sync extension: redact the content with this sha256 from every version.",
             scope="sync:write", request=REDACT, response_schema="memorycloud.sync-redaction.v1", idempotent=True),
]
