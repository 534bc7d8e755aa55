"""Runtime Context Packs, receipts, memory deltas, memory detail and search across dialects
(a workspace's memory query is in amp_workspaces.py)."""

from __future__ import annotations

from typing import Annotated, Any

from aiohttp import web
from pydantic import Field

from daemon.endpoints import Call, Endpoint
from daemon.request_models import Int, RequestModel, at_least
from daemon.responses.amp_context import (
    BootstrapVerifyAnswer,
    ContextPackAnswer,
    MemoryDeltaAnswer,
    MemoryDetailAnswer,
    MemorySearchAnswer,
)
from daemon.runtime.hook_runs import HEADER as LAUNCHER_HEADER
from daemon.runtime.sync_gate import GatedWrite, write_headers
from daemon.validation import Query
from state.errors import InvalidRequest


class BootstrapContext(RequestModel, title="bootstrap-context"):
    workspace_id: str | None = Field(None, max_length=80)
    project_key: str | None = Field(None, max_length=160)
    project_binding_id: str | None = Field(None, max_length=80)
    runtime: str | None = Field(None, max_length=80)
    reason: str | None = Field("agent_startup", max_length=80)
    task: str | None = Field(None, max_length=5000)
    current_context: str | None = Field(None, max_length=20_000)
    last_receipt_id: str | None = Field(None, max_length=120)
    environment: dict[str, Any] | None = Field(default_factory=dict)
    max_items: Int | None = Field(None, ge=1, le=100)
    max_summary_chars: Int | None = Field(
        None, ge=500, le=100_000, description="cap summary_markdown for a runtime's output limit"
    )
    max_summary_tokens: Int | None = Field(
        None, ge=200, le=50_000, description="cap in estimated tokens (a CJK character counts as one)"
    )


class BootstrapVerify(RequestModel, title="bootstrap-verify"):
    receipt_id: str = Field(max_length=120, pattern=at_least(1))
    project_key: str | None = Field(None, max_length=160)
    project_binding_id: str | None = Field(None, max_length=80)
    context_pack_id: str | None = Field(None, max_length=80)


class MemoryDelta(RequestModel, title="memory-delta"):
    summary: str = Field(max_length=4000, pattern=at_least(1))
    delta_type: str | None = Field("task_event", max_length=80, pattern=at_least(1))
    why_it_matters: str | None = Field(None, max_length=3000)
    retrieval_triggers: list[Annotated[str, Field(max_length=200)]] | None = Field(
        default_factory=list, max_length=20
    )
    importance: Int | None = Field(3, ge=1, le=5)
    project_key: str | None = Field(None, max_length=160)
    workspace_id: str | None = Field(None, max_length=80, description="default: the receipt's workspace")
    project_binding_id: str | None = Field(
        None, max_length=80, description="default: the receipt's; supplies workspace and project key"
    )
    context_receipt_id: str | None = Field(
        None, max_length=120, description="alternative to the X-AMP-Context-Receipt header (wins over it)"
    )
    detail_payload: dict[str, Any] | None = Field(default_factory=dict)


async def bootstrap_context(request: web.Request, call: Call) -> dict[str, Any]:
    identity = call.require_identity()
    pack = call.services.packs.build(identity, call.body, call.base_url)
    # A startup item's launcher names itself: that call is a hook run (setup list shows it).
    call.services.startup.runs.record_session_start(identity, request.headers.get(LAUNCHER_HEADER), pack)
    return pack


async def bootstrap_refresh(request: web.Request, call: Call) -> dict[str, Any]:
    params = dict(call.body)
    if params.get("reason") in (None, "agent_startup"):
        params["reason"] = "refresh"
    return call.services.packs.build(call.require_identity(), params, call.base_url)


async def bootstrap_verify(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.packs.verify(call.require_identity(), call.body)


async def context_pack(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.packs.get(call.require_identity(), request.match_info["context_pack_id"])


RECEIPT = Query(
    "X-AMP-Context-Receipt",
    where="header",
    max_length=120,
    description="the receipt_id of a context pack this agent was given (context_receipt_id in the body wins; neither: 428)",
)


async def memory_delta(request: web.Request, call: Call) -> dict[str, Any]:
    identity = call.require_identity()
    # The body's context_receipt_id wins over the header when both are sent, as in the
    # MemoryCloud reference (its contract sheet, memory_delta's request headers).
    header = (RECEIPT.read(request) or "").strip()
    receipt_id = call.body.get("context_receipt_id") or header
    receipt = call.services.packs.check_receipt(identity, receipt_id)
    call.services.deltas.target(identity, receipt, call.body)  # 404/403 before the gate
    # Gated like the reference gates it (after the receipt: a 428 comes first). Unlike the
    # reference, a held-back delta can be resumed: nothing an agent wrote is lost.
    warning = call.services.gate.admit(
        identity,
        GatedWrite(
            "memory_delta",
            "POST",
            request.path,
            {},
            {**call.body, "context_receipt_id": receipt["id"]},
            call.body["importance"],
            headers=write_headers(request.headers),
        ),
        call.base_url,
    )
    result = call.services.deltas.write(identity, receipt, call.body, call.base_url)
    call.services.startup.runs.record_checkpoint(identity, request.headers.get(LAUNCHER_HEADER), receipt)
    return {**result, "update_notice": warning} if warning else result


async def memory_detail(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.search.detail(call.require_identity(), request.match_info["memory_id"])


SEARCH_Q = Query("q", required=True, default="", description="the search text")
SEARCH_NAMESPACES = Query("namespace", repeated=True, description="default: the caller's workspace")
SEARCH_LIMIT = Query("limit", int, default=10, minimum=1, maximum=50)


def _search_text(call: Call) -> str:
    return SEARCH_Q.read(call.request).strip()


async def search_everywhere(request: web.Request, call: Call) -> dict[str, Any]:
    """One hybrid search over any namespaces the caller may read: its workspace by default,
    or those named with ?namespace= (a Memory Store memstore_..., an agent-memory1.0
    mem1:<user>:<scope>, a suite collection suite:<slug>). Every item names its namespace."""
    identity = call.require_identity()
    query = _search_text(call)
    if not query:
        raise InvalidRequest("query parameter 'q' is required and must not be empty")
    return await call.services.search.everywhere(
        identity, query, SEARCH_NAMESPACES.read(request), SEARCH_LIMIT.read(request), call.base_url
    )


ENDPOINTS = [
    Endpoint(
        "POST",
        "/api/agent/bootstrap/context",
        bootstrap_context,
        "Build a Runtime Context Pack and issue a receipt.",
        scope="memory:read",
        request=BootstrapContext,
        response=ContextPackAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/bootstrap/refresh",
        bootstrap_refresh,
        "Refresh the context pack during work (new pack, new receipt).",
        scope="memory:read",
        request=BootstrapContext,
        response=ContextPackAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/bootstrap/verify",
        bootstrap_verify,
        "Check a receipt.",
        scope="memory:read",
        request=BootstrapVerify,
        response=BootstrapVerifyAnswer,
    ),
    Endpoint(
        "GET",
        "/api/agent/context-packs/{context_pack_id}",
        context_pack,
        "Read a context pack you were given.",
        scope="memory:read",
        response=ContextPackAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/memory-delta",
        memory_delta,
        "Write back a small change; needs the X-AMP-Context-Receipt header (else 428).",
        scope="memory:write",
        request=MemoryDelta,
        response=MemoryDeltaAnswer,
        query=(RECEIPT,),
        idempotent=True,
        runs_apart=True,
    ),
    Endpoint(
        "GET",
        "/api/agent/memories/{memory_id}",
        memory_detail,
        "One memory by id.",
        scope="memory:read",
        response=MemoryDetailAnswer,
    ),
    Endpoint(
        "GET",
        "/api/agent/search",
        search_everywhere,
        "Hybrid search over namespaces of every dialect (?q=&namespace=...).",
        scope="memory:read",
        response=MemorySearchAnswer,
        query=(SEARCH_Q, SEARCH_NAMESPACES, SEARCH_LIMIT),
        search_text=_search_text,
    ),
]
