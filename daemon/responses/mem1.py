"""The answers of daemon/api/mem1.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any

from daemon.response_models import ResponseModel


class HealthAnswer(ResponseModel, title="HealthAnswer"):
    """GET /health"""

    status: str
    message: str
    ok: bool
    service: str
    time: str


class AddMessagesAnswer(ResponseModel, title="AddMessagesAnswer"):
    """POST /add_messages/"""

    status: str
    message: str
    message_ids: list[Any]


class SearchMemoryAnswer(ResponseModel, title="SearchMemoryAnswer"):
    """POST /search_memory/, POST /search_user_history_summary/"""

    results: list[Any]


class PageAnswer(ResponseModel, title="PageAnswer"):
    """POST /get_user_mem_by_page/, POST /get_user_mem_by_page_with_total/"""

    results: list[Any]
    total: int


class MemChangeAnswer(ResponseModel, title="MemChangeAnswer"):
    """POST /update_mem_by_id/, POST /delete_mem_by_id/"""

    status: str
    message: str


class BatchDeleteAnswer(ResponseModel, title="BatchDeleteAnswer"):
    """POST /batch_delete_mem/"""

    status: str
    deleted: int
    failed: int
    errors: list[Any]


class GetVariablesAnswer(ResponseModel, title="GetVariablesAnswer"):
    """POST /get_variables/"""

    variables: dict[str, Any]


class UpdateVariablesAnswer(ResponseModel, title="UpdateVariablesAnswer"):
    """POST /update_variables/"""

    status: str
    message: str
    updated_count: int


class DeleteVariablesAnswer(ResponseModel, title="DeleteVariablesAnswer"):
    """POST /delete_variables/, POST /delete_mem_by_scope/"""

    status: str
    deleted: bool
    deleted_count: int


class GetMessageAnswer(ResponseModel, title="GetMessageAnswer"):
    """POST /get_message_by_id/"""

    found: bool
    message_id: str
    role: str | None = None
    content: str | None = None
    timestamp: str | None = None
    session_id: str | None = None
