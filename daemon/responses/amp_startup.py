"""The answers of daemon/api/amp_startup.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel


class PlanFields(ResponseModel, title="PlanFields"):
    """The fields InstallPlanFields, LocalPlanFields share."""

    plan_id: str
    startup_item_id: str
    status: str
    runtime: str
    project_binding_id: str
    workspace_id: str
    project_key: str
    repo_root: str
    repo_root_exists: bool
    daemon_url: str
    credential_ref: str
    has_hook: bool
    memory_config: dict[str, Any]
    launcher: dict[str, Any]
    fallback_cache: dict[str, Any]
    files: list[Any]
    signature: str
    approval: dict[str, Any]


class InstallPlanFields(PlanFields, title="InstallPlanFields"):
    """The fields StartupItemInstallPlanAnswer, NativeHookInstallPlanAnswer share."""

    legacy_schema: str
    startup_item: dict[str, Any]
    copy_for_agent: str
    default_authorization: dict[str, Any]
    runtime_connection_notice: dict[str, Any]
    managed_block: str
    startup_item_block: str
    install_manifest: dict[str, Any]
    setup_manifest: dict[str, Any]
    next: dict[str, Any]
    legacy_aliases: dict[str, Any]


class StartupItemInstallPlanAnswer(InstallPlanFields, title="amp.startup-item-install-plan.v1"):
    """POST /api/agent/startup-items/install-plan"""

    schema_: Literal["amp.startup-item-install-plan.v1"] = Field(alias="schema")


class ConfirmFields(ResponseModel, title="ConfirmFields"):
    """The fields StartupItemConfirmAnswer, NativeHookConfirmAnswer share."""

    plan_id: str
    startup_item_id: str
    signature: str
    runtime: str
    fallback_cache: str
    status: str
    verified: bool
    legacy_schema: str
    startup_item: dict[str, Any]
    legacy_aliases: dict[str, Any]
    problems: list[Any] | None = None
    message: str | None = None
    mismatched: list[Any] | None = None


class StartupItemConfirmAnswer(ConfirmFields, title="amp.startup-item-confirm.v1"):
    """POST /api/agent/startup-items/confirm"""

    schema_: Literal["amp.startup-item-confirm.v1"] = Field(alias="schema")


class NativeHookInstallPlanAnswer(InstallPlanFields, title="amp.native-hook-install-plan.v1"):
    """POST /api/agent/native-hooks/install-plan"""

    schema_: Literal["amp.native-hook-install-plan.v1"] = Field(alias="schema")
    superseded_by: str
    native_hook: dict[str, Any]


class NativeHookConfirmAnswer(ConfirmFields, title="amp.native-hook-confirm.v1"):
    """POST /api/agent/native-hooks/confirm"""

    schema_: Literal["amp.native-hook-confirm.v1"] = Field(alias="schema")
    superseded_by: str
    native_hook: dict[str, Any]
