"""Adaptive workspace memory: router select and form submit."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon.endpoints import Call, Endpoint
from daemon.runtime.sync_gate import GatedWrite
from daemon.runtime.adaptive import FORMS_BY_TYPE
from daemon.validation import Field, RequestSchema, ValidationFailed

SELECT = RequestSchema("memory-route", (
    Field("task", str, required=True, min_length=1, max_length=5000),
    Field("what_i_remember", str, required=True, min_length=1, max_length=20000),
    Field("workspace_id", str, max_length=80),
    Field("project_key", str, max_length=160),
    Field("memory_type", str, max_length=80, description="skip routing: " + ", ".join(FORMS_BY_TYPE)),
    Field("environment", dict, default={}),
))

SUBMIT = RequestSchema("memory-form-submit", (
    Field("payload", dict, required=True),
    Field("visibility", str, default="workspace", description="private or workspace"),
    Field("importance", int, default=4, minimum=1, maximum=5),
))


async def select(request: web.Request, call: Call) -> dict[str, Any]:
    kind = call.body.get("memory_type")
    if kind and kind not in FORMS_BY_TYPE:
        raise ValidationFailed(f"field 'memory_type' must be one of: {', '.join(FORMS_BY_TYPE)}",
                               details={"field": "memory_type"})
    return call.services.adaptive.select(call.require_identity(), call.body, call.base_url)


async def submit(request: web.Request, call: Call) -> dict[str, Any]:
    if call.body["visibility"] not in ("private", "workspace"):
        raise ValidationFailed("field 'visibility' must be 'private' or 'workspace'",
                               details={"field": "visibility"})
    identity = call.require_identity()
    run_id = request.match_info["run_id"]
    call.services.adaptive.prepare_submit(identity, run_id, call.body)
    warning = call.services.gate.admit(identity, GatedWrite(
        "adaptive_memory_submit", "POST", request.path, {"run_id": run_id}, call.body,
        call.body["importance"]))
    result = call.services.adaptive.submit(identity, run_id, call.body)
    return {**result, "update_notice": warning} if warning else result


ENDPOINTS = [
    Endpoint("POST", "/api/memory/router/select", select,
             "Route what you remember to a memory form (a run).", scope="memory:write",
             request=SELECT, response_schema="amp.memory-route.v1"),
    Endpoint("POST", "/api/memory/forms/{run_id}/submit", submit,
             "Submit the filled form; stores a workspace memory that enters context packs.",
             scope="memory:write", request=SUBMIT, response_schema="amp.adaptive-memory.v1"),
]
