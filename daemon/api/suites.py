"""Memory suites: create, import (zip), catalog, suite manifest, download, OpenClaw mapping,
versions and diffs, and sync (gated as memory_suite_sync)."""

from __future__ import annotations

from typing import Annotated, Any

import aiohttp
from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import HttpProcessingError
from pydantic import AliasChoices, Field

from daemon import keys
from daemon.api import suite_rules as rules
from daemon.api.suite_upload import read_upload
from daemon.endpoints import Call, Endpoint
from daemon.request_models import Int, RequestModel, at_least
from daemon.responses.suites import (
    CatalogEntryAnswer,
    InstalledOpenMemoryDetailAnswer,
    InstallOpenclawAnswer,
    MemoryCatalogAnswer,
    MemoryNativeActivationAnswer,
    MemoryPackagesAnswer,
    MemorySuiteAnswer,
    MemorySuiteDiffAnswer,
    MemorySuiteSyncAnswer,
    MemorySuiteVersionsAnswer,
    PersonaDistillJobAnswer,
    PersonaDistillJobsAnswer,
    SuiteAnswer,
    SuiteCollectionSearchAnswer,
    ValidateAnswer,
    ValidateArchiveAnswer,
)
from daemon.runtime.suite_fields import VISIBILITIES, check_visibility
from daemon.runtime.suite_sync import sync_events
from daemon.runtime.sync_gate import GatedWrite
from daemon.validation import Query
from state.errors import InvalidRequest, PayloadTooLarge, ValidationFailed


class MemorySuiteCreate(RequestModel, title="memory-suite-create", json_schema_extra=rules.HAS_MEMORY):
    title: str = Field(max_length=120, pattern=at_least(2))
    summary: str = Field(max_length=800, pattern=at_least(1))
    persona_type: str | None = Field("agent", max_length=40)
    visibility: str | None = Field(
        "public",
        max_length=40,
        description="public | unlisted | private (else 400)",
        json_schema_extra={"enum": [*VISIBILITIES, None]},
    )
    license: str | None = Field("CC-BY-4.0", max_length=80, pattern=at_least(2))
    tags: list[str] | None = Field(
        default_factory=list, description="lower-cased, trimmed, de-duplicated, 32 characters each, 12 kept"
    )
    version: str | None = Field(
        "1.0.0",
        max_length=64,
        description="semantic version",
        json_schema_extra=rules.VERSION,
    )
    price_cents: Int | None = Field(
        0, ge=0, le=999_999, description="kept and answered; this daemon sells nothing"
    )
    memory_md: str | None = Field(
        None,
        max_length=500_000,
        validation_alias=AliasChoices("memory_md", "long_term_markdown"),
        description="MEMORY.md (default: the title and summary)",
    )
    dreams_md: str | None = Field(
        "",
        max_length=200_000,
        validation_alias=AliasChoices("dreams_md", "dreams_markdown"),
        description="DREAMS.md (present even when empty)",
    )
    work_memory: list[Any] | dict[str, Any] | None = Field(
        default_factory=list,
        description='[{date: YYYY-MM-DD (default today UTC), content (or text)}], or {"YYYY-MM-DD": markdown}: memory/<date>.md',
        json_schema_extra=rules.WORK_MEMORY,
    )
    instructions_md: str | None = Field(
        "",
        max_length=100_000,
        validation_alias=AliasChoices("instructions_md", "instructions_markdown"),
        description="agent.instructions.md",
    )
    provenance: dict[str, Any] | None = Field(
        None,
        description="default {source_type: self_authored}",
        json_schema_extra={"anyOf": [rules.PROVENANCE, {"type": "null"}]},
    )
    manifest: dict[str, Any] | None = Field(
        None,
        description="a full amp.memory.v1 manifest: title, license and version come from it",
        json_schema_extra={"anyOf": [rules.MANIFEST, {"type": "null"}]},
    )
    slug: str | None = Field(
        None,
        max_length=64,
        description="publish a version of this suite (ours)",
        json_schema_extra=rules.SLUG_NAME,
    )
    readme_markdown: str | None = Field(None, max_length=100_000, description="README.md (ours)")


class MemorySuiteSync(RequestModel, title="memory-suite-sync", json_schema_extra=rules.TEXT_OR_EVENTS):
    text: str | None = Field(
        None,
        max_length=20_000,
        description="the event, appended to its day's memory/YYYY-MM-DD.md",
        json_schema_extra={"pattern": at_least(1)},
    )
    event_type: str | None = Field("work_memory", max_length=60)
    occurred_at: str | None = Field(
        None,
        max_length=64,
        description="default now (UTC)",
        json_schema_extra={"pattern": rules.STARTS_WITH_DAY},
    )
    importance: Int | None = Field(3, ge=1, le=5)
    tags: list[Annotated[str, Field(max_length=64)]] | None = Field(default_factory=list, max_length=50)
    changelog: str | None = Field(None, max_length=500)
    events: list[dict[str, Any]] | None = Field(
        None,
        max_length=200,
        description="ours, instead of text: [{summary, event_type?, tags?, occurred_at?}]",
        json_schema_extra=rules.EVENTS,
    )


async def create(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.suites.create(call.require_identity(), call.body)


async def validate(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.suites.validate(call.identity, call.body)


VISIBILITY = Query("visibility", default="public", choices=VISIBILITIES, check=check_visibility)
CATALOG = (
    Query("q"),
    Query("limit", int, default=30, minimum=1, maximum=100, clamp=True),
    Query("offset", int, default=0, minimum=0, maximum=1 << 62, clamp=True),
    Query("tag"),
)
VERSION = Query("version", description="default: the latest")
FROM, TO = (Query(name, required=True, description="a version") for name in ("from", "to"))
COLLECTION_Q = Query("q", required=True, default="")


async def import_archive(request: web.Request, call: Call) -> dict[str, Any]:
    """The zip as the 'file' part of a multipart form (the reference), or as the raw body
    (application/zip); ``?visibility=``."""
    identity = call.require_identity()
    visibility = VISIBILITY.read(request)
    return call.services.suites.import_archive(identity, await read_upload(request), visibility)


async def validate_archive(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.suites.validate_archive(await read_upload(request))


async def catalog(request: web.Request, call: Call) -> dict[str, Any]:
    # limit and offset are clamped into bounds, as the reference does (422 for a non-integer).
    return call.services.suites.catalog(*(q.read(request) for q in CATALOG))


async def detail(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.suites.detail(call.identity, request.match_info["slug"])


async def mine(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.suites.mine(call.require_identity())


async def suite(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.suites.describe(call.identity, request.match_info["slug"])


async def download(request: web.Request, call: Call) -> web.Response:
    name, data = call.services.suites.download(
        call.identity, request.match_info["slug"], VERSION.read(request)
    )
    return web.Response(
        body=data,
        content_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


async def openclaw(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.suites.openclaw(call.identity, request.match_info["slug"])


async def versions(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.suites.versions(call.identity, request.match_info["slug"])


async def diff(request: web.Request, call: Call) -> dict[str, Any]:
    old, new = FROM.read(request), TO.read(request)
    if not old or not new:
        raise ValidationFailed(
            "query parameters 'from' and 'to' (two versions) are required",
            details={"missing_fields": [n for n, v in (("from", old), ("to", new)) if not v]},
        )
    return call.services.suites.diff(call.identity, request.match_info["slug"], old, new)


async def sync(request: web.Request, call: Call) -> dict[str, Any]:
    """Gated before the suite is looked up, as in the reference: a gated agent's important
    sync is kept as a sync intent even for a slug that does not exist (its replay says so)."""
    identity = call.require_identity()
    slug = request.match_info["slug"]
    sync_events(call.body)  # an invalid write is refused (422/400), never held back
    warning = call.services.gate.admit(
        identity,
        GatedWrite(
            "memory_suite_sync", "POST", request.path, {"slug": slug}, call.body, call.body["importance"]
        ),
    )
    result = call.services.suites.sync(identity, slug, call.body)
    return {**result, "update_notice": warning} if warning else result


class OpenMemoryInstall(RequestModel, title="open-memory-install"):
    slug: str = Field(max_length=64, pattern=at_least(1))
    version: str | None = Field(None, max_length=40, description="default: the latest")
    workspace_id: str | None = Field(None, max_length=80)
    project_key: str | None = Field(None, max_length=160)


async def install(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.installer.install(call.require_identity(), call.body, call.base_url)


async def installed(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.installer.get(call.require_identity(), request.match_info["installed_memory_id"])


class PersonaDistillJob(RequestModel, title="persona-distill-job"):
    documents: list[dict[str, Any]] = Field(
        max_length=500,
        description="[{text, source_path?, retrieval_triggers?}]",
        json_schema_extra=rules.DOCUMENTS,
    )
    chunk_chars: Int | None = Field(800, ge=100, le=8000)
    importance: Int | None = Field(3, ge=1, le=5)


def _check_documents(documents: list[dict[str, Any]]) -> None:
    if not documents:
        raise ValidationFailed(
            "field 'documents' must hold at least one document", details={"field": "documents"}
        )
    for index, document in enumerate(documents):
        if not isinstance(document.get("text"), str) or not document["text"].strip():
            raise ValidationFailed(
                f"documents[{index}].text must be non-empty text",
                details={"field": f"documents[{index}].text"},
            )
        triggers = document.get("retrieval_triggers")
        if triggers is not None and (
            not isinstance(triggers, list) or not all(isinstance(t, str) for t in triggers)
        ):
            raise ValidationFailed(
                f"documents[{index}].retrieval_triggers must be a list of strings",
                details={"field": f"documents[{index}].retrieval_triggers"},
            )


async def distill(request: web.Request, call: Call) -> dict[str, Any]:
    identity = call.require_identity()
    slug = request.match_info["slug"]
    call.services.suites.require(slug)  # a 404 before the gate's 409
    _check_documents(call.body["documents"])
    call.services.gate.admit(
        identity,
        GatedWrite(
            "persona_distill_job_json",
            "POST",
            request.path,
            {"slug": slug},
            call.body,
            call.body["importance"],
        ),
    )
    return call.services.distill.start(identity, slug, call.body["documents"], call.body["chunk_chars"])


async def distill_upload(request: web.Request, call: Call) -> dict[str, Any]:
    """Multipart variant: text files as 'file' parts; never kept in a sync intent."""
    identity = call.require_identity()
    slug = request.match_info["slug"]
    call.services.suites.require(slug)  # a 404 before the gate's 409
    if not request.content_type.startswith("multipart/"):
        raise InvalidRequest("send the documents as multipart/form-data 'file' parts")
    documents, options = [], {"importance": "3", "chunk_chars": "800"}
    limit, total = request.app[keys.SETTINGS].max_body_bytes, 0
    try:
        async for part in await request.multipart():
            if not isinstance(part, BodyPartReader):
                raise InvalidRequest("a nested multipart part cannot be read: send flat parts")
            if part.name == "file":
                raw = bytes(await part.read())
                total += len(raw)
                if total > limit:  # the limit is for the whole upload, not each part
                    raise PayloadTooLarge(f"the upload is larger than the limit of {limit} bytes")
                try:
                    documents.append({"text": raw.decode("utf-8"), "source_path": part.filename or "upload"})
                except UnicodeDecodeError:
                    raise ValidationFailed(f"{part.filename or 'a file'} is not UTF-8 text") from None
            elif part.name in options:
                options[part.name] = (await part.text()).strip()
    except (ValueError, AssertionError, aiohttp.ClientError, HttpProcessingError) as exc:
        raise InvalidRequest(f"the multipart form cannot be read: {exc}") from None
    if not documents:
        raise InvalidRequest("the form has no 'file' part")
    # As the document says: importance 1-5, chunk_chars ASCII digits (int() would also take
    # "+5", "٥" and "1_0").
    if options["importance"] not in ("1", "2", "3", "4", "5"):
        raise ValidationFailed("field 'importance' must be between 1 and 5", details={"field": "importance"})
    chunk = options["chunk_chars"]
    if not (len(chunk) <= 9 and chunk.isascii() and chunk.isdigit()):
        raise ValidationFailed("field 'chunk_chars' must be an integer", details={"field": "chunk_chars"})
    importance, chunk_chars = int(options["importance"]), int(chunk)
    _check_documents(documents)
    call.services.gate.admit(
        identity,
        GatedWrite(
            "persona_distill_job_json", "POST", request.path, {"slug": slug}, {}, importance, keep=False
        ),
    )
    return call.services.distill.start(identity, slug, documents, max(100, min(chunk_chars, 8000)))


async def distill_jobs(request: web.Request, call: Call) -> dict[str, Any]:
    return {
        "schema": "amp.persona-distill-jobs.v1",
        "jobs": call.services.distill.jobs(request.match_info["slug"]),
    }


async def distill_job(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.distill.job(request.match_info["job_id"])


def _collection_search_text(call: Call) -> str:
    return COLLECTION_Q.read(call.request).strip()


async def collection_search(request: web.Request, call: Call) -> dict[str, Any]:
    query = _collection_search_text(call)
    if not query:
        raise InvalidRequest("query parameter 'q' is required")
    slug = request.match_info["slug"]
    return {
        "schema": "amp.suite-collection-search.v1",
        "slug": slug,
        "query": query,
        "items": call.services.distill.search(slug, query, 10),
    }


ENDPOINTS = [
    Endpoint(
        "POST",
        "/api/memories",
        create,
        "Create a memory suite from JSON fields (the reference's names; ours as aliases).",
        scope="memory:write",
        request=MemorySuiteCreate,
        response=MemorySuiteAnswer,
    ),
    Endpoint(
        "POST",
        "/api/memories/validate",
        validate,
        "The suite a create would build, checked; nothing stored.",
        auth="optional",
        request=MemorySuiteCreate,
        response=ValidateAnswer,
    ),
    Endpoint(
        "POST",
        "/api/memories/import",
        import_archive,
        "Import a suite zip (multipart 'file' or the raw body; ?visibility=), stored"
        " verbatim; nothing stored if anything is wrong.",
        scope="memory:write",
        response=MemorySuiteAnswer,
        query=(VISIBILITY,),
        upload=rules.SUITE_ZIP,
    ),
    Endpoint(
        "POST",
        "/api/memories/import/validate",
        validate_archive,
        "Would this zip import? Checked like an import; nothing stored.",
        auth="optional",
        response=ValidateArchiveAnswer,
        upload=rules.SUITE_ZIP,
    ),
    Endpoint(
        "POST",
        "/api/memories/{slug}/sync",
        sync,
        "Append a work-memory event (text, or our events) to its day's file as a new patch version.",
        scope="memory:write",
        request=MemorySuiteSync,
        response=MemorySuiteSyncAnswer,
        idempotent=True,
    ),
    Endpoint(
        "GET",
        "/api/me/memories",
        mine,
        "The caller's suites, of any visibility.",
        scope="memory:read",
        response=MemoryPackagesAnswer,
    ),
    Endpoint(
        "POST",
        "/api/agent/open-memories/install",
        install,
        "Install a suite into a workspace (seed install order); answers the activation.",
        scope="skill:install",
        request=OpenMemoryInstall,
        response=MemoryNativeActivationAnswer,
        search_text=lambda call: call.services.installer.search_texts(call.require_identity(), call.body),
    ),
    Endpoint(
        "GET",
        "/api/agent/installed-open-memories/{installed_memory_id}",
        installed,
        "An installed open memory (imem_...) with its memories and provenance.",
        scope="memory:read",
        response=InstalledOpenMemoryDetailAnswer,
    ),
    Endpoint(
        "POST",
        "/api/memories/{slug}/persona-distill",
        distill,
        "persona_distill_job_json: chunk and embed documents into the suite's vector"
        " collection (a job; gated and resumable).",
        scope="memory:write",
        request=PersonaDistillJob,
        response=PersonaDistillJobAnswer,
    ),
    Endpoint(
        "POST",
        "/api/memories/{slug}/persona-distill/upload",
        distill_upload,
        "The same from multipart 'file' parts (never kept in a sync intent).",
        scope="memory:write",
        response=PersonaDistillJobAnswer,
        upload=rules.DOCUMENT_FILES,
    ),
    Endpoint(
        "GET",
        "/api/memories/{slug}/distill-jobs",
        distill_jobs,
        "A suite's distill jobs.",
        scope="memory:read",
        response=PersonaDistillJobsAnswer,
    ),
    Endpoint(
        "GET",
        "/api/distill-jobs/{job_id}",
        distill_job,
        "One job and its progress.",
        scope="memory:read",
        response=PersonaDistillJobAnswer,
    ),
    Endpoint(
        "GET",
        "/api/catalog/{slug}/search",
        collection_search,
        "Search a suite's vector collection (?q=).",
        scope="catalog:read",
        response=SuiteCollectionSearchAnswer,
        query=(COLLECTION_Q,),
        search_text=_collection_search_text,
    ),
    # Suite reads take an optional key, as the reference's: a public or unlisted suite is
    # meant to be shared; a private one is found only with its creator's or the owner's key
    # (to anyone else, and without a key, it is a 404).
    Endpoint(
        "GET",
        "/api/catalog",
        catalog,
        "The public suites (?q=, ?tag=, ?limit= 1..100, ?offset=).",
        auth="optional",
        response=MemoryCatalogAnswer,
        query=CATALOG,
    ),
    Endpoint(
        "GET",
        "/api/catalog/{slug}",
        detail,
        "One suite: package, manifest, preview, install card.",
        auth="optional",
        response=CatalogEntryAnswer,
    ),
    Endpoint(
        "GET",
        "/api/catalog/{slug}/suite",
        suite,
        "Machine-readable suite manifest.",
        auth="optional",
        response=SuiteAnswer,
    ),
    Endpoint(
        "GET",
        "/api/catalog/{slug}/download",
        download,
        "The suite zip (?version=).",
        auth="optional",
        query=(VERSION,),
    ),
    Endpoint(
        "GET",
        "/api/catalog/{slug}/install/openclaw",
        openclaw,
        "The OpenClaw mapping.",
        auth="optional",
        response=InstallOpenclawAnswer,
    ),
    Endpoint(
        "GET",
        "/api/catalog/{slug}/versions",
        versions,
        "Every version of a suite.",
        auth="optional",
        response=MemorySuiteVersionsAnswer,
    ),
    Endpoint(
        "GET",
        "/api/catalog/{slug}/diff",
        diff,
        "Differences between two versions.",
        auth="optional",
        response=MemorySuiteDiffAnswer,
        query=(FROM, TO),
    ),
]
