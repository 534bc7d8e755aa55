"""The answers of daemon/api/amp_methods.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel


class AgentMethodRegistryAnswer(ResponseModel, title="amp.agent-method-registry.v1"):
    """GET /api/agent/methods"""

    schema_: Literal["amp.agent-method-registry.v1"] = Field(alias="schema")
    purpose: str
    base_url: str
    query: str
    agent_help: str
    agent_help_markdown: str
    human_help: str
    recommended_skill: str
    items: list[Any]
    methods: list[Any]


class AgentMethodQueryAnswer(ResponseModel, title="amp.agent-method-query.v1"):
    """POST /api/agent/methods/query"""

    schema_: Literal["amp.agent-method-query.v1"] = Field(alias="schema")
    query: dict[str, Any]
    result_count: int
    results: list[Any]
    recommended_first_action: str
    fallback: dict[str, Any]
    do_not_guess: bool
    runtime: str | None
    methods: list[Any]


class CollaborationClaimAnswer(ResponseModel, title="amp.collaboration-claim.v1"):
    """POST /api/agent/claims, POST /api/agent/claims/{claim_id}/release"""

    schema_: Literal["amp.collaboration-claim.v1"] = Field(alias="schema")
    claim_id: str
    workspace_id: str
    resource: str
    holder: dict[str, Any]
    purpose: str
    created_at: str
    expires_at: str
    released_at: str | None


class CollaborationClaimsAnswer(ResponseModel, title="amp.collaboration-claims.v1"):
    """GET /api/agent/claims"""

    schema_: Literal["amp.collaboration-claims.v1"] = Field(alias="schema")
    claims: list[Any]
