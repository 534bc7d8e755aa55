"""The answers of daemon/api/local_memories.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel


class MemoriesAnswer(ResponseModel, title="memorycloud.memories.v1"):
    """GET /api/local/memories"""

    schema_: Literal["memorycloud.memories.v1"] = Field(alias="schema")
    query: str | None
    items: list[Any]


class NamespacesAnswer(ResponseModel, title="memorycloud.namespaces.v1"):
    """GET /api/local/namespaces"""

    schema_: Literal["memorycloud.namespaces.v1"] = Field(alias="schema")
    namespaces: list[Any]


class MemoryHistoryAnswer(ResponseModel, title="memorycloud.memory-history.v1"):
    """GET /api/local/memories/{memory_id}/history, POST /api/local/memories/{memory_id}/redact"""

    schema_: Literal["memorycloud.memory-history.v1"] = Field(alias="schema")
    memory: dict[str, Any]
    dialect: str
    deleted_at: str | None
    versions: list[Any]


class MemoryDiffAnswer(ResponseModel, title="memorycloud.memory-diff.v1"):
    """GET /api/local/memories/{memory_id}/diff"""

    schema_: Literal["memorycloud.memory-diff.v1"] = Field(alias="schema")
    memory_id: str
    from_: int = Field(alias="from")
    to: int
    redacted: list[Any]
    diff: str


class MemoryRecordAnswer(ResponseModel, title="amp.memory-record.v1"):
    """POST /api/local/memories/{memory_id}/revert"""

    id: str
    schema_: Literal["amp.memory-record.v1"] = Field(alias="schema")
    namespace: str
    dialect: str
    path: Any
    workspace_id: str
    project_key: str | None
    memory_type: str
    title: str
    content: str
    importance: int
    retrieval_triggers: list[Any]
    provenance: dict[str, Any]
    source: str
    written_by: str
    content_sha256: str
    version: int
    created_at: str
    updated_at: str


class MemoryDeletedAnswer(ResponseModel, title="memorycloud.memory-deleted.v1"):
    """POST /api/local/memories/{memory_id}/delete"""

    schema_: Literal["memorycloud.memory-deleted.v1"] = Field(alias="schema")
    id: str
