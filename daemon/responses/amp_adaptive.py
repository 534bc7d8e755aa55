"""The answers of daemon/api/amp_adaptive.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel


class MemoryTemplatesAnswer(ResponseModel, title="amp.memory-templates.v1"):
    """GET /api/memory/templates"""

    schema_: Literal["amp.memory-templates.v1"] = Field(alias="schema")
    items: dict[str, Any]


class MemoryRouteAnswer(ResponseModel, title="amp.memory-route.v1"):
    """POST /api/memory/router/select"""

    schema_: Literal["amp.memory-route.v1"] = Field(alias="schema")
    run_id: str
    workspace: dict[str, Any]
    project_key: str | None
    selected_memory_type: str
    secondary_types: list[Any]
    confidence: float
    reason: str
    form_schema: dict[str, Any]
    provider: str
    llm_used: bool
    storage_plan: dict[str, Any]
    retrieval_policy: dict[str, Any]
    integration_recommendation: dict[str, Any]
    submit: str


class MemoryFormAnswer(ResponseModel, title="amp.memory-form.v1"):
    """GET /api/memory/forms/{run_id}"""

    schema_: Literal["amp.memory-form.v1"] = Field(alias="schema")
    run_id: str
    selected_memory_type: str
    form_schema: dict[str, Any]
    router_result: dict[str, Any]
    status: str
    workspace_id: str
    project_key: Any
    task: str
    memory_ids: list[Any]
    created_at: str
    submitted_at: str | None
    submit: str


class AdaptiveMemoryAnswer(ResponseModel, title="amp.adaptive-memory.v1"):
    """POST /api/memory/forms/{run_id}/submit"""

    schema_: Literal["amp.adaptive-memory.v1"] = Field(alias="schema")
    run_id: str
    memory: dict[str, Any]
    update_notice: dict[str, Any] | None = None
