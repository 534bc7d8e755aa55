"""The answers of daemon/api/amp_context.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel


class WorkspaceContextFields(ResponseModel, title="WorkspaceContextFields"):
    """The fields ContextPackAnswer, MemoryBriefFields share."""

    receipt_id: str
    runtime_version: str
    created_at: str
    workspace: dict[str, Any]
    project_state: list[Any]
    active_installed_memory_lenses: list[Any]
    source_counts: dict[str, Any]
    next: dict[str, Any]


class ContextPackAnswer(WorkspaceContextFields, title="amp.context-pack.v1"):
    """POST /api/agent/bootstrap/context, POST /api/agent/bootstrap/refresh, GET /api/agent/context-packs/{context_pack_id}"""

    schema_: Literal["amp.context-pack.v1"] = Field(alias="schema")
    context_pack_id: str
    protocol_version: str
    expires_at: str
    workspace_id: str
    project_key: str | None
    project_binding: dict[str, Any]
    runtime: str
    reason: str
    self_state: str
    workspace_summary: str
    summary_cards: list[Any]
    active_decisions: list[Any]
    open_loops: list[Any]
    risk_boundary: list[Any]
    active_memory_view: Any
    summary_markdown: str
    summary_budget_chars: int
    truncated: bool
    retrieval_handles: list[Any]
    memory_policy: dict[str, Any]
    digest: str
    receipt: dict[str, Any]
    headers: dict[str, Any]


class BootstrapVerifyAnswer(ResponseModel, title="amp.bootstrap-verify.v1"):
    """POST /api/agent/bootstrap/verify"""

    schema_: Literal["amp.bootstrap-verify.v1"] = Field(alias="schema")
    valid: bool
    status: str
    receipt: dict[str, Any]
    checked_at: str


class MemoryDeltaAnswer(ResponseModel, title="amp.memory-delta.v1"):
    """POST /api/agent/memory-delta"""

    schema_: Literal["amp.memory-delta.v1"] = Field(alias="schema")
    delta: dict[str, Any]
    summary_card: dict[str, Any]
    next: dict[str, Any]
    update_notice: dict[str, Any] | None = None


class MemoryDetailAnswer(ResponseModel, title="amp.memory-detail.v1"):
    """GET /api/agent/memories/{memory_id}"""

    schema_: Literal["amp.memory-detail.v1"] = Field(alias="schema")
    memory: dict[str, Any]


class MemorySearchAnswer(ResponseModel, title="amp.memory-search.v1"):
    """GET /api/agent/search"""

    schema_: Literal["amp.memory-search.v1"] = Field(alias="schema")
    query: str
    namespaces: list[Any]
    items: list[Any]
