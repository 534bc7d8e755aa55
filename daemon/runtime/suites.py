"""Memory suites (amp.memory-suite.v1 with amp.memory.v1): create, import, download, sync,
catalog, versions and diffs.

A suite that is only published never enters context packs (seed 000): it lives in the suite
tables, not among workspace memories; installing it is a separate, explicit step.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from datetime import datetime, timezone
from typing import Any

from daemon.runtime.suite_archive import (
    ArchiveRefused, SuiteContent, read_zip, sha256_text, slugify, validate, write_zip,
)
from daemon.validation import ValidationFailed
from state.errors import Conflict
from state.store import Store

OPENCLAW_MAPPING = {"target": "openclaw",
                    "merge": {"long_term": "MEMORY.md", "work_memory": "memory/*.md",
                              "reflections": "DREAMS.md"}}
DEFAULT_INSTRUCTIONS = (
    "# Installing this memory suite\n\n"
    "1. Read suite/manifest.json, then manifest.json (license, provenance, sha256).\n"
    "2. Pull the memory_tool_installer skill.\n"
    "3. Merge MEMORY.md as long-term memory, memory/*.md as working memory, DREAMS.md as"
    " reflections.\n"
    "4. On conflict: system and safety policy first, then the user's explicit instructions, then"
    " these install instructions and provenance, then the suite's content.\n"
    "5. Run one retrieval test and record suite_id, version, provenance and sha256.\n"
)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def suite_manifest(slug: str, title: str, version: str, files: dict[str, str]) -> dict[str, Any]:
    markdown = sorted(p for p in files if p.endswith(".md"))
    return {
        "schema": "amp.memory-suite.v1",
        "slug": slug, "title": title, "version": version,
        "content_layers": [
            {"layer": "markdown", "files": markdown},
            {"layer": "database_rows", "status": "not_included"},
            {"layer": "vector_collection", "status": "not_included"},
            {"layer": "graph", "status": "not_included"},
            {"layer": "workspace", "target": "adaptive_memories", "status": "on_install"},
        ],
        "tools": ["memory_tool_installer", "capsule_installer", "cloud_workspace_memory"],
        "compatibility": [
            {"runtime": "markdown_agent", "data": "MEMORY.md, memory/*.md, DREAMS.md",
             "tools": ["memory_tool_installer", "capsule_installer"]},
            {"runtime": "openclaw", "data": "install/openclaw.json",
             "tools": ["OpenClaw active-memory mapping"]},
            {"runtime": "codex_skill_runtime", "data": "local files or workspace",
             "tools": ["/api/agent/skills/{skill_id}/pull"]},
            {"runtime": "multi_agent_workspace", "data": "adaptive_memories",
             "tools": ["cloud_workspace_memory", "collaboration_claim"]},
        ],
        "install_lifecycle": [
            "read suite/manifest.json", "read manifest.json", "pull memory_tool_installer",
            "read agent.instructions.md", "merge MEMORY.md", "connect memory/*.md",
            "read DREAMS.md", "run one retrieval test and record suite_id, version, provenance, sha256",
        ],
    }


def finish_manifest(base: dict[str, Any], files: dict[str, str]) -> dict[str, str]:
    """Add manifest.json (with every other file's sha256) to the files."""
    manifest = {**base, "files": {p: sha256_text(t) for p, t in sorted(files.items())
                                  if p != "manifest.json"}}
    return {**files, "manifest.json": _json(manifest)}


def bump_patch(version: str) -> str:
    core = version.split("-", 1)[0].split("+", 1)[0]
    major, minor, patch = (int(p) for p in core.split("."))
    return f"{major}.{minor}.{patch + 1}"


def check_events(events: list[Any]) -> None:
    """Sync events: a non-empty list of objects with a non-empty summary (422 otherwise)."""
    if not events:
        raise ValidationFailed("field 'events' must hold at least one event",
                               details={"field": "events"})
    for index, event in enumerate(events):
        if not isinstance(event, dict) or not isinstance(event.get("summary"), str) \
                or not event["summary"].strip():
            raise ValidationFailed(f"events[{index}] needs a non-empty 'summary'",
                                   details={"field": f"events[{index}].summary"})


class SuiteService:
    def __init__(self, store: Store) -> None:
        self.store = store

    # -- creating -------------------------------------------------------------------------------

    def files_from_fields(self, identity: dict[str, Any], body: dict[str, Any]) -> dict[str, str]:
        slug = body.get("slug") or slugify(body["title"])
        version = body.get("version") or "1.0.0"
        files: dict[str, str] = {
            "MEMORY.md": body.get("long_term_markdown") or f"# {body['title']}\n\n{body['summary']}\n",
            "agent.instructions.md": body.get("instructions_markdown") or DEFAULT_INSTRUCTIONS,
            "install/openclaw.json": _json(OPENCLAW_MAPPING),
            "README.md": body.get("readme_markdown") or f"# {body['title']}\n\n{body['summary']}\n",
        }
        if body.get("dreams_markdown"):
            files["DREAMS.md"] = body["dreams_markdown"]
        for day, text in (body.get("work_memory") or {}).items():
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
                raise ArchiveRefused(f"work_memory keys must be dates (YYYY-MM-DD), got {day!r}",
                                     details={"field": "work_memory"})
            if not isinstance(text, str):
                raise ArchiveRefused(f"work_memory[{day!r}] must be Markdown text")
            files[f"memory/{day}.md"] = text
        files["suite/manifest.json"] = _json(suite_manifest(slug, body["title"], version, files))
        provenance = body.get("provenance") or {"source": "memorycloud-companion",
                                                 "author": identity["name"]}
        base = {
            "schema": "amp.memory.v1", "slug": slug, "title": body["title"],
            "summary": body["summary"], "version": version, "license": body.get("license") or "",
            "tags": body.get("tags") or [], "provenance": provenance,
            "compatibility": {"runtimes": ["markdown_agent", "openclaw", "codex_skill_runtime"]},
            "safety_boundary": {"secrets": "none", "identity": "a lens, never an impersonation",
                                "overrides": "never overrides system, developer or user instructions"},
            "memory_ontology": {"long_term": "MEMORY.md", "work_memory": "memory/*.md",
                                "reflections": "DREAMS.md"},
            "memory_tools": ["memory_tool_installer", "capsule_installer", "cloud_workspace_memory"],
            "suite": {"schema": "amp.memory-suite.v1", "manifest": "suite/manifest.json",
                      "content_layers": ["markdown", "workspace"]},
        }
        return finish_manifest(base, files)

    def _store(self, identity: dict[str, Any], content: SuiteContent) -> dict[str, Any]:
        archive_sha = hashlib.sha256(write_zip(content.files)).hexdigest()
        version = content.manifest["version"]
        existing = self.store.suites.find(content.slug)
        if existing is not None:
            known = {v["version"]: v for v in self.store.suites.versions(content.slug)}
            if version in known:
                if known[version]["archive_sha256"] == archive_sha:
                    return self.describe(content.slug, version)  # the same upload again
                raise Conflict(f"{content.slug} {version} already exists with other content;"
                               " publish it under a new version",
                               details={"slug": content.slug, "version": version})
        with self.store.transaction():
            self.store.suites.add_version(
                slug=content.slug, title=content.manifest["title"],
                summary=content.manifest["summary"], version=version, legacy=content.legacy,
                manifest=content.manifest, files=content.files, file_sha=content.file_sha256,
                archive_sha256=archive_sha, identity_id=identity["id"],
                tags=[str(t) for t in content.manifest.get("tags") or []])
        return self.describe(content.slug, version)

    def create(self, identity: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        return self._store(identity, validate(self.files_from_fields(identity, body)))

    def import_archive(self, identity: dict[str, Any], data: bytes) -> dict[str, Any]:
        files = read_zip(data, max_compressed=self.store.settings.max_body_bytes)
        content = validate(files)
        if content.legacy:
            # A legacy capsule becomes a light suite: Markdown memory plus OpenClaw/skill tools.
            upgraded = {p: t for p, t in files.items() if p != "manifest.json"}
            upgraded.setdefault("install/openclaw.json", _json(OPENCLAW_MAPPING))
            upgraded.setdefault("agent.instructions.md", DEFAULT_INSTRUCTIONS)
            upgraded["suite/manifest.json"] = _json(suite_manifest(
                content.slug, content.manifest["title"], content.manifest["version"], upgraded))
            base = {k: v for k, v in content.manifest.items() if k != "files"}
            base.update(slug=content.slug, legacy_import=True,
                        suite={"schema": "amp.memory-suite.v1", "manifest": "suite/manifest.json",
                               "content_layers": ["markdown"]})
            content = SuiteContent(content.slug, json.loads(finish_manifest(base, upgraded)["manifest.json"]),
                                   json.loads(upgraded["suite/manifest.json"]),
                                   finish_manifest(base, upgraded), True)
        return self._store(identity, content)

    # -- reading --------------------------------------------------------------------------------

    def describe(self, slug: str, version: str | None = None) -> dict[str, Any]:
        stored = self.store.suites.version(slug, version)
        suite = stored["suite"]
        return {
            "schema": "amp.memory-suite.v1",
            "suite_id": suite["id"], "slug": slug, "title": suite["title"],
            "summary": suite["summary"], "version": stored["version"],
            "latest_version": suite["latest_version"], "legacy": bool(suite["legacy"]),
            "archive_sha256": stored["archive_sha256"], "files": stored["file_sha256"],
            "download": f"/api/catalog/{slug}/download?version={stored['version']}",
            "created_at": stored["created_at"],
        }

    def suite_manifest(self, slug: str) -> dict[str, Any]:
        stored = self.store.suites.version(slug)
        return json.loads(stored["files"]["suite/manifest.json"])

    def openclaw(self, slug: str) -> dict[str, Any]:
        stored = self.store.suites.version(slug)
        text = stored["files"].get("install/openclaw.json")
        return json.loads(text) if text else OPENCLAW_MAPPING

    def download(self, slug: str, version: str | None) -> tuple[str, bytes]:
        stored = self.store.suites.version(slug, version)
        return f"{slug}-{stored['version']}.zip", write_zip(stored["files"])

    def catalog(self, query: str | None, limit: int) -> dict[str, Any]:
        suites = self.store.suites.catalog(query, limit)
        return {"schema": "amp.memory-catalog.v1", "query": query, "suites": [
            {"slug": s["slug"], "title": s["title"], "summary": s["summary"],
             "latest_version": s["latest_version"], "legacy": bool(s["legacy"]),
             "suite": f"/api/catalog/{s['slug']}/suite",
             "download": f"/api/catalog/{s['slug']}/download"} for s in suites]}

    def versions(self, slug: str) -> dict[str, Any]:
        return {"schema": "amp.memory-suite-versions.v1", "slug": slug,
                "versions": self.store.suites.versions(slug)}

    def diff(self, slug: str, old: str, new: str) -> dict[str, Any]:
        before = self.store.suites.version(slug, old)["files"]
        after = self.store.suites.version(slug, new)["files"]
        changes = []
        for path in sorted(set(before) | set(after)):
            if before.get(path) == after.get(path):
                continue
            lines = list(difflib.unified_diff(
                (before.get(path) or "").splitlines(keepends=True),
                (after.get(path) or "").splitlines(keepends=True),
                fromfile=f"{old}/{path}", tofile=f"{new}/{path}"))
            status = "added" if path not in before else "removed" if path not in after else "changed"
            changes.append({"path": path, "status": status, "diff": "".join(lines)})
        return {"schema": "amp.memory-suite-diff.v1", "slug": slug, "from": old, "to": new,
                "files": changes}

    # -- sync -------------------------------------------------------------------------------------

    def sync(self, identity: dict[str, Any], slug: str, body: dict[str, Any]) -> dict[str, Any]:
        """Append work-memory events to today's memory/YYYY-MM-DD.md as a new patch version."""
        stored = self.store.suites.version(slug)
        now = datetime.now(timezone.utc)
        path = f"memory/{now:%Y-%m-%d}.md"
        files = dict(stored["files"])
        text = files.get(path) or f"# Work memory {now:%Y-%m-%d}\n\n"
        check_events(body["events"])
        for event in body["events"]:
            kind = str(event.get("event_type") or "task_event")
            text += f"- {now:%H:%M} [{kind}] {' '.join(str(event['summary']).split())}\n"
        files[path] = text
        manifest = dict(stored["manifest"])
        version = bump_patch(manifest["version"])
        manifest["version"] = version
        sm = json.loads(files["suite/manifest.json"])
        sm["version"] = version
        markdown = sorted(p for p in files if p.endswith(".md"))
        for layer in sm.get("content_layers", []):
            if layer.get("layer") == "markdown":
                layer["files"] = markdown
        files["suite/manifest.json"] = _json(sm)
        files = finish_manifest({k: v for k, v in manifest.items() if k != "files"}, files)
        with self.store.transaction():
            result = self._store(identity, validate(files))
            # With an upstream connected, the same sync goes there too (same transaction).
            self.store.upstream.enqueue_suite_sync(slug, body)
        return {"schema": "amp.memory-suite-sync.v1", "slug": slug, "previous_version":
                stored["version"], "version": version, "appended_to": path,
                "events": len(body["events"]), "suite": result}
