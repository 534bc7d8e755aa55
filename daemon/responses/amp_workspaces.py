"""The answers of daemon/api/amp_workspaces.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel


class MemoryQueryAnswer(ResponseModel, title="amp.memory-search.v1"):
    """GET /api/workspaces/{workspace_id}/memory/query"""

    schema_: Literal["amp.memory-search.v1"] = Field(alias="schema")
    query: str
    workspace_id: str
    project_key: str | None
    memory_type: str | None
    items: list[Any]
    context: str
    active_memory_view: Any
    call_instructions: str


class MyWorkspacesAnswer(ResponseModel, title="MyWorkspacesAnswer"):
    """GET /api/me/workspaces"""

    items: list[Any]


class MemoryLensMapAnswer(ResponseModel, title="amp.memory-lens-map.v1"):
    """GET /api/me/memory-map, GET /api/workspaces/{workspace_id}/memory-map"""

    schema_: Literal["amp.memory-lens-map.v1"] = Field(alias="schema")
    user: dict[str, Any]
    workspace_id: str
    stats: dict[str, Any]
    workspaces: list[Any]
    assets: list[Any]
    primary_assets: list[Any]
    secondary_assets: list[Any]
    nodes: list[Any]
    edges: list[Any]
    default_agent_view: dict[str, Any]


class CodeMemoryContextAnswer(ResponseModel, title="CodeMemoryContextAnswer"):
    """GET /api/projects/{project_key}/code-memory/context"""

    project_key: str
    items: list[Any]
    context: str
