"""The answers of daemon/api/amp_briefs.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel
from daemon.responses.amp_context import WorkspaceContextFields


class MemoryBriefFields(WorkspaceContextFields, title="MemoryBriefFields"):
    """The fields MemoryBriefAnswer, GetBriefAnswer share."""

    brief_id: str
    task: str
    session_fingerprint: str
    project_key: str
    environment: dict[str, Any]
    brief_markdown: str
    carry_in: list[Any]
    recent_events: list[Any]
    context_contract: dict[str, Any]


class MemoryBriefAnswer(MemoryBriefFields, title="amp.memory-brief.v1"):
    """POST /api/agent/memory-brief"""

    schema_: Literal["amp.memory-brief.v1"] = Field(alias="schema")
    handoff: dict[str, Any] | None
    context_pack: dict[str, Any]


class GetBriefAnswer(MemoryBriefFields, title="amp.memory-brief.v1"):
    """GET /api/agent/memory-briefs/{brief_id}"""

    schema_: Literal["amp.memory-brief.v1"] = Field(alias="schema")
    handoff: Any
    workspace_id: str
    context_pack_id: str
    events: list[Any]


class MemoryBriefEventAnswer(ResponseModel, title="amp.memory-brief-event.v1"):
    """POST /api/agent/memory-briefs/{brief_id}/events"""

    schema_: Literal["amp.memory-brief-event.v1"] = Field(alias="schema")
    event: dict[str, Any]
    memory_delta: dict[str, Any]
    summary_card: dict[str, Any]
    next: dict[str, Any]
    update_notice: dict[str, Any] | None = None
