"""Memory Briefs and their events."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from daemon.endpoints import Call, Endpoint
from daemon.runtime.sync_gate import GatedWrite, write_headers
from daemon.validation import Field, RequestSchema

BRIEF = RequestSchema(
    "memory-brief",
    (
        Field("task", str, required=True, min_length=1, max_length=5000),
        Field("workspace_id", str, max_length=80),
        Field("project_key", str, max_length=160),
        Field("handoff_code", str, max_length=512),
        Field("current_context", str, max_length=20000),
        Field("session_fingerprint", str, max_length=200),
        Field("environment", dict, default={}),
        Field("max_items", int, default=8, minimum=1, maximum=50),
    ),
)

EVENT = RequestSchema(
    "memory-brief-event",
    (
        Field("summary", str, required=True, min_length=1, max_length=4000),
        Field(
            "event_type",
            str,
            default="task_event",
            min_length=1,
            max_length=80,
            description="decision, changed_files, failure, handoff_ready, task_event",
        ),
        Field("importance", int, default=3, minimum=1, maximum=5),
        Field("payload", dict, default={}),
    ),
)


async def create_brief(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.briefs.create(call.require_identity(), call.body, call.base_url)


async def get_brief(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.briefs.get(call.require_identity(), request.match_info["brief_id"], call.base_url)


async def add_event(request: web.Request, call: Call) -> dict[str, Any]:
    identity = call.require_identity()
    brief_id = request.match_info["brief_id"]
    # The gate comes before the brief is looked up, as in the reference: a gated agent gets
    # 409 even for an unknown brief (the resume then answers 404).
    warning = call.services.gate.admit(
        identity,
        GatedWrite(
            "memory_brief_event",
            "POST",
            request.path,
            {"brief_id": brief_id},
            call.body,
            call.body["importance"],
            headers=write_headers(request.headers),
        ),
        call.base_url,
    )
    call.services.briefs.readable_brief(identity, brief_id)
    result = call.services.briefs.add_event(identity, brief_id, call.body, call.base_url)
    return {**result, "update_notice": warning} if warning else result


ENDPOINTS = [
    Endpoint(
        "POST",
        "/api/agent/memory-brief",
        create_brief,
        "A task brief from workspace, project, hand-off and recent events (+ context pack).",
        scope="memory:read",
        request=BRIEF,
        response_schema="amp.memory-brief.v1",
        idempotent=True,
    ),
    Endpoint(
        "GET",
        "/api/agent/memory-briefs/{brief_id}",
        get_brief,
        "A brief and its event stream.",
        scope="memory:read",
        response_schema="amp.memory-brief.v1",
    ),
    Endpoint(
        "POST",
        "/api/agent/memory-briefs/{brief_id}/events",
        add_event,
        "Write back a key event (mirrored into memory deltas and summary cards).",
        scope="memory:write",
        request=EVENT,
        response_schema="amp.memory-brief-event.v1",
        idempotent=True,
    ),
]
