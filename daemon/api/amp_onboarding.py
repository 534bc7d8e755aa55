"""The documents an agent reads first: autostart (also /agent/start.json), discovery (also
/agent/discovery.json) and navigation. Each carries the connection and update notices for
any caller, as the reference's do; the content is daemon/runtime/onboarding.py."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon.api.amp_updates import with_notice
from daemon.endpoints import Call, Endpoint
from daemon.responses.amp_onboarding import AgentAutostartAnswer, AgentNavigationAnswer, DiscoveryAnswer
from daemon.runtime import onboarding


async def autostart(request: web.Request, call: Call) -> dict[str, Any]:
    document = onboarding.autostart(call.base_url)
    return with_notice(call, {**document, "known_agent": call.identity is not None}, always=True)


async def discovery(request: web.Request, call: Call) -> dict[str, Any]:
    return with_notice(call, onboarding.discovery(call.base_url), always=True)


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
        if call.services.gate.list(identity, "blocked"):
            steps.append(
                {"do": "resume_sync_intents", "endpoint": f"{base}/api/agent/sync-intents?status=blocked"}
            )
        steps.append({"do": "bootstrap_context", "endpoint": f"{base}/api/agent/bootstrap/context"})
    return with_notice(call, onboarding.navigation(base, steps), always=True)


ENDPOINTS = [
    Endpoint(
        "GET",
        "/api/agent/autostart",
        autostart,
        "Quick Connect steps (+ notices).",
        auth="optional",
        response=AgentAutostartAnswer,
    ),
    Endpoint(
        "GET",
        "/agent/start.json",
        autostart,
        "The autostart document (reference path).",
        auth="optional",
        response=AgentAutostartAnswer,
    ),
    Endpoint(
        "GET",
        "/api/agent/discovery",
        discovery,
        "What this daemon offers (+ notices).",
        auth="optional",
        response=DiscoveryAnswer,
    ),
    Endpoint(
        "GET",
        "/agent/discovery.json",
        discovery,
        "The discovery document (reference path).",
        auth="optional",
        response=DiscoveryAnswer,
    ),
    Endpoint(
        "GET",
        "/api/agent/navigation",
        navigation,
        "What to do next (+ notices).",
        auth="optional",
        response=AgentNavigationAnswer,
    ),
]
