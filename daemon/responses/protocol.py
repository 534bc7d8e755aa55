"""The answers of daemon/api/protocol.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel


class ProtocolSchemaAnswer(ResponseModel, title="amp.memory.v1"):
    """GET /api/protocol/schema"""

    schema_: Literal["amp.memory.v1"] = Field(alias="schema")
    suite_schema: str
    agent_binding_schema: str
    concepts: dict[str, Any]
    required_files: list[Any]
    recommended_files: list[Any]
    manifest_required_fields: list[Any]
    manifest_example: dict[str, Any]
    suite_manifest_example: dict[str, Any]
    install_mapping: dict[str, Any]
    compatibility: dict[str, Any]
    tool_install: dict[str, Any]
    memory_takeover: dict[str, Any]
    agent_binding: dict[str, Any]
    handoff_schema: Any
    delegated_handoff_schema: Any
    agent_binding_request_schema: Any
    memory_takeover_policy_schema: Any
    memory_integration_schema: Any
    memory_integration_recommendation_schema: Any
    memory_local_deployment_schema: Any
    memory_local_route_schema: Any
    memory_integrations: Any
    memory_local_deployments: Any
    project_handoff: Any
    reference_differences: dict[str, Any]
    server: dict[str, Any]
    runtime_version: str
    protocol_version: str
    auth: dict[str, Any]
    schemas: dict[str, Any]
    endpoints: list[Any]
    errors: dict[str, Any]
