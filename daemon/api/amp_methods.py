"""Agent methods and collaboration claims."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon.endpoints import Call, Endpoint
from daemon.runtime import methods
from daemon.validation import Field, Query, RequestSchema

# The MemoryCloud reference's fields; message, limit and a runtime string are our earlier
# names and shapes, still accepted.
QUERY = RequestSchema("agent-method-query", (
    Field("user_message", str, default="", max_length=4000, aliases=("message",),
          description="the user's message"),
    Field("task", str, default="", max_length=1000),
    Field("agent_handle", str, default="", max_length=120),
    Field("current_route", str, default="", max_length=240,
          description="where the agent is (a page, command or endpoint)"),
    Field("runtime", (dict, str), default={}, max_length=80,
          description='{"type": "codex", ...} or just "codex"'),
    Field("installed_skills", list, default=[], items=str, max_items=100, max_length=120),
    Field("max_results", int, default=3, minimum=1, maximum=8, aliases=("limit",)),
))

CLAIM = RequestSchema("collaboration-claim", (
    Field("resource", str, required=True, min_length=1, max_length=500,
          description="what is claimed: a path, branch, service ..."),
    Field("ttl_seconds", int, default=900, minimum=10, maximum=86_400),
    Field("purpose", str, max_length=500),
    Field("workspace_id", str, max_length=80),
))
EMPTY = RequestSchema("empty")


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
    return {"schema": "amp.collaboration-claims.v1", "claims": call.services.claims.active(
        call.require_identity(), *(q.read(request) for q in CLAIM_FILTERS))}


ENDPOINTS = [
    # Static procedures, public as in the reference: no key needed to learn how to connect.
    Endpoint("GET", "/api/agent/methods", list_methods, "The method registry.", auth="none",
             response_schema="amp.agent-method-registry.v1"),
    Endpoint("POST", "/api/agent/methods/query", query_methods,
             "Method cards ranked for a user message, task and runtime (result_count may be 0).",
             auth="none", request=QUERY, response_schema="amp.agent-method-query.v1"),
    Endpoint("POST", "/api/agent/claims", claim,
             "Claim a shared resource for a while (409 names the holder and expiry).",
             scope="memory:write", request=CLAIM, response_schema="amp.collaboration-claim.v1"),
    Endpoint("POST", "/api/agent/claims/{claim_id}/release", release, "Release your claim.",
             scope="memory:write", request=EMPTY, response_schema="amp.collaboration-claim.v1"),
    Endpoint("GET", "/api/agent/claims", list_claims, "Active claims (?resource=).",
             scope="memory:read", response_schema="amp.collaboration-claims.v1", query=CLAIM_FILTERS),
]
