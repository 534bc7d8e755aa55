"""Startup items (seed 000): install plans and confirmation, plus the legacy native-hooks names."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon.endpoints import Call, Endpoint
from daemon.validation import Field, RequestSchema, ValidationFailed

PLAN = RequestSchema("startup-item-install-plan", (
    Field("runtime", str, required=True, min_length=1, max_length=40,
          description="claude_code, codex, gemini_cli, cursor, openclaw, generic"),
    Field("project_binding_id", str, required=True, min_length=1, max_length=80),
    Field("credential_ref", str, default="memorycloud_default", min_length=1, max_length=80,
          description="name of the key the launcher uses; never the key itself"),
))

CONFIRM = RequestSchema("startup-item-confirm", (
    Field("plan_id", str, max_length=80),
    Field("startup_item_id", str, max_length=80, description="alias of plan_id"),
    Field("observed_signature", str, max_length=200),
    Field("hook_active", bool, description="false if the runtime's hook does not run here"),
    Field("installed_paths", list, default=[], items=str, max_items=50, max_length=500),
    Field("notes", str, max_length=2000),
))


def _confirm_body(call: Call) -> dict[str, Any]:
    body = dict(call.body)
    body["plan_id"] = body.get("plan_id") or body.get("startup_item_id")
    if not body["plan_id"]:
        raise ValidationFailed("missing required field: plan_id (or startup_item_id)",
                               details={"missing_fields": ["plan_id"]})
    return body


async def install_plan(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.startup.create_plan(call.require_identity(), call.body, call.base_url)


async def legacy_install_plan(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.startup.create_plan(call.require_identity(), call.body, call.base_url,
                                             legacy=True)


async def confirm(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.startup.confirm(call.require_identity(), _confirm_body(call))


async def legacy_confirm(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.startup.confirm(call.require_identity(), _confirm_body(call), legacy=True)


ENDPOINTS = [
    Endpoint("POST", "/api/agent/startup-items/install-plan", install_plan,
             "What a startup item would write for a binding and runtime; pending a person's approval.",
             scope="memory:write", request=PLAN, response_schema="amp.startup-item-install-plan.v1"),
    Endpoint("POST", "/api/agent/startup-items/confirm", confirm,
             "Check the signature and the files on disk; record installed or fallback_active.",
             scope="memory:write", request=CONFIRM, response_schema="amp.startup-item-confirm.v1"),
    Endpoint("POST", "/api/agent/native-hooks/install-plan", legacy_install_plan,
             "Legacy alias of startup-items/install-plan.", scope="memory:write", request=PLAN,
             response_schema="amp.native-hook-install-plan.v1"),
    Endpoint("POST", "/api/agent/native-hooks/confirm", legacy_confirm,
             "Legacy alias of startup-items/confirm.", scope="memory:write", request=CONFIRM,
             response_schema="amp.native-hook-confirm.v1"),
]
