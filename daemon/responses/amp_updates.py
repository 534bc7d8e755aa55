"""The answers of daemon/api/amp_updates.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel


class PlatformUpdatesFields(ResponseModel, title="PlatformUpdatesFields"):
    """The fields PlatformUpdatesAnswer, UpdatesAnswer share."""

    service: str
    runtime_version: str
    protocol_version: str
    generated_at: str
    manifest_url: str
    check_url: str
    ack_url: str
    polling_policy: dict[str, Any]
    updates: list[Any]
    legacy_components: dict[str, Any]
    current_components: dict[str, Any]
    check: str
    ack: str


class PlatformUpdatesAnswer(PlatformUpdatesFields, title="amp.platform-updates.v1"):
    """GET /api/agent/updates/manifest"""

    schema_: Literal["amp.platform-updates.v1"] = Field(alias="schema")


class PlatformUpdateCheckAnswer(ResponseModel, title="amp.platform-update-check.v1"):
    """GET /api/agent/updates/check, POST /api/agent/updates/ack, POST /api/local/agents/{agent}/updates/ack"""

    schema_: Literal["amp.platform-update-check.v1"] = Field(alias="schema")
    agent: dict[str, Any]
    runtime_version: str
    protocol_version: str
    client_runtime_version: str | None
    client_applied_updates: list[Any]
    has_pending_updates: bool
    pending_updates: list[Any]
    acked_updates: dict[str, Any]
    acks: list[Any]
    next_actions: list[Any]
    manifest_url: str
    ack_url: str
    ack: dict[str, Any]
    checked_at: str
    acked_now: list[Any] | None = None


class SyncIntentsAnswer(ResponseModel, title="amp.sync-intents.v1"):
    """GET /api/agent/sync-intents"""

    schema_: Literal["amp.sync-intents.v1"] = Field(alias="schema")
    items: list[Any]
    sync_intents: list[Any]


class SyncIntentFields(ResponseModel, title="SyncIntentFields"):
    """The fields SyncIntentAnswer, SyncIntentDiscardAnswer share."""

    id: str
    sync_intent_id: str
    agent_id: str
    identity_id: str
    status: str
    endpoint: str
    method: str
    path: str
    path_params: dict[str, Any]
    headers: dict[str, Any]
    body: dict[str, Any]
    importance: int
    required_updates: list[Any]
    recommended_updates: list[Any]
    blocking_updates: list[Any]
    created_at: str
    expires_at: str
    resumed_at: str | None
    result: dict[str, Any] | None
    resume: str
    sync_intent: dict[str, Any]


class SyncIntentAnswer(SyncIntentFields, title="amp.sync-intent.v1"):
    """GET /api/agent/sync-intents/{sync_intent_id}"""

    schema_: Literal["amp.sync-intent.v1"] = Field(alias="schema")
    finished_at: str | None


class SyncIntentResumeAnswer(ResponseModel, title="amp.sync-intent-resume.v1"):
    """POST /api/agent/sync-intents/{sync_intent_id}/resume"""

    schema_: Literal["amp.sync-intent-resume.v1"] = Field(alias="schema")
    resumed: bool
    sync_intent: dict[str, Any]
    sync_intent_id: str
    status: str
    endpoint: str
    result: dict[str, Any]
    resumed_at: str


class SyncIntentDiscardAnswer(SyncIntentFields, title="amp.sync-intent-discard.v1"):
    """POST /api/agent/sync-intents/{sync_intent_id}/discard"""

    schema_: Literal["amp.sync-intent-discard.v1"] = Field(alias="schema")
    finished_at: str
    discarded: bool


class AgentSkillsAnswer(ResponseModel, title="amp.agent-skills.v1"):
    """GET /api/agent/skills"""

    schema_: Literal["amp.agent-skills.v1"] = Field(alias="schema")
    purpose: str
    permission_scope: str
    runtime_version: str
    required_first_skill: str
    items: list[Any]
    skills: list[Any]
    runtime_connection_notice: dict[str, Any] | None = None
    mandatory_runtime_notice: dict[str, Any] | None = None
    known_agent_message: str | None = None
    platform_update_notice: dict[str, Any] | None = None


class AgentSkillFields(ResponseModel, title="AgentSkillFields"):
    """The fields AgentSkillAnswer, MemoryToolAnswer share."""

    id: str
    skill_id: str
    name: str
    label: str
    title: str
    description: str
    summary: str
    memory_modes: list[Any]
    required_scopes: list[Any]
    endpoints: list[Any]
    version: str
    permission_model: dict[str, Any]
    pull: dict[str, Any]


class AgentSkillAnswer(AgentSkillFields, title="amp.agent-skill.v1"):
    """GET /api/agent/skills/{skill_id}"""

    schema_: Literal["amp.agent-skill.v1"] = Field(alias="schema")


class MemoryToolAnswer(AgentSkillFields, title="amp.memory-tool.v1"):
    """GET /api/agent/skills/{skill_id}/pull"""

    schema_: Literal["amp.memory-tool.v1"] = Field(alias="schema")
    skill: dict[str, Any]
    skill_md: str
    skill_markdown: str
    install: dict[str, Any]
    runtime_connection_notice: dict[str, Any]
    mandatory_runtime_notice: dict[str, Any]
