"""Agent methods and collaboration claims."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon.endpoints import Call, Endpoint
from daemon.runtime import methods
from daemon.validation import Field, RequestSchema, ValidationFailed

QUERY = RequestSchema("agent-method-query", (
    Field("message", str, default="", max_length=5000, description="the user's message"),
    Field("task", str, default="", max_length=5000),
    Field("runtime", str, max_length=40),
    Field("limit", int, default=3, minimum=1, maximum=10),
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
    return methods.catalog()


async def query_methods(request: web.Request, call: Call) -> dict[str, Any]:
    body = call.body
    if not (body["message"].strip() or body["task"].strip()):
        raise ValidationFailed("give a 'message' or a 'task' to rank methods for",
                               details={"missing_fields": ["message"]})
    return methods.query(body["message"], body["task"], body.get("runtime"), body["limit"])


async def claim(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.claims.claim(call.require_identity(), call.body)


async def release(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.claims.release(call.require_identity(), request.match_info["claim_id"])


async def list_claims(request: web.Request, call: Call) -> dict[str, Any]:
    return {"schema": "amp.collaboration-claims.v1", "claims": call.services.claims.active(
        call.require_identity(), request.query.get("workspace_id"), request.query.get("resource"))}


ENDPOINTS = [
    Endpoint("GET", "/api/agent/methods", list_methods, "The method registry.",
             response_schema="amp.agent-methods.v1"),
    Endpoint("POST", "/api/agent/methods/query", query_methods,
             "Method cards ranked for a user message, task and runtime.", request=QUERY,
             response_schema="amp.agent-method-query.v1"),
    Endpoint("POST", "/api/agent/claims", claim,
             "Claim a shared resource for a while (409 names the holder and expiry).",
             scope="memory:write", request=CLAIM, response_schema="amp.collaboration-claim.v1"),
    Endpoint("POST", "/api/agent/claims/{claim_id}/release", release, "Release your claim.",
             scope="memory:write", request=EMPTY, response_schema="amp.collaboration-claim.v1"),
    Endpoint("GET", "/api/agent/claims", list_claims, "Active claims (?resource=).",
             scope="memory:read", response_schema="amp.collaboration-claims.v1"),
]
