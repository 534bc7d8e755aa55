"""The answers of daemon/api/stores.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any

from daemon.response_models import ResponseModel


class MemoryStoreAnswer(ResponseModel, title="MemoryStoreAnswer"):
    """POST /api/v1/cloud/memory_stores, GET /api/v1/cloud/memory_stores/{store_id}, POST /api/v1/cloud/memory_stores/{store_id}, POST /api/v1/cloud/memory_stores/{store_id}/archive"""

    id: str
    type: str
    name: str
    description: str
    metadata: dict[str, Any]
    status: str
    archived_at: str | None
    created_at: str
    updated_at: str
    entry_count: int
    total_size: int


class ListAnswer(ResponseModel, title="ListAnswer"):
    """GET /api/v1/cloud/memory_stores, GET /api/v1/cloud/memory_stores/{store_id}/memories, GET /api/v1/cloud/memory_stores/{store_id}/memory_versions"""

    data: list[Any]
    has_more: bool
    next_cursor: str | None


class DeletedAnswer(ResponseModel, title="DeletedAnswer"):
    """DELETE /api/v1/cloud/memory_stores/{store_id}, DELETE /api/v1/cloud/memory_stores/{store_id}/memories/{memory_id}"""

    id: str
    type: str


class MemoryContentFields(ResponseModel, title="MemoryContentFields"):
    """The fields StoredMemoryAnswer, MemoryVersionAnswer share."""

    id: str
    type: str
    memory_store_id: str
    path: str
    content_size_bytes: int
    content_sha256: str
    version: int
    created_at: str


class StoredMemoryAnswer(MemoryContentFields, title="StoredMemoryAnswer"):
    """POST /api/v1/cloud/memory_stores/{store_id}/memories, GET /api/v1/cloud/memory_stores/{store_id}/memories/{memory_id}, POST /api/v1/cloud/memory_stores/{store_id}/memories/{memory_id}"""

    metadata: dict[str, Any]
    updated_at: str
    content: str


class MemoryVersionAnswer(MemoryContentFields, title="MemoryVersionAnswer"):
    """GET /api/v1/cloud/memory_stores/{store_id}/memory_versions/{version_id}, POST /api/v1/cloud/memory_stores/{store_id}/memory_versions/{version_id}/redact"""

    memory_id: str
    operation: str
    redacted: bool
    redacted_at: str | None
    content: str | None
