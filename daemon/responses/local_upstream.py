"""The answers of daemon/api/local_upstream.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel


class UpstreamStatusFields(ResponseModel, title="UpstreamStatusFields"):
    """The fields UpstreamStatusAnswer, UpstreamSyncAnswer share."""

    connected: bool
    role: str
    url: str | None = None
    handle: str | None = None
    credential_ref: str | None = None
    upstream_identity_id: str | None = None
    upstream_workspace_id: str | None = None
    local_workspace_id: str | None = None
    sync_extension: bool | None = None
    connected_at: str | None = None
    last_sync_at: str | None = None
    syncing: bool | None = None
    sync_scheduled_at: str | None = None
    backlog: int | None = None
    outbox: dict[str, Any] | None = None
    finished: dict[str, Any] | None = None
    cursor: int | None = None
    pull: dict[str, Any] | None = None
    pending_updates: list[Any] | None = None
    applied_updates: list[Any] | None = None
    interrupted: list[Any] | None = None
    held: list[Any] | None = None
    skipped: list[Any] | None = None


class UpstreamStatusAnswer(UpstreamStatusFields, title="memorycloud.upstream-status.v1"):
    """GET /api/local/upstream"""

    schema_: Literal["memorycloud.upstream-status.v1"] = Field(alias="schema")
    upstream_runtime_version: str | None = None
    last_success_at: str | None = None
    last_error: Any = None
    last_error_at: Any = None


class UpstreamConnectAnswer(ResponseModel, title="memorycloud.upstream-status.v1"):
    """POST /api/local/upstream/connect, POST /api/local/upstream/updates/ack"""

    schema_: Literal["memorycloud.upstream-status.v1"] = Field(alias="schema")
    connected: bool
    role: str
    url: str
    handle: str
    credential_ref: str
    upstream_identity_id: str
    upstream_workspace_id: str | None
    local_workspace_id: str
    upstream_runtime_version: str | None
    sync_extension: bool
    connected_at: str
    last_sync_at: str | None
    syncing: bool
    sync_scheduled_at: str | None
    last_success_at: str | None
    last_error: Any
    last_error_at: Any
    backlog: int
    outbox: dict[str, Any]
    finished: dict[str, Any]
    cursor: int
    pull: dict[str, Any]
    pending_updates: list[Any]
    applied_updates: list[Any]
    interrupted: list[Any]
    held: list[Any]
    skipped: list[Any]
    queued: int | None = None


class UpstreamDisconnectAnswer(ResponseModel, title="memorycloud.upstream-status.v1"):
    """POST /api/local/upstream/disconnect"""

    schema_: Literal["memorycloud.upstream-status.v1"] = Field(alias="schema")
    connected: bool
    dropped_backlog: int
    local_memory: str


class UpstreamSyncAnswer(UpstreamStatusFields, title="memorycloud.upstream-status.v1"):
    """POST /api/local/upstream/sync"""

    schema_: Literal["memorycloud.upstream-status.v1"] = Field(alias="schema")
    upstream_runtime_version: str | None = None
    last_success_at: str | None = None
    last_error: str | None = None
    last_error_at: str | None = None
    outcome: str


class OutboxDiscardAnswer(ResponseModel, title="OutboxDiscardAnswer"):
    """POST /api/local/upstream/outbox/{seq}/discard"""

    seq: int
    memory_id: str
    version: int
    operation: str
    status: str
    attempts: int
    last_error: Any
    upstream_sync_intent_id: str
    interrupt: Any
    title: str
    importance: int
    created_at: str
    finished_at: str
