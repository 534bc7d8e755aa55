"""The fields of ``POST /api/memories`` (and ``/validate``) turned into a suite to build.

The request uses the MemoryCloud reference's names (``memory_md``, ``dreams_md``,
``work_memory`` as ``[{date, content | text}]``, ``instructions_md``, ``visibility`` ...); our
earlier names arrive here under them (the request schema's aliases), and ``work_memory`` may
also be our earlier ``{"YYYY-MM-DD": markdown}``. A field problem is a 422 naming the field;
a visibility outside public|unlisted|private is a 400, as in the reference.

Where we are more lenient than the reference, on purpose: ``memory_md`` may be left out (the
suite's MEMORY.md is then its title and summary) and a summary may be shorter than 4
characters, because our own clients have always sent such suites.
"""

from __future__ import annotations

from typing import Any

from daemon.runtime.suite_archive import (
    SEMVER,
    ArchiveRefused,
    check_manifest,
    normalize_tags,
    source_type,
    today_utc,
)
from daemon.runtime.suite_build import SuiteFields
from daemon.runtime.suite_sync import day_of
from state.errors import InvalidRequest, ValidationFailed
from state.identities import IdentityRecord

VISIBILITIES = ("public", "unlisted", "private")


def check_visibility(value: str) -> str:
    if value not in VISIBILITIES:
        raise InvalidRequest(
            f"visibility must be one of {', '.join(VISIBILITIES)}, got {value!r}",
            details={"field": "visibility", "allowed": list(VISIBILITIES)},
        )
    return value


def _fail(field: str, problem: str) -> ValidationFailed:
    return ValidationFailed(f"field '{field}' {problem}", details={"field": field, "problem": problem})


def work_memory(value: list[Any] | dict[str, Any] | None) -> dict[str, str]:
    """date -> Markdown, from ``[{date, content | text}]`` or our ``{date: markdown}``; items of
    one date are joined in order."""
    if not value:
        return {}
    if isinstance(value, dict):
        items = [{"date": day, "content": text} for day, text in value.items()]
    else:
        items = value
    days: dict[str, str] = {}
    for index, item in enumerate(items):
        where = f"work_memory[{index}]" if isinstance(value, list) else f"work_memory[{item['date']!r}]"
        if not isinstance(item, dict):
            raise _fail(where, "must be an object {date, content}")
        content = item.get("content", item.get("text"))
        if not isinstance(content, str):
            raise _fail(where, "needs 'content' (or 'text') as Markdown text")
        day = item.get("date")
        if day is None or day == "":
            day = today_utc()
        if not isinstance(day, str) or len(day) != 10:
            raise _fail(f"{where}.date", f"must be a date (YYYY-MM-DD), got {day!r}")
        day_of(day, f"work_memory[{index}].date" if isinstance(value, list) else "work_memory")
        if not content.strip():
            continue  # the reference writes a day only for non-blank content
        days[day] = f"{days[day].rstrip()}\n\n{content}" if day in days else content
    return days


def provenance(value: dict[str, Any] | None) -> dict[str, Any]:
    """The reference's default is {source_type: self_authored}; ours also says where the suite
    was made (``source``, our earlier key, which earlier readers expect). A provenance that
    names only our earlier ``source`` gets ``source_type: unspecified``, so that the reference
    imports the suite too."""
    if value is None:
        return {"source_type": "self_authored", "source": "memorycloud-companion"}
    if source_type(value) is None:
        raise _fail("provenance", "needs 'source_type' (e.g. self_authored)")
    if not value.get("source_type"):
        return {"source_type": "unspecified", **value}
    return dict(value)


def fields_from_body(
    identity: IdentityRecord | None, body: dict[str, Any]
) -> tuple[SuiteFields, dict[str, Any]]:
    """(what to build, the package's own attributes) from a parsed create body; the author is
    the caller (none for an anonymous validate)."""
    visibility = check_visibility(body.get("visibility") or "public")
    supplied = body.get("manifest")
    extra: dict[str, Any] = {}
    if supplied is not None:
        try:
            extra = check_manifest(supplied)
        except ArchiveRefused as exc:
            raise _fail("manifest", exc.message.removeprefix("manifest.json: ")) from None
    title = extra.get("title") or body["title"]
    license_ = extra.get("license") or body.get("license") or "CC-BY-4.0"
    version = extra.get("version") or body.get("version") or "1.0.0"
    if not SEMVER.fullmatch(version):
        raise _fail("version", f"must be a semantic version like 1.0.0, got {version!r}")
    memory_md = body.get("memory_md")
    if memory_md is None:
        memory_md = f"# {title}\n\n{body['summary']}\n"
    persona_type = body.get("persona_type") or "agent"
    fields = SuiteFields(
        slug="",
        title=title,
        summary=body["summary"],
        version=version,
        license=license_,
        provenance=extra.get("provenance") or provenance(body.get("provenance")),
        author=identity["name"] if identity is not None else "",
        created_at="",
        persona_type=persona_type,
        tags=normalize_tags(body.get("tags") or []),
        memory_md=memory_md,
        dreams_md=body.get("dreams_md") or "",
        instructions_md=body.get("instructions_md") or "",
        readme_md=body.get("readme_markdown") or "",
        work_memory=work_memory(body.get("work_memory")),
        manifest_extra={k: v for k, v in extra.items() if k not in ("files", "suite")},
    )
    package = {
        "visibility": visibility,
        "persona_type": persona_type,
        "price_cents": body.get("price_cents") or 0,
    }
    return fields, package
