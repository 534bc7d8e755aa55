"""The answers of daemon/api/suites.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel


class SuiteIdentityFields(ResponseModel, title="SuiteIdentityFields"):
    """The fields SuiteFields, CatalogEntryAnswer share."""

    slug: str
    title: str
    summary: str
    latest_version: str
    legacy: bool
    created_at: str


class SuiteFields(SuiteIdentityFields, title="SuiteFields"):
    """The fields SuiteVersionFields, SuiteAnswer share."""

    suite_id: str
    archive_sha256: str
    files: dict[str, Any]
    download: str
    package: dict[str, Any]


class SuiteVersionFields(SuiteFields, title="SuiteVersionFields"):
    """The fields MemorySuiteAnswer, MemorySuiteSyncAnswer share."""

    version: dict[str, Any]


class MemorySuiteAnswer(SuiteVersionFields, title="amp.memory-suite.v1"):
    """POST /api/memories, POST /api/memories/import"""

    schema_: Literal["amp.memory-suite.v1"] = Field(alias="schema")


class ValidationFields(ResponseModel, title="ValidationFields"):
    """The fields ValidateAnswer, ValidateArchiveAnswer share."""

    ok: bool
    manifest: dict[str, Any]
    files: list[Any]
    size_bytes: int
    sha256: str
    warnings: list[Any]
    risk: dict[str, Any]


class ValidateAnswer(ValidationFields, title="amp.memory.v1"):
    """POST /api/memories/validate"""

    schema_: Literal["amp.memory.v1"] = Field(alias="schema")
    suite_schema: str
    slug: str
    visibility: str


class ValidateArchiveAnswer(ValidationFields, title="amp.memory.v1"):
    """POST /api/memories/import/validate"""

    schema_: Literal["amp.memory.v1"] = Field(alias="schema")
    members: list[Any]
    legacy: bool


class MemorySuiteSyncAnswer(SuiteVersionFields, title="amp.memory-suite-sync.v1"):
    """POST /api/memories/{slug}/sync"""

    schema_: Literal["amp.memory-suite-sync.v1"] = Field(alias="schema")
    previous_version: str
    appended_to: str
    events: int
    sync_event: dict[str, Any]
    suite: dict[str, Any]
    update_notice: dict[str, Any] | None = None


class MemoryPackagesAnswer(ResponseModel, title="amp.memory-packages.v1"):
    """GET /api/me/memories"""

    schema_: Literal["amp.memory-packages.v1"] = Field(alias="schema")
    items: list[Any]


class MemoryNativeActivationAnswer(ResponseModel, title="amp.memory-native-activation.v1"):
    """POST /api/agent/open-memories/install"""

    schema_: Literal["amp.memory-native-activation.v1"] = Field(alias="schema")
    installed_memory_id: str
    installed_open_memory: dict[str, Any]
    runtime_context_pack: dict[str, Any]
    refresh_requests: dict[str, Any]
    rules: list[Any]


class InstalledOpenMemoryDetailAnswer(ResponseModel, title="amp.installed-open-memory-detail.v1"):
    """GET /api/agent/installed-open-memories/{installed_memory_id}"""

    schema_: Literal["amp.installed-open-memory-detail.v1"] = Field(alias="schema")
    id: str
    status: str
    receipt_id: str
    target_workspace: dict[str, Any]
    source: dict[str, Any]
    private_copy: dict[str, Any]
    native_memory_id: str
    native_memory: dict[str, Any]
    compiled_markdown: str
    snapshot: dict[str, Any]
    runtime_rule: str
    installed_memory_id: str
    workspace_id: str
    project_key: str | None
    suite_id: str
    slug: str
    version: str
    title: str
    provenance: dict[str, Any]
    archive_sha256: str
    steps: list[Any]
    retrieval_test: dict[str, Any]
    installed_at: str
    conflict_ids: list[Any]
    memory_count: int
    memories: list[Any]


class PersonaDistillJobAnswer(ResponseModel, title="amp.persona-distill-job.v1"):
    """POST /api/memories/{slug}/persona-distill, POST /api/memories/{slug}/persona-distill/upload, GET /api/distill-jobs/{job_id}"""

    schema_: Literal["amp.persona-distill-job.v1"] = Field(alias="schema")
    job_id: str
    slug: str
    status: str
    documents: int
    progress: dict[str, Any]
    error: Any
    created_at: str
    finished_at: str | None
    collection: str


class PersonaDistillJobsAnswer(ResponseModel, title="amp.persona-distill-jobs.v1"):
    """GET /api/memories/{slug}/distill-jobs"""

    schema_: Literal["amp.persona-distill-jobs.v1"] = Field(alias="schema")
    jobs: list[Any]


class SuiteCollectionSearchAnswer(ResponseModel, title="amp.suite-collection-search.v1"):
    """GET /api/catalog/{slug}/search"""

    schema_: Literal["amp.suite-collection-search.v1"] = Field(alias="schema")
    slug: str
    query: str
    items: list[Any]


class MemoryCatalogAnswer(ResponseModel, title="amp.memory-catalog.v1"):
    """GET /api/catalog"""

    schema_: Literal["amp.memory-catalog.v1"] = Field(alias="schema")
    query: str | None
    items: list[Any]
    limit: int
    offset: int
    suites: list[Any]


class CatalogEntryAnswer(SuiteIdentityFields, title="CatalogEntryAnswer"):
    """GET /api/catalog/{slug}"""

    id: str
    persona_type: str
    visibility: str
    license: str
    tags: list[Any]
    price_cents: int
    status: str
    owner: dict[str, Any]
    version: str
    sha256: str
    size_bytes: int
    install_count: int
    download_count: int
    suite: dict[str, Any]
    updated_at: str
    install_card_url: str
    install_card: str
    source_workspace: dict[str, Any]
    manifest: dict[str, Any]
    preview: dict[str, Any]
    risk: dict[str, Any]


class SuiteAnswer(SuiteFields, title="amp.memory-suite.v1"):
    """GET /api/catalog/{slug}/suite"""

    schema_: Literal["amp.memory-suite.v1"] = Field(alias="schema")
    version: str
    license: str | None = None
    provenance: dict[str, Any] | None = None
    ontology: dict[str, Any] | None = None
    tools: list[Any] | None = None
    compatibility: dict[str, Any] | None = None
    install_lifecycle: list[Any] | None = None
    content_layers: list[Any] | None = None
    compatibility_matrix: list[Any] | None = None
    marketplace_contract: dict[str, Any]
    tool_install: dict[str, Any]
    adaptation: dict[str, Any]
    memory_install_card: dict[str, Any]
    suite_manifest: dict[str, Any]


class InstallOpenclawAnswer(ResponseModel, title="amp.install.openclaw.v1"):
    """GET /api/catalog/{slug}/install/openclaw"""

    target: str
    suite_schema: str | None = None
    merge: dict[str, Any]
    required_tools: list[Any]
    activation_prompt: str
    schema_: Literal["amp.install.openclaw.v1"] = Field(alias="schema")
    package: dict[str, Any]
    manifest: dict[str, Any]
    suite: dict[str, Any]
    download_url: str
    risk: dict[str, Any]
    mapping: dict[str, Any]


class MemorySuiteVersionsAnswer(ResponseModel, title="amp.memory-suite-versions.v1"):
    """GET /api/catalog/{slug}/versions"""

    schema_: Literal["amp.memory-suite-versions.v1"] = Field(alias="schema")
    slug: str
    package: dict[str, Any]
    items: list[Any]
    versions: list[Any]


class MemorySuiteDiffAnswer(ResponseModel, title="amp.memory-suite-diff.v1"):
    """GET /api/catalog/{slug}/diff"""

    schema_: Literal["amp.memory-suite-diff.v1"] = Field(alias="schema")
    slug: str
    from_: str = Field(alias="from")
    to: str
    files: list[Any]
