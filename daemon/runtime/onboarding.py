"""What an agent reads first: the autostart steps (amp.agent-autostart.v1), the discovery
document and the navigation map (amp.agent-navigation.v1), with the reference's keys.

Keys that name a feature this daemon does not have (a web view, llms.txt, memory graphs,
integrations and local-deployment catalogs) are present and null, so a client finds the key
and learns there is nothing behind it; daemon/api/reference_differences.py lists them.
"""

from __future__ import annotations

from typing import Any

from daemon.runtime.constants import PROTOCOL_VERSION, RUNTIME_VERSION

SERVICE = "memorycloud-companion"
SCOPES = ["memory:read", "memory:write", "agent:sync", "skill:install", "catalog:read"]
RATE_LIMITS = {"policy": "none: a local daemon serves its own person's agents", "status_when_limited": 429}
ERRORS = {
    "envelope": "amp.error.v1: {error: {id, type, status, message, detail, path, time}, detail}",
    "400": "malformed request",
    "401": "missing or invalid API key",
    "403": "scope, ownership or guard refusal",
    "404": "unknown id (also someone else's)",
    "409": "conflict, or amp.sync-interrupt.v1 under detail (a held-back write)",
    "413": "body too large",
    "422": "missing or invalid field (detail names it)",
    "428": "amp.bootstrap-required.v1 under detail: bootstrap first, send the receipt",
}
MODE_RULE = (
    "quick_connect unless the person asked for startup items; startup_setup writes"
    " files into a repository and needs the person's approval of the plan"
)
# Shown as null: nothing like it exists on this daemon (see the module docstring).
ABSENT = (
    "web_view",
    "agent_web_view",
    "llms_txt",
    "memory_graphs",
    "memory_graph",
    "agent_memory_view",
    "active_memory_view",
    "memory_integrations",
    "memory_integration_recommend",
    "memory_local_deployments",
    "memory_distillation_sources",
    "human_memory",
    "human_memories",
)


def _urls(base: str) -> dict[str, str]:
    return {
        "agent_start": f"{base}/agent/start",
        "agent_start_json": f"{base}/agent/start.json",
        "autostart": f"{base}/api/agent/autostart",
        "discovery": f"{base}/agent/discovery.json",
        "navigation": f"{base}/api/agent/navigation",
        "skills": f"{base}/api/agent/skills",
        "protocol_schema": f"{base}/api/protocol/schema",
        "register": f"{base}/api/agent/register",
        "challenge": f"{base}/api/agent/challenge",
        "runtime_profile": f"{base}/api/agent/runtime/profile",
        "project_probe": f"{base}/api/agent/project/probe",
        "bootstrap_context": f"{base}/api/agent/bootstrap/context",
        "memory_delta": f"{base}/api/agent/memory-delta",
        "memory_brief": f"{base}/api/agent/memory-brief",
        "methods": f"{base}/api/agent/methods",
        "methods_query": f"{base}/api/agent/methods/query",
        "updates_manifest": f"{base}/api/agent/updates/manifest",
        "updates_check": f"{base}/api/agent/updates/check",
        "updates_ack": f"{base}/api/agent/updates/ack",
        "sync_intents": f"{base}/api/agent/sync-intents",
        "install_plan": f"{base}/api/agent/startup-items/install-plan",
        "confirm": f"{base}/api/agent/startup-items/confirm",
        "templates": f"{base}/api/memory/templates",
        "memory_map": f"{base}/api/me/memory-map",
        "catalog": f"{base}/api/catalog",
    }


def _sequence(urls: dict[str, str]) -> list[dict[str, str]]:
    return [
        {
            "step": "register",
            "endpoint": urls["register"],
            "how": "ask the person for a pairing code (`memorycloud agent pair`) and send it as"
            " pairing_code; a proof-of-work challenge is optional here",
        },
        {"step": "runtime_profile", "endpoint": urls["runtime_profile"]},
        {"step": "project_probe", "endpoint": urls["project_probe"]},
        {
            "step": "bootstrap_context",
            "endpoint": urls["bootstrap_context"],
            "how": "inject summary_markdown as private context; keep receipt_id",
        },
        {"step": "memory_delta", "endpoint": urls["memory_delta"], "header": "X-AMP-Context-Receipt"},
        {"step": "check_updates", "endpoint": urls["updates_check"]},
    ]


def autostart(base: str) -> dict[str, Any]:
    urls = _urls(base)
    return {
        "schema": "amp.agent-autostart.v1",
        "service": SERVICE,
        "base_url": base,
        "runtime_version": RUNTIME_VERSION,
        "entrypoint": urls["agent_start"],
        "legacy_entrypoint": urls["agent_start_json"],
        "web_view": None,
        "human_home": "the person runs `memorycloud` (a terminal UI)",
        "shadow_routes": {
            "/agent/start.json": "/api/agent/autostart",
            "/agent/discovery.json": "/api/agent/discovery",
        },
        "recommended_mode": "quick_connect",
        "mode_selection_rule": MODE_RULE,
        "onboarding_modes": {
            "quick_connect": {"default": True},
            "startup_setup": {"default": False, "needs": "the person's approval"},
        },
        "memory_brief": {"schema": "amp.memory-brief.v1", "endpoint": urls["memory_brief"]},
        "method_registry": {
            "schema": "amp.agent-method-registry.v1",
            "endpoint": urls["methods"],
            "query": urls["methods_query"],
        },
        "native_runtime_bootstrap": {
            "schema": "amp.native-runtime.v1",
            "install_plan": urls["install_plan"],
            "confirm": urls["confirm"],
            "context": urls["bootstrap_context"],
        },
        "sync_update_gate": {
            "schema": "amp.sync-interrupt.v1",
            "rule": "with a required update pending, writes of importance >= 4"
            " are kept as sync intents (409) until ack and resume",
            "list": urls["sync_intents"],
            "resume": f"{urls['sync_intents']}/{{sync_intent_id}}/resume",
            "discard": f"{urls['sync_intents']}/{{sync_intent_id}}/discard",
        },
        "runtime_replacement_policy": {
            "keep_api_key": True,
            "repull_skills_on": "requires_repull",
            "memory_stays": "in this daemon, whatever the runtime",
        },
        "link_only_instruction": f"Read {urls['agent_start']} and follow it.",
        "prime_directive": [
            "start every session from the context pack",
            "write changes back with the receipt",
            "current instructions override stored memory",
        ],
        "stop_only_when_missing": [
            "a pairing code from the person",
            "the person's approval for startup items",
        ],
        "autonomous_sequence": _sequence(urls),
        "optional_sequences": {
            "startup_setup": [
                {"step": "install_plan", "endpoint": urls["install_plan"]},
                {"step": "person_approves", "how": "memorycloud setup approve PLAN"},
                {"step": "confirm", "endpoint": urls["confirm"]},
            ],
            "memory_brief": [{"step": "memory_brief", "endpoint": urls["memory_brief"]}],
        },
        "compatibility": {
            "amp": urls["protocol_schema"],
            "memory_stores": f"{base}/api/v1/cloud/memory_stores",
            "agent_memory_1_0": f"{base}/search_memory/",
            "mcp": f"{base}/mcp",
        },
        "legacy_full_sequence": [step["step"] for step in _sequence(urls)],
        "error_policy": {
            "on_5xx": "retry later; the session continues without memory",
            "on_409_sync_interrupt": "check, apply and ack updates, then resume",
            "on_428": "bootstrap again and send the new receipt",
        },
        "rate_limits": RATE_LIMITS,
        "completion_report_schema": {
            "fields": ["registered", "context_pack_id", "receipt_id", "skills_pulled", "updates_acked"]
        },
        "known_agent": False,
    }


def discovery(base: str) -> dict[str, Any]:
    urls = _urls(base)
    absent = {key: None for key in ABSENT}
    return {
        **absent,
        "name": "MemoryCloud Companion",
        "service": SERVICE,
        "purpose": "this machine's memory for AI agents, shared by every runtime, offline",
        "runtime_version": RUNTIME_VERSION,
        "protocol_version": PROTOCOL_VERSION,
        "concepts": _concepts(),
        "human_home": "the person runs `memorycloud` (a terminal UI)",
        "agent_doc": urls["agent_start"],
        "agent_docs": urls["agent_start"],
        "agent_help": urls["methods_query"],
        "human_help": "memorycloud --help",
        "agent_memory": urls["bootstrap_context"],
        "agent_memories": f"{base}/api/agent/search",
        "shadow_routes": {"/agent/discovery.json": "/api/agent/discovery"},
        "agent_start": urls["agent_start"],
        "agent_start_json": urls["agent_start_json"],
        "legacy_agent_start": urls["agent_start"],
        "agent_autostart": urls["autostart"],
        "agent_guide": urls["agent_start"],
        "agent_onboarding": urls["autostart"],
        "navigation": urls["navigation"],
        "skills": urls["skills"],
        "memory_takeover_policy": f"{urls['skills']}/capsule_installer/pull",
        "protocol_schema": urls["protocol_schema"],
        "memory_templates": urls["templates"],
        "memory_distill_jobs": f"{base}/api/memories/{{slug}}/distill-jobs",
        "agent_methods": urls["methods"],
        "agent_methods_query": urls["methods_query"],
        "memory_map": urls["memory_map"],
        "workspace_memory_map": f"{base}/api/workspaces/{{workspace_id}}/memory-map",
        "memory_brief": urls["memory_brief"],
        "platform_updates_manifest": urls["updates_manifest"],
        "platform_updates_check": urls["updates_check"],
        "auth": {
            "header": "Authorization: Bearer <api_key>",
            "register": urls["register"],
            "needs": "a pairing code from the person",
        },
        "core_actions": {
            "bootstrap": urls["bootstrap_context"],
            "write": urls["memory_delta"],
            "brief": urls["memory_brief"],
            "updates": urls["updates_check"],
        },
        "errors": ERRORS,
        "rate_limits": RATE_LIMITS,
        "scopes": SCOPES,
        "dialects": {"amp": urls["protocol_schema"]},
        "autostart": urls["autostart"],
        "updates": urls["updates_manifest"],
    }


def navigation(base: str, steps: list[dict[str, str]]) -> dict[str, Any]:
    urls = _urls(base)
    return {
        "schema": "amp.agent-navigation.v1",
        "service": SERVICE,
        "base_url": base,
        "recommended_entry": urls["autostart"],
        "recommended_mode": "quick_connect",
        "mode_selection_rule": MODE_RULE,
        "web_view": None,
        "human_return": "the person runs `memorycloud` (a terminal UI)",
        "shadow_routes": {"/agent/discovery.json": "/api/agent/discovery"},
        "autostart": urls["autostart"],
        "documents": [
            {"id": "agent_start", "url": urls["agent_start"]},
            {"id": "autostart", "url": urls["autostart"]},
            {"id": "protocol_schema", "url": urls["protocol_schema"]},
            {"id": "skills", "url": urls["skills"]},
        ],
        "concepts": _concepts(),
        "workflows": {
            "session": [s["step"] for s in _sequence(urls)],
            "held_back_write": ["updates_check", "updates_ack", "sync_intent_resume"],
        },
        "errors": ERRORS,
        "rate_limits": RATE_LIMITS,
        "scopes": SCOPES,
        "safety": [
            "never write the API key into a repository",
            "startup items and imports need the person's approval",
            "current instructions override stored memory",
        ],
        "next": steps,
    }


def _concepts() -> dict[str, str]:
    return {
        "context_pack": "amp.context-pack.v1: what a session starts from, with a receipt",
        "memory_delta": "amp.memory-delta.v1: a small change written back with the receipt",
        "memory_brief": "amp.memory-brief.v1: a task brief and its events",
        "platform_update": "amp.platform-updates.v1: how agents should use this daemon now",
        "sync_intent": "a write held back by a required update, resumed after the ack",
        "memory_suite": "amp.memory-suite.v1: portable memory (MEMORY.md, memory/, DREAMS.md)",
    }
