"""AMP's read endpoints of workspaces: the memory query, the caller's workspaces, memory maps
and the code-memory context (daemon/runtime/workspace_reads.py), in the MemoryCloud
reference's shapes."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon.endpoints import Call, Endpoint
from daemon.responses.amp_workspaces import (
    CodeMemoryContextAnswer,
    MemoryLensMapAnswer,
    MemoryQueryAnswer,
    MyWorkspacesAnswer,
)
from daemon.runtime.workspace_reads import MAX_QUERY_CHARS, WorkspaceReads
from daemon.validation import Query

# The reference clamps limits instead of refusing them (daemon/runtime/workspace_reads.py);
# only a non-integer is refused (422), or one beyond 32 bits.
LOW, HIGH = -(2**31), 2**31
QUERY_LIMIT = Query("limit", int, default=8, minimum=LOW, maximum=HIGH, description="clamped to 1..30")
MAP_LIMIT = Query("limit", int, default=120, minimum=LOW, maximum=HIGH, description="clamped to 20..240")
Q = Query("q", description="hybrid search (BM25 + vectors); without it, newest first")
FILTERS = (Query("memory_type"), Query("project_key"))


def _reads(call: Call) -> WorkspaceReads:
    return call.services.workspace_reads


def _query_text(call: Call) -> str:
    return (Q.read(call.request) or "").strip()


async def memory_query(request: web.Request, call: Call) -> dict[str, Any]:
    """What retrieval handles point to; newest first without ``q``."""
    return await _reads(call).query(
        call.require_identity(),
        request.match_info["workspace_id"],
        q=_query_text(call),
        memory_type=FILTERS[0].read(request),
        project_key=FILTERS[1].read(request),
        limit=QUERY_LIMIT.read(request),
        base_url=call.base_url,
    )


async def my_workspaces(request: web.Request, call: Call) -> dict[str, Any]:
    return _reads(call).my_workspaces(call.require_identity())


async def my_memory_map(request: web.Request, call: Call) -> dict[str, Any]:
    return _reads(call).memory_map(
        call.require_identity(), None, limit=MAP_LIMIT.read(request), base_url=call.base_url
    )


async def workspace_memory_map(request: web.Request, call: Call) -> dict[str, Any]:
    return _reads(call).memory_map(
        call.require_identity(),
        request.match_info["workspace_id"],
        limit=MAP_LIMIT.read(request),
        base_url=call.base_url,
    )


async def code_memory_context(request: web.Request, call: Call) -> dict[str, Any]:
    return _reads(call).code_memory(
        call.require_identity(),
        request.match_info["project_key"],
        q=(Q.read(request) or "").strip(),
        limit=QUERY_LIMIT.read(request),
        base_url=call.base_url,
    )


ENDPOINTS = [
    Endpoint(
        "GET",
        "/api/workspaces/{workspace_id}/memory/query",
        memory_query,
        "A workspace's memory: hybrid search (BM25 + vectors) with q, else newest first;"
        " memory_type, project_key, limit (clamped to 1..30).",
        scope="memory:read",
        response=MemoryQueryAnswer,
        query=(Q, *FILTERS, QUERY_LIMIT),
        # A query over its length is refused before any search: nothing to embed.
        search_text=lambda call: text if len(text := _query_text(call)) <= MAX_QUERY_CHARS else None,
    ),
    Endpoint(
        "GET",
        "/api/me/workspaces",
        my_workspaces,
        "The workspaces the caller belongs to, with its role.",
        response=MyWorkspacesAnswer,
    ),
    Endpoint(
        "GET",
        "/api/me/memory-map",
        my_memory_map,
        "The caller's workspaces and their newest memories as a lens map (limit 20..240).",
        scope="memory:read",
        response=MemoryLensMapAnswer,
        query=(MAP_LIMIT,),
    ),
    Endpoint(
        "GET",
        "/api/workspaces/{workspace_id}/memory-map",
        workspace_memory_map,
        "One workspace's newest memories as a lens map (limit 20..240).",
        scope="memory:read",
        response=MemoryLensMapAnswer,
        query=(MAP_LIMIT,),
    ),
    Endpoint(
        "GET",
        "/api/projects/{project_key}/code-memory/context",
        code_memory_context,
        "code_memory records of a project in the caller's workspaces, newest first"
        " (q, limit clamped to 1..30).",
        scope="memory:read",
        query=(Q, QUERY_LIMIT),
        response=CodeMemoryContextAnswer,
    ),
]
