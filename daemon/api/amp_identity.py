"""Who is calling, agent registration by pairing code, runtime profile and project probe."""

from __future__ import annotations

from typing import Annotated, Any

from aiohttp import web
from pydantic import Field

from daemon.api.amp_updates import with_notice
from daemon.endpoints import Call, Endpoint
from daemon.request_models import RequestModel
from daemon.responses.amp_identity import (
    AgentBindingsAnswer,
    AgentRuntimeProfileAnswer,
    IdentityAnswer,
    ProjectBindingAnswer,
    SessionAnswer,
)
from daemon.runtime.access import public_identity


class RepositoryPlace(RequestModel):
    """Where the runtime works: the repository fields both requests below carry."""

    cwd: str | None = Field(None, max_length=1000)
    repo_root: str | None = Field(None, max_length=1000)
    git_remote: str | None = Field(None, max_length=1000)
    git_branch: str | None = Field(None, max_length=200)
    git_head: str | None = Field(None, max_length=120)
    project_files: list[Annotated[str, Field(max_length=1000)]] | None = Field(
        default_factory=list, max_length=500, description="files the runtime sees at the repository's top"
    )


# The MemoryCloud reference's fields (AgentRuntimeProfileRequest, ProjectProbeRequest).
class AgentRuntimeProfile(RepositoryPlace, title="agent-runtime-profile"):
    runtime: str | None = Field("generic", max_length=80, description="codex, claude_code, ...")
    runtime_version: str | None = Field(None, max_length=120)
    supports_files: bool | None = True
    supports_mcp: bool | None = False
    supports_project_rules: bool | None = Field(
        True, description="whether the runtime reads project rule files (AGENTS.md, rules ...)"
    )
    metadata: dict[str, Any] | None = Field(default_factory=dict)


class ProjectProbe(RepositoryPlace, title="project-probe"):
    workspace_id: str | None = Field(None, max_length=80)
    project_key: str | None = Field(
        None, max_length=160, description="empty: derived from repo_root, cwd or git_remote, else the default"
    )
    runtime: str | None = Field("generic", max_length=80)
    environment: dict[str, Any] | None = Field(default_factory=dict)


async def me(request: web.Request, call: Call) -> dict[str, Any]:
    identity = call.require_identity()
    return with_notice(call, {"schema": "amp.identity.v1", "user": public_identity(identity)})


async def session(request: web.Request, call: Call) -> dict[str, Any]:
    if call.identity is None:
        return {"schema": "amp.session.v1", "authenticated": False, "user": None}
    return with_notice(
        call, {"schema": "amp.session.v1", "authenticated": True, "user": public_identity(call.identity)}
    )


async def bindings_me(request: web.Request, call: Call) -> dict[str, Any]:
    identity = call.require_identity()
    workspaces, bindings = call.services.projects.bindings_of(identity)
    return with_notice(
        call,
        {
            "schema": "amp.agent-bindings.v1",
            "agent": {"id": identity["id"], "handle": identity["name"], "auth_type": identity["auth_type"]},
            "workspaces": workspaces,
            "bindings": bindings,
            "pending_requests": [],
        },
        always=True,
    )


async def profile(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.projects.profile(call.require_identity(), call.body, call.base_url)


async def probe(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.projects.probe(call.require_identity(), call.body, call.base_url)


async def agent_start(request: web.Request, call: Call) -> web.Response:
    """Plain-text instructions an agent can follow to connect (seed 000's Quick Connect)."""
    base = call.base_url
    text = f"""# Connect to MemoryCloud Companion (local)

This daemon keeps memory on this machine. To connect:

1. Ask the person you work for to run `memorycloud agent pair --name <your-name> --runtime <runtime>`
   and give you the pairing code it prints (valid 10 minutes, usable once).
2. POST {base}/api/agent/register with {{"pairing_code": "<code>"}}; keep the returned api_key
   private (never write it into a repository).
3. POST {base}/api/agent/runtime/profile, then {base}/api/agent/project/probe.
4. POST {base}/api/agent/bootstrap/context and inject summary_markdown; keep receipt_id.
5. Write small changes with POST {base}/api/agent/memory-delta and the header
   X-AMP-Context-Receipt: <receipt_id>. Fetch details through retrieval_handles.

Writing startup items or .amp/memory-config.json (startup_setup) needs the person's approval.
Machine-readable API description: {base}/api/protocol/schema
"""
    return web.Response(text=text, content_type="text/plain")


# The names the reference tests (tests/daemon/test_*_reference.py) read the bodies by.
PROBE, PROFILE = ProjectProbe, AgentRuntimeProfile

ENDPOINTS = [
    Endpoint("GET", "/api/me", me, "The calling identity.", response=IdentityAnswer),
    Endpoint(
        "GET",
        "/api/session",
        session,
        "Whether the key is valid, and whose (never 401).",
        auth="optional",
        response=SessionAnswer,
    ),
    Endpoint(
        "GET",
        "/api/agent/bindings/me",
        bindings_me,
        "The caller's workspaces and project bindings.",
        response=AgentBindingsAnswer,
    ),
    # Any key may describe its runtime (the reference checks no scope here).
    Endpoint(
        "POST",
        "/api/agent/runtime/profile",
        profile,
        "Submit the runtime type and capabilities.",
        request=AgentRuntimeProfile,
        response=AgentRuntimeProfileAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/project/probe",
        probe,
        "Bind a local repository to a workspace project.",
        scope="memory:read",
        request=ProjectProbe,
        response=ProjectBindingAnswer,
    ),
    Endpoint("GET", "/agent/start", agent_start, "How an agent connects (text).", auth="none"),
]
