"""agent-memory1.0 (seed 004) at the daemon's root paths, shaped like the public
agent-memory server: POST bodies with user_id/scope_id (default "__default__"), unknown
fields ignored but named (``warnings``), ``{"results": [...]}``, errors as ``{"detail": ...}``.

Every field the seed's skill sends is declared here, under the name its client uses
(tests/daemon/test_mem1_skill_contract.py keeps the skill's bodies as data)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any

from aiohttp import web
from pydantic import AliasChoices, Field
from pydantic.json_schema import JsonDict

from daemon import keys
from daemon.dialects import ErrorEnvelope
from daemon.endpoints import Call, Endpoint, Handler
from daemon.request_models import Int, RequestModel, at_least
from daemon.responses.mem1 import (
    AddMessagesAnswer,
    BatchDeleteAnswer,
    DeleteVariablesAnswer,
    GetMessageAnswer,
    GetVariablesAnswer,
    HealthAnswer,
    MemChangeAnswer,
    PageAnswer,
    SearchMemoryAnswer,
    UpdateVariablesAnswer,
)
from daemon.runtime.mem1 import Mem1Service, settle_summaries
from state.identities import IdentityRecord

D = "__default__"


class Who(RequestModel):
    """Whose memory a request is about: every mem1 body's user and scope (seed 004)."""

    user_id: str | None = Field(D, max_length=256)
    scope_id: str | None = Field(D, max_length=128)


class Mem1Search(Who, title="mem1-search"):
    query: str = Field(max_length=20_000)
    num: Int | None = Field(10, ge=1, le=200)
    threshold: float | None = 0.3


class Mem1Page(Who, title="mem1-page"):
    page_idx: Int | None = Field(1, validation_alias=AliasChoices("page_idx", "page_num"))
    page_size: Int | None = 10
    memory_type: str | None = Field(None, max_length=40)


# The service's rules, which keep the seed's answers (its 422 string for no content, a 400
# for a bad scope), said in the document for clients and fuzzers: at least one message has
# content that is not blank; a scope is not empty and has no "/".
_SOME_CONTENT: JsonDict = {
    "contains": {
        "type": "object",
        "required": ["content"],
        "properties": {"content": {"type": "string", "pattern": at_least(1)}},
    }
}


class Mem1AddMessages(Who, title="mem1-add-messages"):
    scope_id: str | None = Field(D, max_length=128, json_schema_extra={"pattern": "^[^/]+$"})
    messages: list[dict[str, Any]] = Field(max_length=1000, json_schema_extra=_SOME_CONTENT)
    session_id: str | None = Field(D, max_length=256)
    mem_variables: list[dict[str, Any]] | None = Field(default_factory=list, max_length=100)
    enable_long_term_mem: bool | None = True
    enable_user_profile: bool | None = True
    enable_semantic_memory: bool | None = True
    enable_episodic_memory: bool | None = True
    enable_summary_memory: bool | None = True


class Mem1Update(Who, title="mem1-update"):
    mem_id: str = Field(max_length=80)
    memory: str


class Mem1Delete(Who, title="mem1-delete"):
    mem_id: str = Field(max_length=80)


class Mem1BatchDelete(Who, title="mem1-batch-delete"):
    mem_ids: list[Annotated[str, Field(max_length=80)]] = Field(max_length=1000)


class Mem1GetVariables(Who, title="mem1-get-variables"):
    names: list[str] | None = Field(None, max_length=500)


class Mem1UpdateVariables(Who, title="mem1-update-variables"):
    # Values are strings (seed 004: {"name": "value"}). The document says so; the service
    # refuses any other value with the 400 its clients have always had (a 422 list here would
    # change the dialect's answer).
    variables: dict[str, Any] = Field(json_schema_extra={"additionalProperties": {"type": "string"}})


class Mem1DeleteVariables(Who, title="mem1-delete-variables"):
    names: list[str] = Field(max_length=500)


# The seed's trace names only the message id; the skill's client adds its user_id (never a
# scope_id). Each filter given must match; one left out matches any value.
class Mem1Message(RequestModel, title="mem1-message"):
    message_id: str = Field(max_length=80)
    user_id: str | None = Field(None, max_length=256, description="optional: only this user's message")
    scope_id: str | None = Field(None, max_length=128, description="optional: only this scope's message")


# Seed 004: "delete one user's memories by scope"; user_id + scope_id isolate as everywhere.
class Mem1DeleteScope(RequestModel, title="mem1-delete-scope"):
    scope_id: str = Field(max_length=128)
    user_id: str | None = Field(D, max_length=256)


def _search_text(call: Call) -> str:
    return call.body["query"]


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


Body = dict[str, Any]


def _reads(method: Callable[[Mem1Service, Body], Body]) -> Handler:
    """The handler of a read: the service's ``method`` with the parsed body."""

    async def handler(request: web.Request, call: Call) -> Body:
        return method(call.services.mem1, call.body)

    handler.__name__ = method.__name__
    return handler


def _writes(method: Callable[[Mem1Service, IdentityRecord, Body], Body]) -> Handler:
    """The handler of a write: the service's ``method`` with the caller and the parsed body."""

    async def handler(request: web.Request, call: Call) -> Body:
        return method(call.services.mem1, call.require_identity(), call.body)

    handler.__name__ = method.__name__
    return handler


add_messages = _writes(Mem1Service.add_messages)
search_memory = _reads(Mem1Service.search_memory)
search_summary = _reads(Mem1Service.search_summary)
update_mem = _writes(Mem1Service.update)
delete_mem = _writes(Mem1Service.delete)
batch_delete = _writes(Mem1Service.batch_delete)
get_variables = _reads(Mem1Service.get_variables)
update_variables = _reads(Mem1Service.update_variables)
delete_variables = _reads(Mem1Service.delete_variables)
delete_scope = _writes(Mem1Service.delete_scope)


async def page(request: web.Request, call: Call) -> Body:
    return _svc(call).page(call.body, with_total=False)


async def page_with_total(request: web.Request, call: Call) -> Body:
    return _svc(call).page(call.body, with_total=True)


async def get_message(request: web.Request, call: Call) -> dict[str, Any]:
    return _svc(call).message(call.body["message_id"], call.body.get("user_id"), call.body.get("scope_id"))


R, W = "memory:read", "memory:write"


def _search(path: str, handler: Handler, summary: str) -> Endpoint:
    """A search: its query vector is made before the handler runs (``search_text``)."""
    return Endpoint(
        "POST",
        path,
        handler,
        summary,
        scope=R,
        request=Mem1Search,
        response=SearchMemoryAnswer,
        search_text=_search_text,
    )


ENDPOINTS = [
    Endpoint(
        "GET",
        "/health",
        health,
        "agent-memory1.0 health check.",
        auth="none",
        response=HealthAnswer,
    ),
    Endpoint(
        "POST",
        "/add_messages/",
        add_messages,
        "Store messages; derive memories.",
        scope=W,
        request=Mem1AddMessages,
        response=AddMessagesAnswer,
    ),
    _search("/search_memory/", search_memory, "Search profile/semantic/episodic memories."),
    _search("/search_user_history_summary/", search_summary, "Search session summaries."),
    Endpoint(
        "POST",
        "/get_user_mem_by_page/",
        page,
        "Memories by page.",
        scope=R,
        request=Mem1Page,
        response=PageAnswer,
    ),
    Endpoint(
        "POST",
        "/get_user_mem_by_page_with_total/",
        page_with_total,
        "Memories by page with the real total, timestamps and source_id.",
        scope=R,
        request=Mem1Page,
        response=PageAnswer,
    ),
    Endpoint(
        "POST",
        "/update_mem_by_id/",
        update_mem,
        "Replace a memory's content.",
        scope=W,
        request=Mem1Update,
        response=MemChangeAnswer,
    ),
    Endpoint(
        "POST",
        "/delete_mem_by_id/",
        delete_mem,
        "Delete a memory.",
        scope=W,
        request=Mem1Delete,
        response=MemChangeAnswer,
    ),
    Endpoint(
        "POST",
        "/batch_delete_mem/",
        batch_delete,
        "Delete several memories.",
        scope=W,
        request=Mem1BatchDelete,
        response=BatchDeleteAnswer,
    ),
    Endpoint(
        "POST",
        "/get_variables/",
        get_variables,
        "Profile variables.",
        scope=R,
        request=Mem1GetVariables,
        response=GetVariablesAnswer,
    ),
    Endpoint(
        "POST",
        "/update_variables/",
        update_variables,
        "Create or update variables.",
        scope=W,
        request=Mem1UpdateVariables,
        response=UpdateVariablesAnswer,
    ),
    Endpoint(
        "POST",
        "/delete_variables/",
        delete_variables,
        "Delete variables by name.",
        scope=W,
        request=Mem1DeleteVariables,
        response=DeleteVariablesAnswer,
    ),
    Endpoint(
        "POST",
        "/get_message_by_id/",
        get_message,
        "Trace a message (found: false if unknown).",
        scope=R,
        request=Mem1Message,
        response=GetMessageAnswer,
    ),
    Endpoint(
        "POST",
        "/delete_mem_by_scope/",
        delete_scope,
        "Delete every memory in a scope.",
        scope=W,
        request=Mem1DeleteScope,
        response=DeleteVariablesAnswer,
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
