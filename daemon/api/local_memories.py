"""Owner-only memory browser API for the TUI: search with filters, history, diff, revert,
redact a version, delete; and what every namespace is called."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import Field

from daemon.endpoints import Call, Endpoint
from daemon.request_models import Empty, Int, RequestModel
from daemon.responses.local_memories import (
    MemoriesAnswer,
    MemoryDeletedAnswer,
    MemoryDiffAnswer,
    MemoryHistoryAnswer,
    MemoryRecordAnswer,
    NamespacesAnswer,
)
from daemon.validation import Query
from state.errors import ValidationFailed


class MemoryVersion(RequestModel, title="memory-version"):
    version: Int = Field(ge=1)


SEARCH_Q = Query("q", description="hybrid search; without it, newest first")
FILTERS = tuple(Query(name) for name in ("namespace", "project_key", "kind", "agent"))
SEARCH_LIMIT = Query("limit", int, default=50, minimum=1, maximum=200)
FROM, TO = (
    Query(name, int, required=True, minimum=1, maximum=10**9, description="a version number")
    for name in ("from", "to")
)


def _search_text(call: Call) -> str | None:
    return (SEARCH_Q.read(call.request) or "").strip() or None


async def search(request: web.Request, call: Call) -> dict[str, Any]:
    filters = {q.name: q.read(request) for q in FILTERS}
    return call.services.memory_admin.search(_search_text(call), filters, SEARCH_LIMIT.read(request))


async def namespaces(request: web.Request, call: Call) -> dict[str, Any]:
    """The namespaces by name (workspace, Memory Store, mem1 user/scope, suite collection)."""
    return call.services.namespaces.list()


async def history(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.memory_admin.history(request.match_info["memory_id"])


async def diff(request: web.Request, call: Call) -> dict[str, Any]:
    if missing := [q.name for q in (FROM, TO) if q.absent(request)]:
        raise ValidationFailed(
            "query parameters 'from' and 'to' (version numbers) are required",
            details={"missing_fields": missing},
        )
    return call.services.memory_admin.diff(
        request.match_info["memory_id"], FROM.read(request), TO.read(request)
    )


async def revert(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.memory_admin.revert(
        call.require_identity(), request.match_info["memory_id"], call.body["version"]
    )


async def redact(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.memory_admin.redact(request.match_info["memory_id"], call.body["version"])


async def delete(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.memory_admin.delete(call.require_identity(), request.match_info["memory_id"])


BASE = "/api/local/memories"
ENDPOINTS = [
    Endpoint(
        "GET",
        BASE,
        search,
        "Memories of every dialect: ?q= (hybrid), namespace, project_key, kind, agent, limit.",
        owner_only=True,
        query=(SEARCH_Q, *FILTERS, SEARCH_LIMIT),
        response=MemoriesAnswer,
        search_text=_search_text,
    ),
    Endpoint(
        "GET",
        "/api/local/namespaces",
        namespaces,
        "Every namespace with its name: workspaces,"
        " Memory Stores, agent-memory1.0 user/scope, suite collections (read only).",
        owner_only=True,
        response=NamespacesAnswer,
    ),
    Endpoint(
        "GET",
        BASE + "/{memory_id}/history",
        history,
        "A memory and all its versions.",
        owner_only=True,
        response=MemoryHistoryAnswer,
    ),
    Endpoint(
        "GET",
        BASE + "/{memory_id}/diff",
        diff,
        "Unified diff between two versions (?from=&to=).",
        owner_only=True,
        query=(FROM, TO),
        response=MemoryDiffAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/{memory_id}/revert",
        revert,
        "Make a version current again (a new version).",
        owner_only=True,
        request=MemoryVersion,
        response=MemoryRecordAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/{memory_id}/redact",
        redact,
        "Remove a version's content for good.",
        owner_only=True,
        request=MemoryVersion,
        response=MemoryHistoryAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/{memory_id}/delete",
        delete,
        "Delete a memory (its history stays).",
        owner_only=True,
        request=Empty,
        response=MemoryDeletedAnswer,
    ),
]
