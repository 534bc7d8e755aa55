"""Owner-only local API (CLI and TUI) and the unauthenticated health check."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated, Any

from aiohttp import web
from pydantic import Field

from daemon import __version__, keys
from daemon.api.amp_updates import INTENT_STATUSES
from daemon.endpoints import Call, Endpoint
from daemon.request_models import Empty, RequestModel, at_least
from daemon.responses.amp_updates import PlatformUpdateCheckAnswer
from daemon.responses.local import (
    AgentsAnswer,
    ApprovedPlanAnswer,
    ConflictsAnswer,
    DaemonStatusAnswer,
    HealthzAnswer,
    ListSyncIntentsAnswer,
    LocalPlanAnswer,
    NewAgentAnswer,
    PublishUpdateAnswer,
    ResolveConflictAnswer,
    RevokedAgentAnswer,
    StartupPlansAnswer,
    UpdatesAnswer,
)
from daemon.validation import Query
from state.errors import ValidationFailed
from state.startup_records import StartupPlanRecord


async def health(request: web.Request, call: Call) -> dict[str, Any]:
    """Liveness only: reveals nothing but that the daemon is up."""
    return {"status": "ok", "service": "memorycloud-companion", "version": __version__}


async def status(request: web.Request, call: Call) -> dict[str, Any]:
    app = request.app
    settings = app[keys.SETTINGS]
    admin = call.services.local_admin
    facts = admin.store_facts()
    return {
        "schema": "memorycloud.daemon-status.v1",
        "version": __version__,
        "pid": os.getpid(),
        "uptime_seconds": round(time.time() - app[keys.STARTED_AT], 1),
        "host": settings.host,
        "port": settings.port,
        "database": facts["database"],
        "store_bytes": facts["store_bytes"],
        "versions": facts["versions"],
        "embedder": facts["embedder"],
        "counts": admin.counts(),
        "jobs": app[keys.JOBS].describe() if keys.JOBS in app else [],
        # The rebuild after a tokenizer or embedder change, if one is under way.
        "search_index": facts["search_index"],
        "role": settings.role,
        "upstream": upstream_summary(call.services),
        "inbox": admin.inbox(),
    }


def upstream_summary(services: Any) -> dict[str, Any]:
    """The upstream line of the status: where, how far behind, last success and error."""
    status = services.upstream.status()
    if not status["connected"]:
        return {"connected": False}
    return {
        key: status[key]
        for key in ("connected", "url", "handle", "backlog", "last_success_at", "last_error", "last_error_at")
    }


class StartupDecision(RequestModel, title="startup-decision"):
    overwrite: bool | None = Field(
        False, description="approve: replace regions edited by hand (the person's explicit choice)"
    )


PLAN_STATUSES = (
    "pending_approval",
    "rejected",
    "conflict",
    "applied",
    "installed",
    "fallback_active",
    "removed",
)
PLAN_STATUS = Query("status", choices=PLAN_STATUSES)
CONFLICT_STATUS = Query("status", choices=("open", "resolved", "all"), default="open")
INTENT_STATUS = Query("status", choices=INTENT_STATUSES)


def _cache_age(plan: StartupPlanRecord) -> float | None:
    """Seconds since the plan's fallback cache was written (None if there is none)."""
    cache = (plan["body"].get("fallback_cache") or {}).get("path")
    try:
        return round(time.time() - (Path(plan["repo_root"]) / cache).stat().st_mtime, 1) if cache else None
    except OSError:
        return None


async def list_plans(request: web.Request, call: Call) -> dict[str, Any]:
    status = PLAN_STATUS.read(request)
    plans = call.services.startup.plans(status)
    return {
        "schema": "memorycloud.startup-plans.v1",
        "plans": [
            {
                **p["body"],
                "status": p["status"],
                "created_at": p["created_at"],
                "applied_at": p["applied_at"],
                "confirmed_at": p["confirmed_at"],
                "last_refresh_at": p["last_refresh_at"],
                "fallback_cache_age_seconds": _cache_age(p),
                "hook": call.services.startup.runs.describe(p),
            }
            for p in plans
        ],
    }


async def get_plan(request: web.Request, call: Call) -> dict[str, Any]:
    plan = call.services.startup.plan(request.match_info["plan_id"])
    return {
        **plan["body"],
        "status": plan["status"],
        "created_at": plan["created_at"],
        "last_refresh_at": plan["last_refresh_at"],
        "hook": call.services.startup.runs.describe(plan),
    }


async def approve_plan(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.startup.approve(
        call.require_identity(), request.match_info["plan_id"], overwrite=call.body["overwrite"]
    )


async def reject_plan(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.startup.reject(call.require_identity(), request.match_info["plan_id"])


async def remove_plan(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.startup.remove(call.require_identity(), request.match_info["plan_id"])


async def list_conflicts(request: web.Request, call: Call) -> dict[str, Any]:
    status = CONFLICT_STATUS.read(request)
    return {
        "schema": "memorycloud.conflicts.v1",
        "conflicts": call.services.conflicts.listed(None if status == "all" else status),
    }


class AgentCreate(RequestModel, title="agent-create"):
    name: str = Field(max_length=80, pattern=at_least(1))
    runtime: str | None = Field("generic", max_length=40)
    scopes: list[Annotated[str, Field(max_length=40)]] | None = Field(None, max_length=10)


async def list_agents(request: web.Request, call: Call) -> dict[str, Any]:
    return {"schema": "memorycloud.agents.v1", "agents": call.services.local_admin.agents()}


async def create_agent(request: web.Request, call: Call) -> dict[str, Any]:
    agent, key = call.services.local_admin.create_agent(
        call.body["name"], call.body["runtime"], call.body.get("scopes")
    )
    return {**agent, "api_key": key, "key_notice": "Shown once: give it to the agent's secret store."}


async def revoke_agent(request: web.Request, call: Call) -> dict[str, Any]:
    agent = call.services.updates.agent(request.match_info["agent"])
    return call.services.local_admin.revoke_agent(agent)


class ConflictResolution(RequestModel, title="conflict-resolution"):
    action: str = Field(description="keep_current, take_incoming or merge")
    content: str | None = Field(None, max_length=500_000, description="the merged content (merge only)")


async def resolve_conflict(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.conflicts.resolve(
        call.require_identity(),
        request.match_info["conflict_id"],
        call.body["action"],
        call.body.get("content"),
    )


class PublishUpdate(RequestModel, title="publish-update"):
    title: str = Field(max_length=200, pattern=at_least(1))
    summary: str = Field(max_length=4000, pattern=at_least(1))
    severity: str | None = Field("recommended", description="required or recommended")
    version: str | None = Field(None, max_length=120, description="the update's own version (default: dated)")
    requires_repull: list[Annotated[str, Field(max_length=80)]] | None = Field(
        default_factory=list, max_length=20
    )
    next_actions: list[Annotated[str, Field(max_length=500)]] | None = Field(
        default_factory=list, max_length=20
    )


class AgentUpdateAck(RequestModel, title="agent-update-ack"):
    update_ids: list[Annotated[str, Field(max_length=80)]] | None = Field(
        default_factory=list, max_length=100
    )
    seen_version: str | None = Field(None, max_length=120)


async def list_updates(request: web.Request, call: Call) -> dict[str, Any]:
    updates = call.services.updates
    agents = call.services.local_admin.active_agents()
    return {
        **updates.manifest(),
        "schema": "memorycloud.updates.v1",
        "agents": [
            {"id": a["id"], "name": a["name"], "pending": [u["id"] for u in updates.pending(a)]}
            for a in agents
        ],
    }


async def publish_update(request: web.Request, call: Call) -> dict[str, Any]:
    if call.body["severity"] not in ("required", "recommended"):
        raise ValidationFailed(
            "field 'severity' must be 'required' or 'recommended'", details={"field": "severity"}
        )
    return call.services.updates.publish(call.require_identity(), call.body)


async def ack_for_agent(request: web.Request, call: Call) -> dict[str, Any]:
    """The owner acks on an agent's behalf (e.g. after updating its runtime by hand)."""
    agent = call.services.updates.agent(request.match_info["agent"])
    return call.services.updates.ack(
        agent, call.body["update_ids"], call.body.get("seen_version"), acked_by=call.require_identity()
    )


async def list_sync_intents(request: web.Request, call: Call) -> dict[str, Any]:
    status = INTENT_STATUS.read(request)
    return {
        "schema": "amp.sync-intents.v1",
        "sync_intents": call.services.gate.list(call.require_identity(), status),
    }


ENDPOINTS = [
    Endpoint(
        "GET",
        "/healthz",
        health,
        "Liveness check.",
        auth="none",
        response=HealthzAnswer,
    ),
    Endpoint(
        "GET",
        "/api/local/status",
        status,
        "Daemon status for the CLI and TUI.",
        owner_only=True,
        response=DaemonStatusAnswer,
    ),
    Endpoint(
        "GET",
        "/api/local/startup/plans",
        list_plans,
        "Startup-item plans (?status=pending_approval ...).",
        owner_only=True,
        query=(PLAN_STATUS,),
        response=StartupPlansAnswer,
    ),
    Endpoint(
        "GET",
        "/api/local/startup/plans/{plan_id}",
        get_plan,
        "One plan with its files.",
        owner_only=True,
        response=LocalPlanAnswer,
    ),
    Endpoint(
        "POST",
        "/api/local/startup/plans/{plan_id}/approve",
        approve_plan,
        "A person approves: the daemon writes the files.",
        owner_only=True,
        request=StartupDecision,
        response=ApprovedPlanAnswer,
    ),
    Endpoint(
        "POST",
        "/api/local/startup/plans/{plan_id}/reject",
        reject_plan,
        "A person rejects the plan.",
        owner_only=True,
        request=Empty,
        response=LocalPlanAnswer,
    ),
    Endpoint(
        "POST",
        "/api/local/startup/plans/{plan_id}/remove",
        remove_plan,
        "Undo an installation exactly.",
        owner_only=True,
        request=Empty,
        response=LocalPlanAnswer,
    ),
    Endpoint(
        "GET",
        "/api/local/agents",
        list_agents,
        "Agents with scopes and last write.",
        owner_only=True,
        response=AgentsAnswer,
    ),
    Endpoint(
        "POST",
        "/api/local/agents",
        create_agent,
        "Create an agent; its key is shown once.",
        owner_only=True,
        request=AgentCreate,
        response=NewAgentAnswer,
    ),
    Endpoint(
        "POST",
        "/api/local/agents/{agent}/revoke",
        revoke_agent,
        "Disable an agent: its keys stop working.",
        owner_only=True,
        request=Empty,
        response=RevokedAgentAnswer,
    ),
    Endpoint(
        "GET",
        "/api/local/updates",
        list_updates,
        "Known updates and what each agent still has pending.",
        owner_only=True,
        response=UpdatesAnswer,
    ),
    Endpoint(
        "POST",
        "/api/local/updates",
        publish_update,
        "Publish an update for your agents.",
        owner_only=True,
        request=PublishUpdate,
        response=PublishUpdateAnswer,
    ),
    Endpoint(
        "POST",
        "/api/local/agents/{agent}/updates/ack",
        ack_for_agent,
        "Ack updates for an agent (name or id).",
        owner_only=True,
        request=AgentUpdateAck,
        response=PlatformUpdateCheckAnswer,
    ),
    Endpoint(
        "GET",
        "/api/local/sync-intents",
        list_sync_intents,
        "Every agent's held-back writes (?status=blocked ...).",
        owner_only=True,
        query=(INTENT_STATUS,),
        response=ListSyncIntentsAnswer,
    ),
    Endpoint(
        "GET",
        "/api/local/conflicts",
        list_conflicts,
        "Conflicts waiting for a person (?status=open|resolved|all), side by side.",
        owner_only=True,
        query=(CONFLICT_STATUS,),
        response=ConflictsAnswer,
    ),
    Endpoint(
        "POST",
        "/api/local/conflicts/{conflict_id}/resolve",
        resolve_conflict,
        "Keep current, take incoming, or merge.",
        owner_only=True,
        request=ConflictResolution,
        response=ResolveConflictAnswer,
    ),
]
