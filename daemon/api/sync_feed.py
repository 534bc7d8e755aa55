"""HTTP side of the sync extension (see daemon/runtime/sync_feed.py): what a downstream daemon
uses besides AMP's own write endpoints."""

from __future__ import annotations

from typing import Annotated, Any

from aiohttp import web
from pydantic import Field

from daemon import keys
from daemon.endpoints import Call, Endpoint
from daemon.request_models import Int, RequestModel, at_least
from daemon.responses.sync_feed import (
    SyncChangesAnswer,
    SyncInfoAnswer,
    SyncRecordAnswer,
    SyncRecordChangeAnswer,
    SyncRedactionAnswer,
)
from daemon.runtime.sync_feed import MAX_WAIT_SECONDS
from daemon.validation import Query


class SyncRecordCreate(RequestModel, title="sync-record-create"):
    origin_memory_id: str = Field(
        max_length=80,
        pattern=at_least(1),
        description="the sender's own id of the record; a retry with the same id is a no-op",
    )
    kind: str = Field(max_length=80, pattern=at_least(1))
    content: str = Field(max_length=1_000_000)
    title: str | None = Field("", max_length=400)
    importance: Int | None = Field(3, ge=1, le=5)
    project_key: str | None = Field(None, max_length=160)
    path: str | None = Field(None, max_length=1000)
    source: str | None = Field(None, max_length=80)
    triggers: list[Annotated[str, Field(max_length=200)]] | None = Field(default_factory=list, max_length=50)
    provenance: dict[str, Any] | None = Field(default_factory=dict)


class SyncRecordChange(RequestModel, title="sync-record-change"):
    operation: str = Field(description="update | delete")
    base_version: Int = Field(
        ge=1, le=2**31, description="the upstream version the sender's change is based on"
    )
    content: str | None = Field(None, max_length=1_000_000)
    title: str | None = Field(None, max_length=400)
    importance: Int | None = Field(None, ge=1, le=5)


class SyncRecordRedact(RequestModel, title="sync-record-redact"):
    content_sha256: str = Field(max_length=64, pattern=at_least(64))


async def info(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.feed.info(call.require_identity(), request.app[keys.SETTINGS].role)


CURSOR = Query("cursor", int, default=0, minimum=0, maximum=2**62, description="the last seq you have")
LIMIT = Query("limit", int, default=200, minimum=1, maximum=1000)
WAIT = Query(
    "wait",
    int,
    default=0,
    minimum=0,
    maximum=MAX_WAIT_SECONDS,
    clamp=True,
    description="with nothing after the cursor, wait up to this many seconds for a change",
)


async def changes(request: web.Request, call: Call) -> dict[str, Any]:
    return await call.services.feed.follow(
        call.require_identity(), CURSOR.read(request), LIMIT.read(request), WAIT.read(request)
    )


async def create(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.feed.create(call.require_identity(), call.body)


async def change(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.feed.change(call.require_identity(), request.match_info["memory_id"], call.body)


async def redact(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.feed.redact(
        call.require_identity(), request.match_info["memory_id"], call.body["content_sha256"]
    )


ENDPOINTS = [
    Endpoint(
        "GET",
        "/api/sync/info",
        info,
        "Sync extension: the caller's workspace and feed cursor.",
        scope="memory:read",
        response=SyncInfoAnswer,
    ),
    Endpoint(
        "GET",
        "/api/sync/changes",
        changes,
        "Sync extension: versions and redactions after ?cursor= in the caller's workspace"
        " (with ?wait=S, waits up to S seconds for one).",
        scope="memory:read",
        response=SyncChangesAnswer,
        query=(CURSOR, LIMIT, WAIT),
    ),
    Endpoint(
        "POST",
        "/api/sync/records",
        create,
        "Sync extension: add a record that has no AMP write endpoint (deduplicated).",
        scope="sync:write",
        request=SyncRecordCreate,
        response=SyncRecordAnswer,
        idempotent=True,
        runs_apart=True,
    ),
    Endpoint(
        "POST",
        "/api/sync/records/{memory_id}",
        change,
        "Sync extension: update or delete at base_version (409 with the current record).",
        scope="sync:write",
        request=SyncRecordChange,
        response=SyncRecordChangeAnswer,
        idempotent=True,
        runs_apart=True,
    ),
    Endpoint(
        "POST",
        "/api/sync/records/{memory_id}/redact",
        redact,
        "Sync extension: redact the content with this sha256 from every version.",
        scope="sync:write",
        request=SyncRecordRedact,
        response=SyncRedactionAnswer,
        idempotent=True,
        runs_apart=True,
    ),
]
