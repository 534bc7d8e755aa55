"""Agent methods and collaboration claims."""

from __future__ import annotations

from typing import Annotated, Any

from aiohttp import web
from pydantic import AliasChoices, Field

from daemon.endpoints import Call, Endpoint
from daemon.request_models import Empty, Int, RequestModel, at_least
from daemon.responses.amp_methods import (
    AgentMethodQueryAnswer,
    AgentMethodRegistryAnswer,
    CollaborationClaimAnswer,
    CollaborationClaimsAnswer,
)
from daemon.runtime import methods
from daemon.validation import Query


# The MemoryCloud reference's fields; message, limit and a runtime string are our earlier
# names and shapes, still accepted.
class AgentMethodQuery(RequestModel, title="agent-method-query"):
    user_message: str | None = Field(
        "",
        max_length=4000,
        validation_alias=AliasChoices("user_message", "message"),
        description="the user's message",
    )
    task: str | None = Field("", max_length=1000)
    agent_handle: str | None = Field("", max_length=120)
    current_route: str | None = Field(
        "", max_length=240, description="where the agent is (a page, command or endpoint)"
    )
    runtime: dict[str, Any] | Annotated[str, Field(max_length=80)] | None = Field(
        default_factory=dict, description='{"type": "codex", ...} or just "codex"'
    )
    installed_skills: list[Annotated[str, Field(max_length=120)]] | None = Field(
        default_factory=list, max_length=100
    )
    max_results: Int | None = Field(3, ge=1, le=8, validation_alias=AliasChoices("max_results", "limit"))


class CollaborationClaim(RequestModel, title="collaboration-claim"):
    resource: str = Field(
        max_length=500, pattern=at_least(1), description="what is claimed: a path, branch, service ..."
    )
    ttl_seconds: Int | None = Field(900, ge=10, le=86_400)
    purpose: str | None = Field(None, max_length=500)
    workspace_id: str | None = Field(None, max_length=80)


async def list_methods(request: web.Request, call: Call) -> dict[str, Any]:
    return methods.catalog(call.base_url)


async def query_methods(request: web.Request, call: Call) -> dict[str, Any]:
    return methods.query(call.body, call.base_url)


async def claim(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.claims.claim(call.require_identity(), call.body)


async def release(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.claims.release(call.require_identity(), request.match_info["claim_id"])


CLAIM_FILTERS = (Query("workspace_id"), Query("resource"))


async def list_claims(request: web.Request, call: Call) -> dict[str, Any]:
    return {
        "schema": "amp.collaboration-claims.v1",
        "claims": call.services.claims.active(
            call.require_identity(), *(q.read(request) for q in CLAIM_FILTERS)
        ),
    }


# The names the reference tests (tests/daemon/test_*_reference.py) read the bodies by.
QUERY = AgentMethodQuery

ENDPOINTS = [
    # Static procedures, public as in the reference: no key needed to learn how to connect.
    Endpoint(
        "GET",
        "/api/agent/methods",
        list_methods,
        "The method registry.",
        auth="none",
        response=AgentMethodRegistryAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/methods/query",
        query_methods,
        "Method cards ranked for a user message, task and runtime (result_count may be 0).",
        auth="none",
        request=AgentMethodQuery,
        response=AgentMethodQueryAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/claims",
        claim,
        "Claim a shared resource for a while (409 names the holder and expiry).",
        scope="memory:write",
        request=CollaborationClaim,
        response=CollaborationClaimAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/claims/{claim_id}/release",
        release,
        "Release your claim.",
        scope="memory:write",
        request=Empty,
        response=CollaborationClaimAnswer,
    ),
    Endpoint(
        "GET",
        "/api/agent/claims",
        list_claims,
        "Active claims (?resource=).",
        scope="memory:read",
        response=CollaborationClaimsAnswer,
        query=CLAIM_FILTERS,
    ),
]
