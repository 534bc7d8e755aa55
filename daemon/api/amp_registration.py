"""Agent registration: the reference's proof-of-work challenge, then a pairing code
(daemon/runtime/registration.py says why both)."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import Field

from daemon.api.amp_updates import with_notice
from daemon.endpoints import Call, Endpoint
from daemon.request_models import RequestModel, at_least
from daemon.responses.amp_registration import AgentRegistrationAnswer, ChallengeAnswer
from daemon.runtime.access import public_identity


class AgentChallenge(RequestModel, title="agent-challenge"):
    intent: str | None = Field("register", max_length=40)
    agent_name: str | None = Field(None, max_length=120, description="recorded by the reference; unused here")


class AgentRegister(RequestModel, title="agent-register"):
    pairing_code: str | None = Field(
        None, max_length=40, description="one-time code from `memorycloud agent pair` (required here)"
    )
    challenge_id: str | None = Field(None, max_length=80, description="from POST /api/agent/challenge")
    nonce: str | None = Field(None, max_length=128, pattern=at_least(1), description="solves the challenge")
    handle: str | None = Field(
        None,
        max_length=40,
        pattern=at_least(3),
        description="the reference's account handle; the agent keeps the name its owner gave the pairing code",
    )
    display_name: str | None = Field(None, max_length=80)
    agent_kind: str | None = Field("autonomous", max_length=40)
    public_key: str | None = Field(None, max_length=4096)
    memory_format: str | None = Field("amp.memory.v1", max_length=80)
    website: str | None = Field(None, max_length=200, description="must be empty")


async def challenge(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.registration.challenge()


async def register(request: web.Request, call: Call) -> dict[str, Any]:
    """Quick Connect on a local daemon: a key only in exchange for the owner's pairing code."""
    identity, key = call.services.registration.register(call.body)
    call.identity = identity
    base = call.base_url
    user = public_identity(identity)
    return with_notice(
        call,
        {
            "schema": "amp.agent-registration.v1",
            "user": {**user, "handle": identity["name"], "username": identity["name"], "auth_type": "agent"},
            "api_key": key,
            "key_notice": "Shown once. Keep it in your runtime's secret store, never in a repository.",
            "next": {
                "runtime_profile": f"{base}/api/agent/runtime/profile",
                "project_probe": f"{base}/api/agent/project/probe",
                "bootstrap_context": f"{base}/api/agent/bootstrap/context",
                "upload": f"{base}/api/memories/import",
                "sync": f"{base}/api/memories/{{slug}}/sync",
                "skills": f"{base}/api/agent/skills",
                "updates_check": f"{base}/api/agent/updates/check",
                "memory_brief": f"{base}/api/agent/memory-brief",
                "memory_brief_events": f"{base}/api/agent/memory-briefs/{{brief_id}}/events",
                "suite_schema": f"{base}/api/protocol/schema",
                "suite_install": f"{base}/api/agent/open-memories/install",
                "guide": f"{base}/agent/start",
            },
        },
        always=True,
    )


ENDPOINTS = [
    Endpoint(
        "POST",
        "/api/agent/challenge",
        challenge,
        "A proof-of-work challenge (registration also needs the owner's pairing code).",
        auth="none",
        request=AgentChallenge,
        response=ChallengeAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/register",
        register,
        "Exchange an owner-issued pairing code for an agent key (Quick Connect).",
        auth="none",
        request=AgentRegister,
        response=AgentRegistrationAnswer,
    ),
]
