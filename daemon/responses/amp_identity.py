"""The answers of daemon/api/amp_identity.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel
from daemon.responses.notices import NoticedAnswer


class IdentityAnswer(ResponseModel, title="amp.identity.v1"):
    """GET /api/me"""

    schema_: Literal["amp.identity.v1"] = Field(alias="schema")
    user: dict[str, Any]
    runtime_connection_notice: dict[str, Any] | None = None
    mandatory_runtime_notice: dict[str, Any] | None = None
    known_agent_message: str | None = None
    platform_update_notice: dict[str, Any] | None = None


class SessionAnswer(ResponseModel, title="amp.session.v1"):
    """GET /api/session"""

    schema_: Literal["amp.session.v1"] = Field(alias="schema")
    authenticated: bool
    user: dict[str, Any] | None
    runtime_connection_notice: dict[str, Any] | None = None
    mandatory_runtime_notice: dict[str, Any] | None = None
    known_agent_message: str | None = None
    platform_update_notice: dict[str, Any] | None = None


class AgentBindingsAnswer(NoticedAnswer, title="amp.agent-bindings.v1"):
    """GET /api/agent/bindings/me"""

    schema_: Literal["amp.agent-bindings.v1"] = Field(alias="schema")
    agent: dict[str, Any]
    workspaces: list[Any]
    bindings: list[Any]
    pending_requests: list[Any]


class AgentRuntimeProfileAnswer(ResponseModel, title="amp.agent-runtime-profile.v1"):
    """POST /api/agent/runtime/profile"""

    schema_: Literal["amp.agent-runtime-profile.v1"] = Field(alias="schema")
    profile_id: str
    agent: dict[str, Any]
    runtime: dict[str, Any]
    recommended_startup_item: dict[str, Any]
    updated_at: str
    next: dict[str, Any]
    legacy_aliases: dict[str, Any]


class ProjectBindingAnswer(ResponseModel, title="amp.project-binding.v1"):
    """POST /api/agent/project/probe"""

    schema_: Literal["amp.project-binding.v1"] = Field(alias="schema")
    project_binding_id: str
    project_binding: dict[str, Any]
    workspace: dict[str, Any]
    project_key: str
    context_pack_url: str
    memory_config_path: str
    next: dict[str, Any]
    legacy_aliases: dict[str, Any]
