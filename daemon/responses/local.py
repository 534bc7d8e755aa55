"""The answers of daemon/api/local.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel
from daemon.responses.amp_startup import PlanFields
from daemon.responses.amp_updates import PlatformUpdatesFields


class HealthzAnswer(ResponseModel, title="HealthzAnswer"):
    """GET /healthz"""

    status: str
    service: str
    version: str


class DaemonStatusAnswer(ResponseModel, title="memorycloud.daemon-status.v1"):
    """GET /api/local/status"""

    schema_: Literal["memorycloud.daemon-status.v1"] = Field(alias="schema")
    version: str
    pid: int
    uptime_seconds: float
    host: str
    port: int
    database: str
    store_bytes: int
    versions: dict[str, Any]
    embedder: dict[str, Any]
    counts: dict[str, Any]
    jobs: list[Any]
    search_index: dict[str, Any]
    role: str
    upstream: dict[str, Any]
    inbox: dict[str, Any]


class StartupPlansAnswer(ResponseModel, title="memorycloud.startup-plans.v1"):
    """GET /api/local/startup/plans"""

    schema_: Literal["memorycloud.startup-plans.v1"] = Field(alias="schema")
    plans: list[Any]


class LocalPlanFields(PlanFields, title="LocalPlanFields"):
    """The fields LocalPlanAnswer, ApprovedPlanAnswer share."""

    written: list[Any] | None = None
    unchanged: list[Any] | None = None


class LocalPlanAnswer(LocalPlanFields, title="amp.startup-item-install-plan.v1"):
    """GET /api/local/startup/plans/{plan_id}, POST /api/local/startup/plans/{plan_id}/reject, POST /api/local/startup/plans/{plan_id}/remove"""

    schema_: Literal["amp.startup-item-install-plan.v1"] = Field(alias="schema")
    created_at: str | None = None
    last_refresh_at: Any = None
    hook: dict[str, Any] | None = None
    removed: list[Any] | None = None


class ApprovedPlanAnswer(LocalPlanFields, title="ApprovedPlanAnswer"):
    """POST /api/local/startup/plans/{plan_id}/approve"""

    schema_: Literal["amp.native-hook-install-plan.v1", "amp.startup-item-install-plan.v1"] = Field(
        alias="schema"
    )
    conflicts: list[Any] | None = None


class AgentsAnswer(ResponseModel, title="memorycloud.agents.v1"):
    """GET /api/local/agents"""

    schema_: Literal["memorycloud.agents.v1"] = Field(alias="schema")
    agents: list[Any]


class AgentFields(ResponseModel, title="AgentFields"):
    """The fields NewAgentAnswer, RevokedAgentAnswer share."""

    id: str
    name: str
    runtime: str
    scopes: list[Any]
    workspace_id: str
    created_at: str


class NewAgentAnswer(AgentFields, title="NewAgentAnswer"):
    """POST /api/local/agents"""

    disabled_at: Any
    api_key: str
    key_notice: str


class RevokedAgentAnswer(AgentFields, title="RevokedAgentAnswer"):
    """POST /api/local/agents/{agent}/revoke"""

    disabled_at: str


class UpdatesAnswer(PlatformUpdatesFields, title="memorycloud.updates.v1"):
    """GET /api/local/updates"""

    schema_: Literal["memorycloud.updates.v1"] = Field(alias="schema")
    agents: list[Any]


class PublishUpdateAnswer(ResponseModel, title="PublishUpdateAnswer"):
    """POST /api/local/updates"""

    id: str
    update_id: str
    version: str
    effective_at: str
    agent_actions: list[Any]
    severity: str
    title: str
    summary: str
    requires_repull: list[Any]
    next_actions: list[Any]
    source: str
    published_at: str


class ListSyncIntentsAnswer(ResponseModel, title="amp.sync-intents.v1"):
    """GET /api/local/sync-intents"""

    schema_: Literal["amp.sync-intents.v1"] = Field(alias="schema")
    sync_intents: list[Any]


class ConflictsAnswer(ResponseModel, title="memorycloud.conflicts.v1"):
    """GET /api/local/conflicts"""

    schema_: Literal["memorycloud.conflicts.v1"] = Field(alias="schema")
    conflicts: list[Any]


class ResolveConflictAnswer(ResponseModel, title="ResolveConflictAnswer"):
    """POST /api/local/conflicts/{conflict_id}/resolve"""

    id: str
    kind: str
    subject_id: str | None  # the memory, or the plan of a drifted startup file
    path: str | None
    detail: dict[str, Any]
    status: str
    created_at: str
    resolved_at: str
    resolution: str
    current: str | None  # None once the memory is gone
    incoming: str | None
    base: str | None
    namespace: str | None  # None for a startup file
