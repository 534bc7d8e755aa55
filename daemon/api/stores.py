"""Memory Stores (seed 001) under /api/v1/cloud/memory_stores: the seed's paths, so a
client changes only its base URL. Errors use the dialect's envelope
``{"type": "error", "error": {"type": ..., "message": ...}}`` (see daemon/middleware.py)."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import Field

from daemon.dialects import ErrorEnvelope
from daemon.endpoints import Call, Endpoint
from daemon.request_models import Empty, RequestModel, at_least
from daemon.responses.stores import (
    DeletedAnswer,
    ListAnswer,
    MemoryStoreAnswer,
    MemoryVersionAnswer,
    StoredMemoryAnswer,
)
from daemon.validation import Query

BASE = "/api/v1/cloud/memory_stores"


class MemoryStore(RequestModel, title="memory-store"):
    name: str = Field(max_length=200, pattern=at_least(1))
    description: str | None = Field(None, max_length=2000)
    metadata: dict[str, Any] | None = Field(default_factory=dict)


class MemoryStoreUpdate(RequestModel, title="memory-store-update"):
    name: str | None = Field(None, max_length=200, pattern=at_least(1))
    description: str | None = Field(None, max_length=2000)
    metadata: dict[str, Any] | None = None


class MemoryStoreMemory(RequestModel, title="memory-store-memory"):
    path: str = Field(max_length=1024)
    content: str = Field(description="at most 100 KB, not empty")
    metadata: dict[str, Any] | None = Field(default_factory=dict)


class MemoryStoreMemoryUpdate(RequestModel, title="memory-store-memory-update"):
    content: str = Field(description="at most 100 KB, not empty")
    content_sha256: str | None = Field(
        None, max_length=64, description="optimistic concurrency: 409 if stale"
    )
    metadata: dict[str, Any] | None = None


LIMIT = Query("limit", int, default=20, minimum=1, maximum=100)
CURSOR = Query("cursor", description="the next_page of the previous page")
PATH_PREFIX = Query("path_prefix")
MEMORY_ID = Query("memory_id", description="only this memory's versions")


def _svc(call: Call):
    return call.services.memory_stores


async def create_store(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).create_store(call.require_identity(), call.body)


async def list_stores(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).list_stores(LIMIT.read(request), CURSOR.read(request))


async def get_store(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).get_store(request.match_info["store_id"])


async def update_store(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).update_store(request.match_info["store_id"], call.body)


async def archive_store(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).archive_store(request.match_info["store_id"])


async def delete_store(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).delete_store(request.match_info["store_id"])


async def create_memory(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).create_memory(call.require_identity(), request.match_info["store_id"], call.body)


async def list_memories(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).list_memories(
        request.match_info["store_id"], LIMIT.read(request), CURSOR.read(request), PATH_PREFIX.read(request)
    )


async def get_memory(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).get_memory(request.match_info["store_id"], request.match_info["memory_id"])


async def update_memory(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).update_memory(
        call.require_identity(), request.match_info["store_id"], request.match_info["memory_id"], call.body
    )


async def delete_memory(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).delete_memory(
        call.require_identity(), request.match_info["store_id"], request.match_info["memory_id"]
    )


async def list_versions(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).list_versions(
        request.match_info["store_id"], LIMIT.read(request), CURSOR.read(request), MEMORY_ID.read(request)
    )


async def get_version(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).get_version(request.match_info["store_id"], request.match_info["version_id"])


async def redact_version(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).redact_version(request.match_info["store_id"], request.match_info["version_id"])


R, W = "memory:read", "memory:write"
ENDPOINTS = [
    Endpoint(
        "POST",
        BASE,
        create_store,
        "Create a Memory Store.",
        scope=W,
        request=MemoryStore,
        response=MemoryStoreAnswer,
    ),
    Endpoint(
        "GET",
        BASE,
        list_stores,
        "List Memory Stores (limit, cursor).",
        scope=R,
        query=(LIMIT, CURSOR),
        response=ListAnswer,
    ),
    Endpoint(
        "GET",
        BASE + "/{store_id}",
        get_store,
        "A Memory Store with entry_count and total_size.",
        scope=R,
        response=MemoryStoreAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/{store_id}",
        update_store,
        "Update a Memory Store.",
        scope=W,
        request=MemoryStoreUpdate,
        response=MemoryStoreAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/{store_id}/archive",
        archive_store,
        "Archive: readable, no more memory writes.",
        scope=W,
        request=Empty,
        response=MemoryStoreAnswer,
    ),
    Endpoint(
        "DELETE",
        BASE + "/{store_id}",
        delete_store,
        "Delete a store and everything in it.",
        scope=W,
        response=DeletedAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/{store_id}/memories",
        create_memory,
        "Create a memory at a path.",
        scope=W,
        request=MemoryStoreMemory,
        response=StoredMemoryAnswer,
    ),
    Endpoint(
        "GET",
        BASE + "/{store_id}/memories",
        list_memories,
        "List memories without content (limit, cursor, path_prefix).",
        scope=R,
        query=(LIMIT, CURSOR, PATH_PREFIX),
        response=ListAnswer,
    ),
    Endpoint(
        "GET",
        BASE + "/{store_id}/memories/{memory_id}",
        get_memory,
        "One memory with content.",
        scope=R,
        response=StoredMemoryAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/{store_id}/memories/{memory_id}",
        update_memory,
        "Update a memory (content_sha256: 409 if it changed; the loser is kept).",
        scope=W,
        request=MemoryStoreMemoryUpdate,
        response=StoredMemoryAnswer,
    ),
    Endpoint(
        "DELETE",
        BASE + "/{store_id}/memories/{memory_id}",
        delete_memory,
        "Delete a memory.",
        scope=W,
        response=DeletedAnswer,
    ),
    Endpoint(
        "GET",
        BASE + "/{store_id}/memory_versions",
        list_versions,
        "List versions (limit, cursor, memory_id).",
        scope=R,
        query=(LIMIT, CURSOR, MEMORY_ID),
        response=ListAnswer,
    ),
    Endpoint(
        "GET",
        BASE + "/{store_id}/memory_versions/{version_id}",
        get_version,
        "One version with content (null once redacted).",
        scope=R,
        response=MemoryVersionAnswer,
    ),
    # Redaction destroys history for good, so it is a person's decision: the owner key (the
    # seed's personal access token) may redact, agent keys may not (deleting stays possible).
    Endpoint(
        "POST",
        BASE + "/{store_id}/memory_versions/{version_id}/redact",
        redact_version,
        "Remove a version's content for good; metadata stays (owner key only).",
        scope=W,
        owner_only=True,
        request=Empty,
        response=MemoryVersionAnswer,
    ),
]


# Memory Stores (seed 001) clients expect their own envelope; the status is the same.
STORES_PREFIX = "/api/v1/cloud/"
STORES_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    409: "conflict_error",
    413: "request_too_large",
    422: "invalid_request_error",
    428: "invalid_request_error",
}


def _error_body(status: int, error_type: str, message: str, detail: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"type": STORES_TYPES.get(status, "api_error"), "message": message}
    if isinstance(detail, dict):
        error["details"] = {k: v for k, v in detail.items() if k != "message"}
    return {"type": "error", "error": error}


ERROR_ENVELOPE = ErrorEnvelope("MemoryStoresError", lambda path: path.startswith(STORES_PREFIX), _error_body)
