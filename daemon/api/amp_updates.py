"""Platform updates, sync intents and memory tools (skills); ``with_notice``, which every
agent return path uses to carry the update and connection notices."""

from __future__ import annotations

from typing import Annotated, Any

from aiohttp import web
from pydantic import Field

from daemon.endpoints import Call, Endpoint
from daemon.request_models import Empty, RequestModel
from daemon.responses.amp_updates import (
    AgentSkillAnswer,
    AgentSkillsAnswer,
    MemoryToolAnswer,
    PlatformUpdateCheckAnswer,
    PlatformUpdatesAnswer,
    SyncIntentAnswer,
    SyncIntentDiscardAnswer,
    SyncIntentResumeAnswer,
    SyncIntentsAnswer,
)
from daemon.runtime import skills
from daemon.runtime.notices import notices
from daemon.validation import Query


class PlatformUpdateAck(RequestModel, title="platform-update-ack"):
    update_ids: list[Annotated[str, Field(max_length=80)]] | None = Field(
        default_factory=list, max_length=100, description="updates applied; empty means every pending one"
    )
    seen_version: str | None = Field(None, max_length=80, description="the runtime version you now run")


INTENT_STATUSES = ("blocked", "resumed", "discarded", "expired")
INTENT_STATUS = Query("status", choices=INTENT_STATUSES)


def with_notice(call: Call, body: dict[str, Any], *, always: bool = False) -> dict[str, Any]:
    """An answer on an agent's return path, with what the reference attaches there: to an
    agent, the runtime connection notices and ``known_agent_message``; while updates are
    pending for it, amp.platform-update-notice.v1. ``always``: the onboarding documents,
    which carry every notice for any caller (the platform notice then says "current")."""
    identity = call.identity
    is_agent = identity is not None and identity["kind"] != "owner"
    out = dict(body)
    if is_agent or always:
        connection = notices(call.base_url)
        out.update(connection)
        if is_agent:
            out["known_agent_message"] = connection["runtime_connection_notice"]["known_agent_message"]
    notice = call.services.updates.notice(identity, call.base_url, always=always)
    if notice:
        out["platform_update_notice"] = notice
    return out


async def manifest(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.updates.manifest(call.base_url)


async def check(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.updates.check(call.require_identity(), request.headers, call.base_url)


async def ack(request: web.Request, call: Call) -> dict[str, Any]:
    identity = call.require_identity()
    return call.services.updates.ack(
        identity,
        call.body["update_ids"],
        call.body.get("seen_version"),
        acked_by=identity,
        base_url=call.base_url,
    )


async def list_intents(request: web.Request, call: Call) -> dict[str, Any]:
    # Newest first, as the reference lists them; `items` is the reference's name.
    intents = call.services.gate.list(call.require_identity(), INTENT_STATUS.read(request))[::-1]
    return {"schema": "amp.sync-intents.v1", "items": intents, "sync_intents": intents}


async def get_intent(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.gate.get(call.require_identity(), request.match_info["sync_intent_id"])


async def resume_intent(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.gate.resume(
        call.require_identity(), request.match_info["sync_intent_id"], call.base_url
    )


async def discard_intent(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.gate.discard(call.require_identity(), request.match_info["sync_intent_id"])


async def list_skills(request: web.Request, call: Call) -> dict[str, Any]:
    # with_notice adds the runtime connection notices for an agent, as the reference does.
    return with_notice(call, skills.catalog(call.base_url, call.identity))


async def skill_manifest(request: web.Request, call: Call) -> dict[str, Any]:
    return skills.find(request.match_info["skill_id"]).public(call.base_url, call.identity)


async def pull_skill(request: web.Request, call: Call) -> dict[str, Any]:
    identity = call.require_identity()
    skill = skills.pullable(request.match_info["skill_id"], identity)
    return {**skills.pull(skill, call.base_url, identity), **notices(call.base_url)}


async def skill_markdown(request: web.Request, call: Call) -> web.Response:
    skill = skills.pullable(request.match_info["skill_id"], call.require_identity())
    return web.Response(text=skill.markdown(call.base_url), content_type="text/plain")


ENDPOINTS = [
    Endpoint(
        "GET",
        "/api/agent/updates/manifest",
        manifest,
        "Runtime/protocol update manifest.",
        auth="optional",
        response=PlatformUpdatesAnswer,
    ),
    Endpoint(
        "GET",
        "/api/agent/updates/check",
        check,
        "Pending updates for the caller (reads X-MemoryCloud-Runtime-Version,"
        " X-MemoryCloud-Applied-Updates and the legacy X-Cloudmemory-* headers).",
        response=PlatformUpdateCheckAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/updates/ack",
        ack,
        "Ack applied updates (each at its own version).",
        request=PlatformUpdateAck,
        response=PlatformUpdateCheckAnswer,
    ),
    Endpoint(
        "GET",
        "/api/agent/sync-intents",
        list_intents,
        "Writes held back by the update gate (?status=blocked ...).",
        response=SyncIntentsAnswer,
        query=(INTENT_STATUS,),
    ),
    Endpoint(
        "GET",
        "/api/agent/sync-intents/{sync_intent_id}",
        get_intent,
        "One sync intent.",
        response=SyncIntentAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/sync-intents/{sync_intent_id}/resume",
        resume_intent,
        "After the ack: replay the original write exactly once.",
        request=Empty,
        response=SyncIntentResumeAnswer,
        idempotent=True,
    ),
    Endpoint(
        "POST",
        "/api/agent/sync-intents/{sync_intent_id}/discard",
        discard_intent,
        "Give up the held-back write.",
        request=Empty,
        response=SyncIntentDiscardAnswer,
    ),
    # The catalog and each skill's manifest are public, as in the reference; pulling a skill
    # needs skill:install (every skill here lists it) and the skill's other required_scopes.
    Endpoint(
        "GET",
        "/api/agent/skills",
        list_skills,
        "The memory tools catalog.",
        auth="optional",
        response=AgentSkillsAnswer,
    ),
    Endpoint(
        "GET",
        "/api/agent/skills/{skill_id}",
        skill_manifest,
        "One memory tool's manifest: scopes, endpoints, where to pull it.",
        auth="optional",
        response=AgentSkillAnswer,
    ),
    Endpoint(
        "GET",
        "/api/agent/skills/{skill_id}/pull",
        pull_skill,
        "Pull a memory tool's current instructions (what requires_repull asks for).",
        scope="skill:install",
        response=MemoryToolAnswer,
    ),
    Endpoint(
        "GET",
        "/api/agent/skills/{skill_id}/skill.md",
        skill_markdown,
        "A memory tool's SKILL.md as text/plain.",
        scope="skill:install",
    ),
]
