"""The answers of daemon/api/sync_feed.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel


class SyncInfoAnswer(ResponseModel, title="memorycloud.sync-info.v1"):
    """GET /api/sync/info"""

    schema_: Literal["memorycloud.sync-info.v1"] = Field(alias="schema")
    role: str
    runtime_version: str
    protocol_version: str
    workspace_id: str
    latest_cursor: int
    endpoints: dict[str, Any]
    wait_max_seconds: int


class SyncChangesAnswer(ResponseModel, title="memorycloud.sync-changes.v1"):
    """GET /api/sync/changes"""

    schema_: Literal["memorycloud.sync-changes.v1"] = Field(alias="schema")
    changes: list[Any]
    has_more: bool
    next_cursor: int


class SyncRecordAnswer(ResponseModel, title="memorycloud.sync-record.v1"):
    """POST /api/sync/records"""

    schema_: Literal["memorycloud.sync-record.v1"] = Field(alias="schema")
    created: bool
    record: dict[str, Any]


class SyncRecordChangeAnswer(ResponseModel, title="memorycloud.sync-record.v1"):
    """POST /api/sync/records/{memory_id}"""

    schema_: Literal["memorycloud.sync-record.v1"] = Field(alias="schema")
    changed: bool
    record: dict[str, Any]


class SyncRedactionAnswer(ResponseModel, title="memorycloud.sync-redaction.v1"):
    """POST /api/sync/records/{memory_id}/redact"""

    schema_: Literal["memorycloud.sync-redaction.v1"] = Field(alias="schema")
    memory_id: str
    redacted_versions: list[Any]
