"""The answers of daemon/api/amp_onboarding.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.responses.notices import NoticedAnswer


class AgentAutostartAnswer(NoticedAnswer, title="amp.agent-autostart.v1"):
    """GET /api/agent/autostart, GET /agent/start.json"""

    schema_: Literal["amp.agent-autostart.v1"] = Field(alias="schema")
    service: str
    base_url: str
    runtime_version: str
    entrypoint: str
    legacy_entrypoint: str
    web_view: Any
    human_home: str
    shadow_routes: dict[str, Any]
    recommended_mode: str
    mode_selection_rule: str
    onboarding_modes: dict[str, Any]
    memory_brief: dict[str, Any]
    method_registry: dict[str, Any]
    native_runtime_bootstrap: dict[str, Any]
    sync_update_gate: dict[str, Any]
    runtime_replacement_policy: dict[str, Any]
    link_only_instruction: str
    prime_directive: list[Any]
    stop_only_when_missing: list[Any]
    autonomous_sequence: list[Any]
    optional_sequences: dict[str, Any]
    compatibility: dict[str, Any]
    legacy_full_sequence: list[Any]
    error_policy: dict[str, Any]
    rate_limits: dict[str, Any]
    completion_report_schema: dict[str, Any]
    known_agent: bool


class EntryPointFields(NoticedAnswer, title="EntryPointFields"):
    """The fields DiscoveryAnswer, AgentNavigationAnswer share."""

    web_view: Any
    service: str
    concepts: dict[str, Any]
    shadow_routes: dict[str, Any]
    errors: dict[str, Any]
    rate_limits: dict[str, Any]
    scopes: list[Any]
    autostart: str


class DiscoveryAnswer(EntryPointFields, title="DiscoveryAnswer"):
    """GET /api/agent/discovery, GET /agent/discovery.json"""

    agent_web_view: Any
    llms_txt: Any
    memory_graphs: Any
    memory_graph: Any
    agent_memory_view: Any
    active_memory_view: Any
    memory_integrations: Any
    memory_integration_recommend: Any
    memory_local_deployments: Any
    memory_distillation_sources: Any
    human_memory: Any
    human_memories: Any
    name: str
    purpose: str
    runtime_version: str
    protocol_version: str
    human_home: str
    agent_doc: str
    agent_docs: str
    agent_help: str
    human_help: str
    agent_memory: str
    agent_memories: str
    agent_start: str
    agent_start_json: str
    legacy_agent_start: str
    agent_autostart: str
    agent_guide: str
    agent_onboarding: str
    navigation: str
    skills: str
    memory_takeover_policy: str
    protocol_schema: str
    memory_templates: str
    memory_distill_jobs: str
    agent_methods: str
    agent_methods_query: str
    memory_map: str
    workspace_memory_map: str
    memory_brief: str
    platform_updates_manifest: str
    platform_updates_check: str
    auth: dict[str, Any]
    core_actions: dict[str, Any]
    dialects: dict[str, Any]
    updates: str


class AgentNavigationAnswer(EntryPointFields, title="amp.agent-navigation.v1"):
    """GET /api/agent/navigation"""

    schema_: Literal["amp.agent-navigation.v1"] = Field(alias="schema")
    base_url: str
    recommended_entry: str
    recommended_mode: str
    mode_selection_rule: str
    human_return: str
    documents: list[Any]
    workflows: dict[str, Any]
    safety: list[Any]
    next: list[Any]
