"""Adaptive workspace memory: the forms, router select, a run, and form submit."""

from __future__ import annotations

from typing import Any, Literal

from aiohttp import web
from pydantic import Field

from daemon.endpoints import Call, Endpoint
from daemon.request_models import Int, RequestModel, at_least
from daemon.responses.amp_adaptive import (
    AdaptiveMemoryAnswer,
    MemoryFormAnswer,
    MemoryRouteAnswer,
    MemoryTemplatesAnswer,
)
from daemon.runtime.adaptive import VISIBILITIES, submit_importance
from daemon.runtime.memory_forms import templates
from daemon.runtime.sync_gate import GatedWrite, write_headers
from state.errors import InvalidRequest

# The memory forms' types (daemon/runtime/memory_forms.py FORMS_BY_TYPE, in its order; a test
# keeps the two the same): written out so that the document lists them.
MemoryType = Literal[
    "decision_memory",
    "failure_memory",
    "procedure_memory",
    "profile_memory",
    "code_memory",
    "task_execution_memory",
    "entity_memory",
    "conversation_memory",
    "collaboration_memory",
    "project_memory",
]


# The MemoryCloud reference's fields (MemoryRouteRequest, MemoryFormSubmitRequest); memory_type
# and importance are ours.
class MemoryRoute(RequestModel, title="memory-route"):
    task: str = Field(max_length=5000, pattern=at_least(4))
    what_i_remember: str = Field(max_length=20_000, pattern=at_least(1))
    environment: dict[str, Any] | None = Field(default_factory=dict)
    workspace_id: str | None = Field(None, max_length=80)
    project_key: str | None = Field(None, max_length=120)
    memory_type: MemoryType | None = Field(None, description="skip routing: the form to fill")


class MemoryFormSubmit(RequestModel, title="memory-form-submit"):
    payload: dict[str, Any]
    visibility: str | None = Field(
        "workspace",
        max_length=20,
        description="private, workspace or public (a local workspace is never public beyond this machine: public is stored like workspace)",
        json_schema_extra={"enum": [*VISIBILITIES, None]},  # refused with the reference's 400
    )
    importance: Int | None = Field(
        None, ge=1, le=5, description="default: 4 for workspace and public, 3 for private (as the reference)"
    )


async def list_templates(request: web.Request, call: Call) -> dict[str, Any]:
    return {"schema": "amp.memory-templates.v1", "items": templates()}


async def select(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.adaptive.select(call.require_identity(), call.body, call.base_url)


async def get_form(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.adaptive.form(call.require_identity(), request.match_info["run_id"], call.base_url)


async def submit(request: web.Request, call: Call) -> dict[str, Any]:
    if call.body["visibility"] not in VISIBILITIES:
        raise InvalidRequest(
            f"field 'visibility' must be one of: {', '.join(VISIBILITIES)}", details={"field": "visibility"}
        )
    identity = call.require_identity()
    run_id = request.match_info["run_id"]
    # The gate comes before the run is looked up, as the reference orders it: a gated agent
    # is told to update first whatever the run, and its write is kept as it was sent.
    warning = call.services.gate.admit(
        identity,
        GatedWrite(
            "adaptive_memory_submit",
            "POST",
            request.path,
            {"run_id": run_id},
            call.body,
            submit_importance(call.body),
            headers=write_headers(request.headers),
        ),
        call.base_url,
    )
    result = call.services.adaptive.submit(identity, run_id, call.body)
    return {**result, "update_notice": warning} if warning else result


# The names the reference tests (tests/daemon/test_*_reference.py) read the bodies by.
SELECT, SUBMIT = MemoryRoute, MemoryFormSubmit

ENDPOINTS = [
    Endpoint(
        "GET",
        "/api/memory/templates",
        list_templates,
        "The memory forms, keyed by memory type.",
        auth="none",
        response=MemoryTemplatesAnswer,
    ),
    Endpoint(
        "POST",
        "/api/memory/router/select",
        select,
        "Route what you remember to a memory form (a run).",
        scope="memory:write",
        request=MemoryRoute,
        response=MemoryRouteAnswer,
    ),
    Endpoint(
        "GET",
        "/api/memory/forms/{run_id}",
        get_form,
        "A run: its form, the router's result, selected or stored.",
        response=MemoryFormAnswer,
    ),
    Endpoint(
        "POST",
        "/api/memory/forms/{run_id}/submit",
        submit,
        "Submit the filled form; stores a workspace memory that enters context packs.",
        scope="memory:write",
        request=MemoryFormSubmit,
        response=AdaptiveMemoryAnswer,
    ),
]
