"""AMP's read endpoints of workspaces: the memory query, the caller's workspaces, memory maps
and the code-memory context (daemon/runtime/workspace_reads.py), in the MemoryCloud
reference's shapes."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon.endpoints import Call, Endpoint
from daemon.runtime.workspace_reads import WorkspaceReads
from daemon.validation import query_int
from state.errors import ValidationFailed

# The reference clamps limits instead of refusing them; only a non-integer is refused (422).
ANY_INT = (-(2**31), 2**31)


def _reads(call: Call) -> WorkspaceReads:
    return WorkspaceReads(call.services.store)


def _limit(request: web.Request, default: int) -> int:
    raw = request.query.get("limit", "")
    if raw.startswith("--"):  # query_int strips every leading '-' before its digit check
        raise ValidationFailed(f"query parameter 'limit' must be an integer, got {raw!r}",
                               details={"field": "limit"})
    return query_int(request, "limit", default, *ANY_INT)


async def memory_query(request: web.Request, call: Call) -> dict[str, Any]:
    """What retrieval handles point to; newest first without ``q``."""
    return _reads(call).query(
        call.require_identity(), request.match_info["workspace_id"],
        q=request.query.get("q", "").strip(), memory_type=request.query.get("memory_type") or None,
        project_key=request.query.get("project_key") or None, limit=_limit(request, 8),
        base_url=call.base_url)


async def my_workspaces(request: web.Request, call: Call) -> dict[str, Any]:
    return _reads(call).my_workspaces(call.require_identity())


async def my_memory_map(request: web.Request, call: Call) -> dict[str, Any]:
    return _reads(call).memory_map(call.require_identity(), None, limit=_limit(request, 120),
                                   base_url=call.base_url)


async def workspace_memory_map(request: web.Request, call: Call) -> dict[str, Any]:
    return _reads(call).memory_map(call.require_identity(), request.match_info["workspace_id"],
                                   limit=_limit(request, 120), base_url=call.base_url)


async def code_memory_context(request: web.Request, call: Call) -> dict[str, Any]:
    return _reads(call).code_memory(call.require_identity(), request.match_info["project_key"],
                                    q=request.query.get("q", "").strip(),
                                    limit=_limit(request, 8), base_url=call.base_url)


ENDPOINTS = [
    Endpoint("GET", "/api/workspaces/{workspace_id}/memory/query", memory_query,
             "A workspace's memory: hybrid search (BM25 + vectors) with q, else newest first;"
             " memory_type, project_key, limit (clamped to 1..30).",
             scope="memory:read", response_schema="amp.memory-search.v1"),
    Endpoint("GET", "/api/me/workspaces", my_workspaces,
             "The workspaces the caller belongs to, with its role."),
    Endpoint("GET", "/api/me/memory-map", my_memory_map,
             "The caller's workspaces and their newest memories as a lens map (limit 20..240).",
             scope="memory:read", response_schema="amp.memory-lens-map.v1"),
    Endpoint("GET", "/api/workspaces/{workspace_id}/memory-map", workspace_memory_map,
             "One workspace's newest memories as a lens map (limit 20..240).",
             scope="memory:read", response_schema="amp.memory-lens-map.v1"),
    Endpoint("GET", "/api/projects/{project_key}/code-memory/context", code_memory_context,
             "code_memory records of a project in the caller's workspaces, newest first"
             " (q, limit clamped to 1..30).", scope="memory:read"),
]
