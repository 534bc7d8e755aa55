"""GET /api/protocol/schema: a machine-readable description built from the endpoint list."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon import __version__, keys
from daemon.endpoints import Call, Endpoint
from daemon.runtime.constants import PROTOCOL_VERSION, RUNTIME_VERSION

SCHEMAS = {
    "amp.context-pack.v1": "Runtime Context Pack: summary_markdown, retrieval_handles, receipt.",
    "amp.bootstrap-receipt.v1": "Receipt of a context pack; send its id as X-AMP-Context-Receipt.",
    "amp.bootstrap-verify.v1": "Result of checking a receipt (active, expired, mismatch).",
    "amp.bootstrap-required.v1": "428 body: a memory delta came without a usable receipt.",
    "amp.memory-delta.v1": "A small change written back during work.",
    "amp.memory-brief.v1": "Task brief: brief_markdown, source_counts, context_pack, receipt_id.",
    "amp.memory-brief-event.v1": "An event written back to a brief (mirrored into deltas).",
    "amp.project-binding.v1": "A repository bound to a workspace project.",
    "amp.agent-runtime-profile.v1": "An agent runtime's type and capabilities.",
    "amp.memory-route.v1": "Adaptive memory routing result with the form to fill.",
    "amp.adaptive-memory.v1": "A submitted adaptive workspace memory.",
    "amp.memory-detail.v1": "One memory record.",
    "amp.memory-search.v1": "Hybrid search results.",
    "amp.agent-bindings.v1": "The caller's workspaces and project bindings.",
    "amp.identity.v1": "The calling identity.",
    "amp.session.v1": "Whether a key is valid.",
    "amp.agent-registration.v1": "A new agent key, issued for an owner's pairing code.",
    "amp.error.v1": "Error envelope: {error: {id, type, status, message, detail, path, time}, detail}.",
}


async def protocol_schema(request: web.Request, call: Call) -> dict[str, Any]:
    endpoints = request.app[keys.ENDPOINTS]
    return {
        "schema": "amp.protocol-schema.v1",
        "server": {"name": "memorycloud-companion", "version": __version__},
        "runtime_version": RUNTIME_VERSION,
        "protocol_version": PROTOCOL_VERSION,
        "auth": {
            "header": "Authorization: Bearer <api_key>",
            "auth_types": {"human": "the owner (CLI, TUI)", "agent": "an agent key with scopes"},
            "scopes": ["memory:read", "memory:write", "agent:sync", "skill:install", "catalog:read"],
        },
        "schemas": SCHEMAS,
        "endpoints": [endpoint.describe() for endpoint in endpoints],
        "errors": {
            "envelope": "amp.error.v1",
            "statuses": {"400": "malformed request or JSON", "401": "missing or invalid key",
                         "403": "scope, ownership or guard refusal", "404": "unknown id",
                         "409": "conflict", "413": "body too large",
                         "422": "missing field or wrong type", "428": "bootstrap receipt required"},
        },
    }


ENDPOINTS = [
    Endpoint("GET", "/api/protocol/schema", protocol_schema,
             "This description: schemas, endpoints, auth and errors.", auth="none",
             response_schema="amp.protocol-schema.v1"),
]
