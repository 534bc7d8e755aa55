"""GET /api/protocol/schema: a machine-readable description built from the endpoint list."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon import __version__, keys
from daemon.api import reference_differences
from daemon.endpoints import Call, Endpoint
from daemon.responses.protocol import ProtocolSchemaAnswer
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


MANIFEST_EXAMPLE = {
    "schema": "amp.memory.v1",
    "title": "Ops Handbook",
    "summary": "How the team ships",
    "version": "1.0.0",
    "license": "CC-BY-4.0",
    "provenance": {"source_type": "self_authored"},
    "tags": ["ops"],
    "files": {"MEMORY.md": {"sha256": "<hex of the file>", "bytes": 0}},
}
SUITE_MANIFEST_EXAMPLE = {
    "schema": "amp.memory-suite.v1",
    "suite_id": "ops-handbook",
    "title": "Ops Handbook",
    "version": "1.0.0",
    "license": "CC-BY-4.0",
    "provenance": {"source_type": "self_authored"},
    "ontology": [
        {"id": "long_term_markdown", "path": "MEMORY.md"},
        {"id": "working_markdown", "path": "memory/*.md"},
        {"id": "reflection_markdown", "path": "DREAMS.md"},
    ],
}


def _suite_format() -> dict[str, Any]:
    """The memory archive format (amp.memory.v1), which the reference's schema describes."""
    return {
        "suite_schema": "amp.memory-suite.v1",
        "agent_binding_schema": "amp.agent-bindings.v1",
        "concepts": {
            "memory_suite": "portable memory: long-term, working and reflection layers",
            "context_pack": "what an agent session starts from (amp.context-pack.v1)",
            "memory_delta": "a change written back with a receipt (amp.memory-delta.v1)",
        },
        "required_files": ["manifest.json"],
        "recommended_files": [
            "suite/manifest.json",
            "MEMORY.md",
            "memory/YYYY-MM-DD.md",
            "DREAMS.md",
            "agent.instructions.md",
            "install/openclaw.json",
        ],
        "manifest_required_fields": ["schema", "title", "version", "license", "provenance"],
        "manifest_example": MANIFEST_EXAMPLE,
        "suite_manifest_example": SUITE_MANIFEST_EXAMPLE,
        "install_mapping": {
            "target": "openclaw",
            "long_term": "MEMORY.md",
            "work_memory": "memory/*.md",
            "reflections": "DREAMS.md",
        },
        "compatibility": {"openclaw": True, "generic_agent": True, "codex_skill_runtime": True},
        "tool_install": {"skills": "/api/agent/skills", "pull": "/api/agent/skills/{skill_id}/pull"},
        "memory_takeover": {
            "import": "POST /api/memories/import (a zip; legacy capsules too)",
            "needs": "the person's approval to import memories from elsewhere",
        },
        "agent_binding": {
            "register": "POST /api/agent/register with the person's pairing code",
            "bindings": "GET /api/agent/bindings/me",
        },
        # Handoffs between accounts, memory integrations and local-deployment catalogs are
        # features of the hosted service; this daemon has none (reference_differences).
        **{key: None for key in NO_SUCH_FEATURE},
    }


NO_SUCH_FEATURE = (
    "handoff_schema",
    "delegated_handoff_schema",
    "agent_binding_request_schema",
    "memory_takeover_policy_schema",
    "memory_integration_schema",
    "memory_integration_recommendation_schema",
    "memory_local_deployment_schema",
    "memory_local_route_schema",
    "memory_integrations",
    "memory_local_deployments",
    "project_handoff",
)


async def protocol_schema(request: web.Request, call: Call) -> dict[str, Any]:
    endpoints = request.app[keys.ENDPOINTS]
    return {
        # The reference names its archive format here (seed 000 gives no schema id).
        "schema": "amp.memory.v1",
        **_suite_format(),
        "reference_differences": reference_differences.describe(),
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
            "statuses": {
                "400": "malformed request or JSON",
                "401": "missing or invalid key",
                "403": "scope, ownership or guard refusal",
                "404": "unknown id",
                "409": "conflict",
                "413": "body too large",
                "422": "missing field or wrong type",
                "428": "bootstrap receipt required",
            },
        },
    }


ENDPOINTS = [
    Endpoint(
        "GET",
        "/api/protocol/schema",
        protocol_schema,
        "This description: schemas, endpoints, auth and errors.",
        auth="none",
        response=ProtocolSchemaAnswer,
    ),
]
