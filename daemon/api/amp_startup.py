"""Startup items (seed 000): install plans and confirmation, plus the legacy native-hooks names.

Request fields are the MemoryCloud reference's (NativeHookInstallPlanRequest,
NativeHookConfirmRequest); plan_id is our earlier name of startup_item_id.
"""

from __future__ import annotations

from typing import Annotated, Any

from aiohttp import web
from pydantic import AliasChoices, Field

from daemon.endpoints import Call, Endpoint
from daemon.request_models import RequestModel, at_least
from daemon.responses.amp_startup import (
    NativeHookConfirmAnswer,
    NativeHookInstallPlanAnswer,
    StartupItemConfirmAnswer,
    StartupItemInstallPlanAnswer,
)
from state.errors import Forbidden


class StartupItemInstallPlan(RequestModel, title="startup-item-install-plan"):
    runtime: str | None = Field(
        "generic",
        max_length=80,
        description="claude_code, codex, gemini_cli, cursor, openclaw, generic (others: generic)",
    )
    workspace_id: str | None = Field(None, max_length=80, description="without project_binding_id")
    project_key: str | None = Field(
        None,
        max_length=160,
        description="without project_binding_id: the workspace's binding of this project",
    )
    project_binding_id: str | None = Field(
        None, max_length=80, description="from POST /api/agent/project/probe"
    )
    credential_ref: str | None = Field(
        "memorycloud_default",
        max_length=120,
        pattern=at_least(1),
        description="name of the key the launcher uses; never the key itself",
    )
    install_mode: str | None = Field(
        "", max_length=80, description="how to write the startup item; each runtime has one here"
    )


class StartupItemConfirm(RequestModel, title="startup-item-confirm"):
    startup_item_id: str = Field(
        max_length=80,
        pattern=at_least(4),
        validation_alias=AliasChoices("startup_item_id", "hook_install_id", "plan_id"),
        description="the plan's startup_item_id (legacy: hook_install_id; ours: plan_id)",
    )
    status: str | None = Field(
        "installed", max_length=40, description="installed, verified or fallback (anything else: installed)"
    )
    observed_signature: str | None = Field(None, max_length=200)
    hook_active: bool | None = Field(None, description="false if the runtime's hook does not run here")
    installed_paths: list[Annotated[str, Field(max_length=500)]] | None = Field(
        default_factory=list, max_length=50
    )
    notes: str | None = Field(None, max_length=1000)


# The reference needs both to plan (skill:install is the endpoint's scope).
PLAN_READ_SCOPE = "memory:read"


def _plan(call: Call, *, legacy: bool) -> dict[str, Any]:
    identity = call.require_identity()
    if identity["kind"] != "owner" and PLAN_READ_SCOPE not in identity["scopes"]:
        raise Forbidden(f"scope required: {PLAN_READ_SCOPE}", details={"required_scope": PLAN_READ_SCOPE})
    return call.services.startup.create_plan(identity, call.body, call.base_url, legacy=legacy)


async def install_plan(request: web.Request, call: Call) -> dict[str, Any]:
    return _plan(call, legacy=False)


async def legacy_install_plan(request: web.Request, call: Call) -> dict[str, Any]:
    return _plan(call, legacy=True)


async def confirm(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.startup.confirm(call.require_identity(), call.body, call.base_url)


async def legacy_confirm(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.startup.confirm(call.require_identity(), call.body, call.base_url, legacy=True)


# The names the reference tests (tests/daemon/test_*_reference.py) read the bodies by.
PLAN, CONFIRM = StartupItemInstallPlan, StartupItemConfirm

ENDPOINTS = [
    Endpoint(
        "POST",
        "/api/agent/startup-items/install-plan",
        install_plan,
        "What a startup item would write for a binding and runtime; pending a person's"
        " approval (needs memory:read too).",
        scope="skill:install",
        request=StartupItemInstallPlan,
        response=StartupItemInstallPlanAnswer,
    ),
    # Any key of the workspace may report what it sees (the reference checks no scope).
    Endpoint(
        "POST",
        "/api/agent/startup-items/confirm",
        confirm,
        "Check the signature and the files on disk; record installed or fallback_active.",
        request=StartupItemConfirm,
        response=StartupItemConfirmAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/native-hooks/install-plan",
        legacy_install_plan,
        "Legacy alias of startup-items/install-plan.",
        scope="skill:install",
        request=StartupItemInstallPlan,
        response=NativeHookInstallPlanAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/native-hooks/confirm",
        legacy_confirm,
        "Legacy alias of startup-items/confirm.",
        request=StartupItemConfirm,
        response=NativeHookConfirmAnswer,
    ),
]
