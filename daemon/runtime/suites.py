"""Memory suites (amp.memory-suite.v1 with amp.memory.v1): create, validate, import, sync,
download, the catalog, versions and diffs, answered in the MemoryCloud reference's shapes
(``package``, ``version``) next to our own keys.

A suite that is only published never enters context packs (seed 000): it lives in the suite
tables, not among workspace memories; installing it is a separate, explicit step.

Who sees what: a ``public`` suite is listed in the catalog, an ``unlisted`` one is read by
its slug only, a ``private`` one only by the key that created it and the owner (the person);
to anyone else it looks exactly like a missing one (404). Only the creator and the owner add
versions (sync, a create naming the slug). ``price_cents`` is kept and answered, and means
nothing here: this daemon sells nothing.

Slugs: a create or import whose manifest names no ``slug`` gets the title's slug, made unique
with -2, -3 ... as the reference does, except that the same content sent again by the same
key (and visibility) is the package it made the first time: a retry never makes a twin.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Callable
from typing import Any

from daemon.runtime import suite_sync, suite_views
from daemon.runtime.suite_archive import (
    MAX_UPLOAD_BYTES,
    SLUG,
    SuiteContent,
    sha256_bytes,
    slugify,
    validate_archive,
    validate_files,
    write_zip,
)
from daemon.runtime.suite_build import (
    MEMORY_SCHEMA,
    OPENCLAW,
    SUITE_SCHEMA,
    build_files,
    fields_of,
    stored_manifest,
    suite_manifest,
)
from daemon.runtime.suite_fields import check_visibility, fields_from_body
from state.errors import Conflict, NotFound, ValidationFailed
from state.identities import IdentityRecord, WorkspaceRecord
from state.ids import now_iso
from state.store import Store
from state.suite_records import StoredSuiteVersion, SuiteRecord, SuiteVersionRecord


def bump_patch(version: str) -> str:
    core = version.split("-", 1)[0].split("+", 1)[0]
    major, minor, patch = (int(p) for p in core.split("."))
    return f"{major}.{minor}.{patch + 1}"


def can_see(identity: IdentityRecord | None, suite: SuiteRecord) -> bool:
    """Whether this caller may read the suite (private: its creator and the owner only)."""
    if suite["visibility"] != "private":
        return True
    return identity is not None and (identity["kind"] == "owner" or identity["id"] == suite["created_by"])


def may_write(identity: IdentityRecord, suite: SuiteRecord) -> bool:
    return identity["kind"] == "owner" or identity["id"] == suite["created_by"]


def fingerprint(files: dict[str, str]) -> str:
    """What a version holds, without the moment it was made: manifest.json's created_at (and
    the files map and embedded suite manifest, which only repeat the other files)."""
    digest = hashlib.sha256()
    for path in sorted(files):
        text = files[path]
        if path == "manifest.json":
            try:
                manifest = json.loads(text)
            except ValueError:
                manifest = text
            if isinstance(manifest, dict):
                manifest = {k: v for k, v in manifest.items() if k not in ("created_at", "files", "suite")}
            text = json.dumps(manifest, sort_keys=True, ensure_ascii=False)
        digest.update(f"{path}\0{hashlib.sha256(text.encode('utf-8')).hexdigest()}\n".encode())
    return digest.hexdigest()


Make = Callable[[str], SuiteContent]  # the content of the version under a given slug


class SuiteService:
    def __init__(self, store: Store) -> None:
        self.store = store

    # -- access ---------------------------------------------------------------------------------

    def require(self, slug: str) -> SuiteRecord:
        """The suite, or NotFound: checked before anything else is asked of it."""
        return self.store.suites.suite(slug)

    def readable(self, identity: IdentityRecord | None, slug: str) -> SuiteRecord:
        """The suite row if this caller may read it; else the same 404 as a missing one."""
        suite = self.store.suites.find(slug)
        if suite is None or not can_see(identity, suite):
            raise NotFound(f"memory suite {slug} not found")
        return suite

    def _owner(self, suite: SuiteRecord) -> IdentityRecord | None:
        if not suite["created_by"]:
            return None
        try:
            return self.store.identities.get(suite["created_by"])
        except NotFound:
            return None

    def _info(self, suite: SuiteRecord, version: str | None = None) -> SuiteVersionRecord:
        info = self.store.suites.version_info(suite, version)
        if info["size_bytes"] is None:  # stored before sizes were kept
            size = len(self._archive(suite["slug"], info))
            with self.store.transaction():
                self.store.suites.set_size(info["id"], size)
            info["size_bytes"] = size
        return info

    def package(self, suite: SuiteRecord) -> dict[str, Any]:
        return suite_views.package_object(suite, self._info(suite), self._owner(suite))

    def _archive(self, slug: str, info: SuiteVersionRecord) -> bytes:
        kept = self.store.suites.archive(info["id"]) if info["verbatim"] else None
        return (
            kept if kept is not None else write_zip(self.store.suites.version(slug, info["version"])["files"])
        )

    # -- publishing -----------------------------------------------------------------------------

    def _same(self, suite: SuiteRecord, content: SuiteContent) -> bool:
        known = {v["version"] for v in self.store.suites.versions(suite["slug"])}
        version = content.manifest["version"]
        return version in known and fingerprint(
            self.store.suites.version(suite["slug"], version)["files"]
        ) == fingerprint(content.files)

    def _slug_for(
        self, identity: IdentityRecord, base: str, make: Make, visibility: str
    ) -> tuple[str, SuiteContent, bool]:
        """(slug, content, already stored): the same content from the same key is the suite
        it made before; otherwise the first free slug of base, base-2, base-3 ..."""
        taken = self.store.suites.slugs_like(base)
        candidates = [base] + [f"{base}-{n}" for n in range(2, len(taken) + 2)]
        for slug in candidates:
            if slug not in taken:
                return slug, make(slug), False
            suite = self.store.suites.find(slug)
            content = make(slug)
            if (
                suite is not None
                and suite["created_by"] == identity["id"]
                and suite["visibility"] == visibility
                and self._same(suite, content)
            ):
                return slug, content, True
        raise AssertionError("unreachable: one candidate is always free")

    def _publish(
        self,
        identity: IdentityRecord,
        make: Make,
        *,
        slug: str | None,
        base: str,
        package: dict[str, Any],
        changelog: str,
    ) -> dict[str, Any]:
        """Store a version (or find it stored) and answer with package, version and ours."""
        if slug is None:
            slug, content, stored = self._slug_for(identity, base, make, package["visibility"])
        else:
            content = make(slug)
            existing = self.store.suites.find(slug)
            stored = False
            if existing is not None:
                if not may_write(identity, existing):
                    raise Conflict(
                        f"the slug {slug} belongs to another key's suite; choose another slug",
                        details={"slug": slug},
                    )
                version = content.manifest["version"]
                if version in {v["version"] for v in self.store.suites.versions(slug)}:
                    if not self._same(existing, content):
                        raise Conflict(
                            f"{slug} {version} already exists with other content;"
                            " publish it under a new version",
                            details={"slug": slug, "version": version},
                        )
                    stored = True
        if not stored:
            self._write(identity, slug, content, package, changelog)
        return self.answer(slug, content.manifest["version"])

    def _write(
        self,
        identity: IdentityRecord,
        slug: str,
        content: SuiteContent,
        package: dict[str, Any],
        changelog: str,
    ) -> None:
        archive = content.archive if content.archive is not None else write_zip(content.files)
        manifest = content.manifest
        with self.store.transaction():
            self.store.suites.add_version(
                slug=slug,
                title=manifest["title"],
                summary=manifest.get("summary") or "",
                version=manifest["version"],
                legacy=content.legacy,
                manifest=manifest,
                files=content.files,
                file_sha=content.file_sha256,
                archive_sha256=sha256_bytes(archive),
                identity_id=identity["id"],
                tags=list(manifest.get("tags") or []),
                size_bytes=len(archive),
                changelog=changelog,
                archive=content.archive,
                package=package,
            )

    def answer(self, slug: str, version: str) -> dict[str, Any]:
        """What create, import and sync answer: ours, plus the reference's package and version."""
        suite = self.store.suites.suite(slug)
        stored = self.store.suites.version(slug, version)
        info = self._info(suite, version)
        return {
            **suite_views.ours(suite, info, stored["file_sha256"]),
            "package": self.package(suite),
            "version": suite_views.version_object(info),
        }

    # -- create and import ----------------------------------------------------------------------

    def _built(
        self, identity: IdentityRecord | None, body: dict[str, Any]
    ) -> tuple[Make, dict[str, Any], str | None, str]:
        fields, package = fields_from_body(identity, body)
        created_at = now_iso()

        def make(slug: str) -> SuiteContent:
            fields.slug, fields.created_at = slug, created_at
            return validate_files(build_files(fields))

        slug = body.get("slug")
        if slug is not None and not SLUG.fullmatch(slug):
            raise ValidationFailed(
                f"field 'slug' {slug!r} must be 3-64 lower-case letters, digits and dashes",
                details={"field": "slug"},
            )
        return make, package, slug or fields.manifest_extra.get("slug"), slugify(fields.title)

    def create(self, identity: IdentityRecord, body: dict[str, Any]) -> dict[str, Any]:
        make, package, slug, base = self._built(identity, body)
        return self._publish(
            identity, make, slug=slug, base=base, package=package, changelog="initial publish"
        )

    def validate(self, identity: IdentityRecord | None, body: dict[str, Any]) -> dict[str, Any]:
        """POST /api/memories/validate: the suite a create would build; nothing is stored."""
        make, package, slug, base = self._built(identity, body)
        content = make(slug or base)
        archive = write_zip(content.files)
        return {
            "ok": True,
            "schema": MEMORY_SCHEMA,
            "suite_schema": SUITE_SCHEMA,
            "manifest": content.manifest,
            "files": sorted(content.files),
            "size_bytes": len(archive),
            "sha256": sha256_bytes(archive),
            "warnings": suite_views.warnings(content.manifest, package["visibility"]),
            "risk": suite_views.risk(content.manifest, package["visibility"]),
            "slug": slug or base,
            "visibility": package["visibility"],
        }

    def _imported(self, data: bytes) -> Make:
        """The uploaded zip, validated, as the content to store under a slug: the archive
        verbatim, its manifest with the defaults the reference fills in."""
        content = validate_archive(data, max_compressed=MAX_UPLOAD_BYTES)
        manifest = stored_manifest(content.manifest, now_iso())

        def make(slug: str) -> SuiteContent:
            suite = content.suite_manifest or suite_manifest(manifest, slug, content.files)
            return SuiteContent(
                {**manifest, "suite": suite},
                content.files,
                content.suite_manifest,
                data,
                content.declared_files,
            )

        return make

    def import_archive(
        self, identity: IdentityRecord, data: bytes, visibility: str = "public"
    ) -> dict[str, Any]:
        """An uploaded zip, stored verbatim (download answers the same bytes)."""
        check_visibility(visibility)
        make = self._imported(data)
        sample = make("")
        package = {
            "visibility": visibility,
            "persona_type": sample.manifest["persona_type"],
            "price_cents": 0,
        }
        return self._publish(
            identity,
            make,
            slug=sample.slug,
            base=slugify(sample.manifest["title"]),
            package=package,
            changelog="initial publish",
        )

    def validate_archive(self, data: bytes) -> dict[str, Any]:
        """POST /api/memories/import/validate: would this zip import? Nothing is stored."""
        content = self._imported(data)
        slug = content("").slug or slugify(content("").manifest["title"])
        sample = content(slug)
        return {
            "ok": True,
            "schema": MEMORY_SCHEMA,
            "manifest": sample.manifest,
            "files": sample.declared_files,
            "members": sorted(sample.files),
            "legacy": sample.legacy,
            "size_bytes": len(data),
            "sha256": sha256_bytes(data),
            "warnings": suite_views.warnings(sample.manifest, "public"),
            "risk": suite_views.risk(sample.manifest),
        }

    # -- reading --------------------------------------------------------------------------------

    def _suite_manifest(self, stored: StoredSuiteVersion) -> dict[str, Any]:
        text = stored["files"].get("suite/manifest.json")
        if text is not None:
            return json.loads(text)
        # An archive without one (a legacy import): derived from its manifest, as the reference.
        return suite_manifest(stored["manifest"], stored["suite"]["slug"], stored["files"])

    def _workspace(self, suite: SuiteRecord) -> WorkspaceRecord:
        owner = self._owner(suite)
        workspace_id = owner["workspace_id"] if owner is not None else None
        if workspace_id:
            return self.store.identities.workspace(workspace_id)
        return self.store.identities.default_workspace()

    def detail(self, identity: IdentityRecord, slug: str) -> dict[str, Any]:
        suite = self.readable(identity, slug)
        stored = self.store.suites.version(slug)
        return suite_views.detail(
            self.package(suite), suite, stored["manifest"], stored["files"], self._workspace(suite)
        )

    def describe(self, identity: IdentityRecord, slug: str) -> dict[str, Any]:
        """GET /api/catalog/{slug}/suite."""
        suite = self.readable(identity, slug)
        stored = self.store.suites.version(slug)
        manifest = self._suite_manifest(stored)
        info = self._info(suite)
        return {
            **suite_views.ours(suite, info, stored["file_sha256"]),
            **suite_views.suite_answer(manifest, self.package(suite), self._workspace(suite)),
            "suite_manifest": manifest,
        }

    def openclaw(self, identity: IdentityRecord, slug: str) -> dict[str, Any]:
        self.readable(identity, slug)  # refuses a suite the caller may not read
        stored = self.store.suites.version(slug)
        text = stored["files"].get("install/openclaw.json")
        mapping = json.loads(text) if text else dict(OPENCLAW)
        with self.store.transaction():
            self.store.suites.count(slug, "install")
        return suite_views.openclaw_answer(
            mapping,
            self.package(self.store.suites.suite(slug)),
            stored["manifest"],
            self._suite_manifest(stored),
        )

    def download(self, identity: IdentityRecord, slug: str, version: str | None) -> tuple[str, bytes]:
        suite = self.readable(identity, slug)
        info = self.store.suites.version_info(suite, version)
        data = self._archive(slug, info)
        with self.store.transaction():
            self.store.suites.count(slug, "download")
        return f"{slug}-{info['version']}.zip", data

    def catalog(self, query: str | None, limit: int, offset: int, tag: str | None) -> dict[str, Any]:
        """The public suites (the reference's catalog), best match or newest first."""
        suites = self.store.suites.catalog(query, limit, offset=offset, tag=tag, public_only=True)
        return {
            "schema": "amp.memory-catalog.v1",
            "query": query,
            "items": [self.package(s) for s in suites],
            "limit": limit,
            "offset": offset,
            "suites": [
                {
                    "slug": s["slug"],
                    "title": s["title"],
                    "summary": s["summary"],
                    "latest_version": s["latest_version"],
                    "legacy": bool(s["legacy"]),
                    "suite": f"/api/catalog/{s['slug']}/suite",
                    "download": f"/api/catalog/{s['slug']}/download",
                }
                for s in suites
            ],
        }

    def mine(self, identity: IdentityRecord) -> dict[str, Any]:
        """GET /api/me/memories: the caller's suites of any visibility (the owner's: all)."""
        owner = identity["kind"] == "owner"
        suites = self.store.suites.created_by(None if owner else identity["id"])
        return {"schema": "amp.memory-packages.v1", "items": [self.package(s) for s in suites]}

    def versions(self, identity: IdentityRecord, slug: str) -> dict[str, Any]:
        suite = self.readable(identity, slug)
        rows = self.store.suites.versions(slug)
        items = [suite_views.version_item(self._info(suite, r["version"])) for r in rows]
        return {
            "schema": "amp.memory-suite-versions.v1",
            "slug": slug,
            "package": self.package(suite),
            "items": items[::-1],
            "versions": [{**r, "size_bytes": i["size_bytes"]} for r, i in zip(rows, items, strict=True)],
        }

    def diff(self, identity: IdentityRecord, slug: str, old: str, new: str) -> dict[str, Any]:
        self.readable(identity, slug)
        before = self.store.suites.version(slug, old)["files"]
        after = self.store.suites.version(slug, new)["files"]
        changes = []
        for path in sorted(set(before) | set(after)):
            if before.get(path) == after.get(path):
                continue
            lines = list(
                difflib.unified_diff(
                    (before.get(path) or "").splitlines(keepends=True),
                    (after.get(path) or "").splitlines(keepends=True),
                    fromfile=f"{old}/{path}",
                    tofile=f"{new}/{path}",
                )
            )
            status = "added" if path not in before else "removed" if path not in after else "changed"
            changes.append({"path": path, "status": status, "diff": "".join(lines)})
        return {"schema": "amp.memory-suite-diff.v1", "slug": slug, "from": old, "to": new, "files": changes}

    # -- sync -----------------------------------------------------------------------------------

    def sync(self, identity: IdentityRecord, slug: str, body: dict[str, Any]) -> dict[str, Any]:
        """Append the events to their days' memory/<date>.md and publish the next patch
        version, rebuilt in the full suite layout (an imported archive too)."""
        events = suite_sync.sync_events(body)
        suite = self.store.suites.find(slug)
        if suite is None or not may_write(identity, suite):
            raise NotFound(f"memory suite {slug} not found among yours")
        stored = self.store.suites.version(slug)
        fields = fields_of(stored, slug)
        days = {f"memory/{day}.md": text for day, text in fields.work_memory.items()}
        written = suite_sync.append(days, events)
        fields.work_memory = {path[len("memory/") : -len(".md")]: text for path, text in days.items()}
        fields.version = bump_patch(stored["manifest"]["version"])
        fields.created_at = now_iso()
        content = validate_files(build_files(fields))
        changelog = suite_sync.changelog(events, body.get("changelog"))
        with self.store.transaction():
            self._write(identity, slug, content, {}, changelog)
            # With an upstream connected, the same events go there too (same transaction).
            for event in events:
                self.store.upstream.enqueue_suite_sync(
                    slug, suite_sync.upstream_body(event, body.get("changelog"))
                )
        result = self.answer(slug, fields.version)
        return {
            **result,
            "schema": "amp.memory-suite-sync.v1",
            "slug": slug,
            "previous_version": stored["version"],
            "appended_to": written[-1],
            "events": len(events),
            "sync_event": events[-1],
            "suite": {k: v for k, v in result.items() if k not in ("package", "version")},
        }
