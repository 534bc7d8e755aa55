"""Agent registration: the reference's proof-of-work challenge, then a pairing code
(daemon/runtime/registration.py says why both)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon.api.amp_updates import with_notice
from daemon.endpoints import Call, Endpoint
from daemon.runtime.access import public_identity
from daemon.validation import Field, RequestSchema

CHALLENGE = RequestSchema(
    "agent-challenge",
    (
        Field("intent", str, default="register", max_length=40),
        Field("agent_name", str, max_length=120, description="recorded by the reference; unused here"),
    ),
)

REGISTER = RequestSchema(
    "agent-register",
    (
        Field(
            "pairing_code",
            str,
            max_length=40,
            description="one-time code from `memorycloud agent pair` (required here)",
        ),
        Field("challenge_id", str, max_length=80, description="from POST /api/agent/challenge"),
        Field("nonce", str, min_length=1, max_length=128, description="solves the challenge"),
        Field(
            "handle",
            str,
            min_length=3,
            max_length=40,
            description="the reference's account handle; the agent keeps the name its owner"
            " gave the pairing code",
        ),
        Field("display_name", str, max_length=80),
        Field("agent_kind", str, default="autonomous", max_length=40),
        Field("public_key", str, max_length=4096),
        Field("memory_format", str, default="amp.memory.v1", max_length=80),
        Field("website", str, max_length=200, description="must be empty"),
    ),
)


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
        request=CHALLENGE,
    ),
    Endpoint(
        "POST",
        "/api/agent/register",
        register,
        "Exchange an owner-issued pairing code for an agent key (Quick Connect).",
        auth="none",
        request=REGISTER,
        response_schema="amp.agent-registration.v1",
    ),
]
