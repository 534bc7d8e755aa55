"""Memory Briefs and their events."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import Field

from daemon.endpoints import Call, Endpoint
from daemon.request_models import Int, RequestModel, at_least
from daemon.responses.amp_briefs import GetBriefAnswer, MemoryBriefAnswer, MemoryBriefEventAnswer
from daemon.runtime.briefs import brief_query
from daemon.runtime.sync_gate import GatedWrite, write_headers


class MemoryBrief(RequestModel, title="memory-brief"):
    task: str = Field(max_length=5000, pattern=at_least(1))
    workspace_id: str | None = Field(None, max_length=80)
    project_key: str | None = Field(None, max_length=160)
    handoff_code: str | None = Field(None, max_length=512)
    current_context: str | None = Field(None, max_length=20_000)
    session_fingerprint: str | None = Field(None, max_length=200)
    environment: dict[str, Any] | None = Field(default_factory=dict)
    max_items: Int | None = Field(8, ge=1, le=50)


class MemoryBriefEvent(RequestModel, title="memory-brief-event"):
    summary: str = Field(max_length=4000, pattern=at_least(1))
    event_type: str | None = Field(
        "task_event",
        max_length=80,
        pattern=at_least(1),
        description="decision, changed_files, failure, handoff_ready, task_event",
    )
    importance: Int | None = Field(3, ge=1, le=5)
    payload: dict[str, Any] | None = Field(default_factory=dict)


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
        request=MemoryBrief,
        response=MemoryBriefAnswer,
        idempotent=True,
        search_text=lambda call: brief_query(call.body),
    ),
    Endpoint(
        "GET",
        "/api/agent/memory-briefs/{brief_id}",
        get_brief,
        "A brief and its event stream.",
        scope="memory:read",
        response=GetBriefAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/memory-briefs/{brief_id}/events",
        add_event,
        "Write back a key event (mirrored into memory deltas and summary cards).",
        scope="memory:write",
        request=MemoryBriefEvent,
        response=MemoryBriefEventAnswer,
        idempotent=True,
    ),
]
