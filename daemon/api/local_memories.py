"""Owner-only memory browser API for the TUI: search with filters, history, diff, revert,
redact a version, delete; and what every namespace is called."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon.endpoints import Call, Endpoint
from daemon.runtime.namespaces import NamespaceDirectory
from daemon.validation import Field, RequestSchema, query_int
from state.errors import ValidationFailed

VERSION = RequestSchema("memory-version", (Field("version", int, required=True, minimum=1),))
EMPTY = RequestSchema("empty")


async def search(request: web.Request, call: Call) -> dict[str, Any]:
    filters = {k: request.query.get(k) or None for k in ("namespace", "project_key", "kind", "agent")}
    return call.services.memory_admin.search(request.query.get("q", "").strip() or None, filters,
                                             query_int(request, "limit", 50, 1, 200))


async def namespaces(request: web.Request, call: Call) -> dict[str, Any]:
    """The namespaces by name (workspace, Memory Store, mem1 user/scope, suite collection)."""
    return NamespaceDirectory(call.services.store).list()


async def history(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.memory_admin.history(request.match_info["memory_id"])


async def diff(request: web.Request, call: Call) -> dict[str, Any]:
    if not request.query.get("from") or not request.query.get("to"):
        raise ValidationFailed("query parameters 'from' and 'to' (version numbers) are required",
                               details={"missing_fields": [k for k in ("from", "to") if not request.query.get(k)]})
    return call.services.memory_admin.diff(request.match_info["memory_id"],
                                           query_int(request, "from", 1, 1, 10**9),
                                           query_int(request, "to", 1, 1, 10**9))


async def revert(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.memory_admin.revert(call.require_identity(), request.match_info["memory_id"],
                                             call.body["version"])


async def redact(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.memory_admin.redact(request.match_info["memory_id"], call.body["version"])


async def delete(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.memory_admin.delete(call.require_identity(), request.match_info["memory_id"])


BASE = "/api/local/memories"
ENDPOINTS = [
    Endpoint("GET", BASE, search, "Memories of every dialect: ?q= (hybrid), namespace, project_key,"
             " kind, agent, limit.", owner_only=True),
    Endpoint("GET", "/api/local/namespaces", namespaces, "Every namespace with its name: workspaces,"
             " Memory Stores, agent-memory1.0 user/scope, suite collections (read only).",
             owner_only=True, response_schema="memorycloud.namespaces.v1"),
    Endpoint("GET", BASE + "/{memory_id}/history", history, "A memory and all its versions.",
             owner_only=True),
    Endpoint("GET", BASE + "/{memory_id}/diff", diff, "Unified diff between two versions (?from=&to=).",
             owner_only=True),
    Endpoint("POST", BASE + "/{memory_id}/revert", revert, "Make a version current again (a new version).",
             owner_only=True, request=VERSION),
    Endpoint("POST", BASE + "/{memory_id}/redact", redact, "Remove a version's content for good.",
             owner_only=True, request=VERSION),
    Endpoint("POST", BASE + "/{memory_id}/delete", delete, "Delete a memory (its history stays).",
             owner_only=True, request=EMPTY),
]
