"""Platform updates, sync intents, and the agent return paths that carry update notices
(autostart, discovery, navigation: their paths are ours, the seed names only the idea)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon.endpoints import Call, Endpoint
from daemon.runtime import skills
from daemon.runtime.constants import PROTOCOL_VERSION, RUNTIME_VERSION
from daemon.validation import Field, RequestSchema, query_choice

ACK = RequestSchema("platform-update-ack", (
    Field("update_ids", list, default=[], items=str, max_items=100, max_length=80,
          description="updates applied; empty means every pending one"),
    Field("seen_version", str, max_length=120, description="the runtime version you now run"),
))
EMPTY = RequestSchema("empty")
INTENT_STATUSES = ("blocked", "resumed", "discarded", "expired")


def with_notice(call: Call, body: dict[str, Any]) -> dict[str, Any]:
    """Attach amp.platform-update-notice.v1 while updates are pending for the calling agent."""
    notice = call.services.updates.notice(call.identity)
    return {**body, "platform_update_notice": notice} if notice else body


async def manifest(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.updates.manifest()


async def check(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.updates.check(call.require_identity(), request.headers)


async def ack(request: web.Request, call: Call) -> dict[str, Any]:
    identity = call.require_identity()
    return call.services.updates.ack(identity, call.body["update_ids"], call.body.get("seen_version"),
                                     acked_by=identity)


async def list_intents(request: web.Request, call: Call) -> dict[str, Any]:
    return {"schema": "amp.sync-intents.v1",
            "sync_intents": call.services.gate.list(call.require_identity(), query_choice(request, "status", INTENT_STATUSES))}


async def get_intent(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.gate.get(call.require_identity(), request.match_info["sync_intent_id"])


async def resume_intent(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.gate.resume(call.require_identity(), request.match_info["sync_intent_id"],
                                     call.base_url)


async def discard_intent(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.gate.discard(call.require_identity(), request.match_info["sync_intent_id"])


async def autostart(request: web.Request, call: Call) -> dict[str, Any]:
    base = call.base_url
    return with_notice(call, {
        "schema": "amp.agent-autostart.v1",
        "recommended_mode": "quick_connect",
        "runtime_version": RUNTIME_VERSION,
        "known_agent": call.identity is not None,
        "autonomous_sequence": [
            {"step": "register", "how": "ask the owner for a pairing code (`memorycloud agent pair`)"
                                        f" and POST it to {base}/api/agent/register"},
            {"step": "runtime_profile", "endpoint": f"{base}/api/agent/runtime/profile"},
            {"step": "project_probe", "endpoint": f"{base}/api/agent/project/probe"},
            {"step": "bootstrap_context", "endpoint": f"{base}/api/agent/bootstrap/context"},
            {"step": "memory_delta", "endpoint": f"{base}/api/agent/memory-delta",
             "header": "X-AMP-Context-Receipt"},
            {"step": "check_updates", "endpoint": f"{base}/api/agent/updates/check"},
        ],
        "onboarding_modes": {"quick_connect": {"default": True},
                             "startup_setup": {"default": False, "needs": "the owner's approval"}},
    })


async def discovery(request: web.Request, call: Call) -> dict[str, Any]:
    base = call.base_url
    return with_notice(call, {
        "schema": "amp.agent-discovery.v1",
        "service": "memorycloud-companion",
        "runtime_version": RUNTIME_VERSION,
        "protocol_version": PROTOCOL_VERSION,
        "dialects": {"amp": f"{base}/api/protocol/schema"},
        "autostart": f"{base}/api/agent/autostart",
        "navigation": f"{base}/api/agent/navigation",
        "updates": f"{base}/api/agent/updates/manifest",
    })


async def navigation(request: web.Request, call: Call) -> dict[str, Any]:
    """Where this agent should go next, given what it has and has not done."""
    base = call.base_url
    identity = call.identity
    steps: list[dict[str, str]] = []
    if identity is None:
        steps.append({"do": "connect", "endpoint": f"{base}/api/agent/autostart"})
    else:
        if call.services.updates.pending(identity):
            steps.append({"do": "check_updates", "endpoint": f"{base}/api/agent/updates/check"})
        blocked = call.services.gate.list(identity, "blocked")
        if blocked:
            steps.append({"do": "resume_sync_intents", "endpoint": f"{base}/api/agent/sync-intents?status=blocked"})
        steps.append({"do": "bootstrap_context", "endpoint": f"{base}/api/agent/bootstrap/context"})
    return with_notice(call, {"schema": "amp.agent-navigation.v1", "next": steps})


async def list_skills(request: web.Request, call: Call) -> dict[str, Any]:
    return with_notice(call, skills.catalog(call.base_url))


async def pull_skill(request: web.Request, call: Call) -> dict[str, Any]:
    return skills.pull(request.match_info["skill_id"], call.base_url)


ENDPOINTS = [
    Endpoint("GET", "/api/agent/updates/manifest", manifest, "Runtime/protocol update manifest.",
             auth="optional", response_schema="amp.platform-updates.v1"),
    Endpoint("GET", "/api/agent/updates/check", check,
             "Pending updates for the caller (reads X-MemoryCloud-Runtime-Version,"
             " X-MemoryCloud-Applied-Updates and the legacy X-Cloudmemory-* headers).",
             response_schema="amp.platform-update-check.v1"),
    Endpoint("POST", "/api/agent/updates/ack", ack, "Ack applied updates (each at its own version).",
             request=ACK, response_schema="amp.platform-update-check.v1"),
    Endpoint("GET", "/api/agent/sync-intents", list_intents,
             "Writes held back by the update gate (?status=blocked ...).",
             response_schema="amp.sync-intents.v1"),
    Endpoint("GET", "/api/agent/sync-intents/{sync_intent_id}", get_intent, "One sync intent.",
             response_schema="amp.sync-intent.v1"),
    Endpoint("POST", "/api/agent/sync-intents/{sync_intent_id}/resume", resume_intent,
             "After the ack: replay the original write exactly once.", request=EMPTY,
             response_schema="amp.sync-intent-resume.v1", idempotent=True),
    Endpoint("POST", "/api/agent/sync-intents/{sync_intent_id}/discard", discard_intent,
             "Give up the held-back write.", request=EMPTY, response_schema="amp.sync-intent.v1"),
    Endpoint("GET", "/api/agent/skills", list_skills, "The memory tools catalog.",
             scope="skill:install", response_schema="amp.memory-tools.v1"),
    Endpoint("GET", "/api/agent/skills/{skill_id}/pull", pull_skill,
             "Pull a memory tool's current instructions (what requires_repull asks for).",
             scope="skill:install", response_schema="amp.memory-tool.v1"),
    Endpoint("GET", "/api/agent/autostart", autostart, "Quick Connect steps (+ update notice).",
             auth="optional", response_schema="amp.agent-autostart.v1"),
    Endpoint("GET", "/api/agent/discovery", discovery, "What this daemon offers (+ update notice).",
             auth="optional", response_schema="amp.agent-discovery.v1"),
    Endpoint("GET", "/api/agent/navigation", navigation, "What to do next (+ update notice).",
             auth="optional", response_schema="amp.agent-navigation.v1"),
]
