"""agent-memory1.0 (seed 004) at the daemon's root paths, shaped like the public
agent-memory server: POST bodies with user_id/scope_id (default "__default__"), unknown
fields ignored but named (``warnings``), ``{"results": [...]}``, errors as ``{"detail": ...}``.

Every field the seed's skill sends is declared here, under the name its client uses
(tests/daemon/test_mem1_skill_contract.py keeps the skill's bodies as data)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from daemon import keys
from daemon.dialects import ErrorEnvelope
from daemon.endpoints import Call, Endpoint
from daemon.runtime.mem1 import settle_summaries
from daemon.validation import Field, RequestSchema

D = "__default__"
WHO = (Field("user_id", str, default=D, max_length=256), Field("scope_id", str, default=D, max_length=128))
SEARCH = RequestSchema(
    "mem1-search",
    (
        Field("query", str, required=True, max_length=20000),
        Field("num", int, default=10, minimum=1, maximum=200),
        Field("threshold", float, default=0.3),
        *WHO,
    ),
)
PAGE = RequestSchema(
    "mem1-page",
    (
        # The skill's client pages with "page_num"; the server's own name is "page_idx".
        Field("page_idx", int, default=1, aliases=("page_num",)),
        Field("page_size", int, default=10),
        Field("memory_type", str, max_length=40),
        *WHO,
    ),
)
ADD = RequestSchema(
    "mem1-add-messages",
    (
        Field("messages", list, required=True, items=dict, max_items=1000),
        Field("session_id", str, default=D, max_length=256),
        Field("mem_variables", list, default=[], items=dict, max_items=100),
        Field("enable_long_term_mem", bool, default=True),
        Field("enable_user_profile", bool, default=True),
        Field("enable_semantic_memory", bool, default=True),
        Field("enable_episodic_memory", bool, default=True),
        Field("enable_summary_memory", bool, default=True),
        *WHO,
    ),
)
UPDATE = RequestSchema(
    "mem1-update",
    (Field("mem_id", str, required=True, max_length=80), Field("memory", str, required=True), *WHO),
)
DELETE = RequestSchema("mem1-delete", (Field("mem_id", str, required=True, max_length=80), *WHO))
BATCH = RequestSchema(
    "mem1-batch-delete",
    (Field("mem_ids", list, required=True, items=str, max_items=1000, max_length=80), *WHO),
)
GET_VARS = RequestSchema("mem1-get-variables", (Field("names", list, items=str, max_items=500), *WHO))
UPDATE_VARS = RequestSchema("mem1-update-variables", (Field("variables", dict, required=True), *WHO))
DELETE_VARS = RequestSchema(
    "mem1-delete-variables", (Field("names", list, required=True, items=str, max_items=500), *WHO)
)
# The seed's trace names only the message id; the skill's client adds its user_id (never a
# scope_id). Each filter given must match; one left out matches any value.
MESSAGE = RequestSchema(
    "mem1-message",
    (
        Field("message_id", str, required=True, max_length=80),
        Field("user_id", str, max_length=256, description="optional: only this user's message"),
        Field("scope_id", str, max_length=128, description="optional: only this scope's message"),
    ),
)
# Seed 004: "delete one user's memories by scope"; user_id + scope_id isolate as everywhere.
SCOPE = RequestSchema(
    "mem1-delete-scope",
    (Field("scope_id", str, required=True, max_length=128), Field("user_id", str, default=D, max_length=256)),
)


def _svc(call: Call):
    return call.services.mem1


async def health(request: web.Request, call: Call) -> dict[str, Any]:
    """The agent-memory server's answer (what mem1 clients check), plus the MemoryCloud
    reference's keys (``ok``, ``service``, ``time``): both kinds of client probe this path."""
    return {
        "status": "healthy",
        "message": "Memory Engine API is running",
        "ok": True,
        "service": "memorycloud-companion",
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


async def add_messages(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).add_messages(call.require_identity(), call.body)


async def search_memory(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).search_memory(call.body)


async def search_summary(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).search_summary(call.body)


async def page(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).page(call.body, with_total=False)


async def page_with_total(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).page(call.body, with_total=True)


async def update_mem(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).update(call.require_identity(), call.body)


async def delete_mem(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).delete(call.require_identity(), call.body)


async def batch_delete(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).batch_delete(call.require_identity(), call.body)


async def get_variables(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).get_variables(call.body)


async def update_variables(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).update_variables(call.body)


async def delete_variables(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).delete_variables(call.body)


async def get_message(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).message(call.body["message_id"], call.body.get("user_id"), call.body.get("scope_id"))


async def delete_scope(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).delete_scope(call.require_identity(), call.body)


R, W = "memory:read", "memory:write"
ENDPOINTS = [
    Endpoint("GET", "/health", health, "agent-memory1.0 health check.", auth="none"),
    Endpoint(
        "POST", "/add_messages/", add_messages, "Store messages; derive memories.", scope=W, request=ADD
    ),
    Endpoint(
        "POST",
        "/search_memory/",
        search_memory,
        "Search profile/semantic/episodic memories.",
        scope=R,
        request=SEARCH,
    ),
    Endpoint(
        "POST",
        "/search_user_history_summary/",
        search_summary,
        "Search session summaries.",
        scope=R,
        request=SEARCH,
    ),
    Endpoint("POST", "/get_user_mem_by_page/", page, "Memories by page.", scope=R, request=PAGE),
    Endpoint(
        "POST",
        "/get_user_mem_by_page_with_total/",
        page_with_total,
        "Memories by page with the real total, timestamps and source_id.",
        scope=R,
        request=PAGE,
    ),
    Endpoint(
        "POST", "/update_mem_by_id/", update_mem, "Replace a memory's content.", scope=W, request=UPDATE
    ),
    Endpoint("POST", "/delete_mem_by_id/", delete_mem, "Delete a memory.", scope=W, request=DELETE),
    Endpoint("POST", "/batch_delete_mem/", batch_delete, "Delete several memories.", scope=W, request=BATCH),
    Endpoint("POST", "/get_variables/", get_variables, "Profile variables.", scope=R, request=GET_VARS),
    Endpoint(
        "POST",
        "/update_variables/",
        update_variables,
        "Create or update variables.",
        scope=W,
        request=UPDATE_VARS,
    ),
    Endpoint(
        "POST",
        "/delete_variables/",
        delete_variables,
        "Delete variables by name.",
        scope=W,
        request=DELETE_VARS,
    ),
    Endpoint(
        "POST",
        "/get_message_by_id/",
        get_message,
        "Trace a message (found: false if unknown).",
        scope=R,
        request=MESSAGE,
    ),
    Endpoint(
        "POST",
        "/delete_mem_by_scope/",
        delete_scope,
        "Delete every memory in a scope.",
        scope=W,
        request=SCOPE,
    ),
]
MEM1_PATHS = frozenset(e.path for e in ENDPOINTS)


def _error_body(status: int, error_type: str, message: str, detail: Any) -> dict[str, Any]:
    """agent-memory1.0 clients read FastAPI's {"detail": ...}: a string, or for a bad field
    the list form [{"loc": [...], "msg": ..., "type": ...}]."""
    field = detail.get("field") if isinstance(detail, dict) else None
    missing = detail.get("missing_fields") if isinstance(detail, dict) else None
    if status == 422 and (field or missing):
        return {
            "detail": [{"loc": ["body", f], "msg": message, "type": error_type} for f in (missing or [field])]
        }
    return {"detail": message}


def _settle_summaries(request: web.Request, endpoint: Endpoint) -> None:
    """mem1 session summaries are rebuilt after the turns that change them: any request that
    could read them (all but those turns) first has them brought up to date."""
    settle_summaries(request.app[keys.SERVICES], endpoint.path)


ERROR_ENVELOPE = ErrorEnvelope("Mem1Error", MEM1_PATHS.__contains__, _error_body)
BEFORE_REQUEST = (_settle_summaries,)
