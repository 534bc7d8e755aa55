"""Rows for memory suites, their versions and files."""

from __future__ import annotations

import json
from typing import Any

from state.db import Connection
from state.errors import NotFound
from state.ids import new_id, now_iso
from state.tokenize import fts_query, index_text


def semver_key(version: str) -> tuple:
    """Semantic-version order: numbers numerically; a pre-release sorts before its release."""
    core, _, pre = version.split("+", 1)[0].partition("-")
    numbers = tuple(int(p) if p.isdigit() else 0 for p in core.split("."))
    return numbers + ((1,) if not pre else (0, pre))


class SuiteRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def suite(self, slug: str) -> dict[str, Any]:
        row = self.conn.execute("select * from suites where slug = ?", (slug,)).fetchone()
        if row is None:
            raise NotFound(f"memory suite {slug} not found")
        return dict(row)

    def find(self, slug: str) -> dict[str, Any] | None:
        row = self.conn.execute("select * from suites where slug = ?", (slug,)).fetchone()
        return dict(row) if row else None

    def add_version(self, *, slug: str, title: str, summary: str, version: str, legacy: bool,
                    manifest: dict[str, Any], files: dict[str, str], file_sha: dict[str, str],
                    archive_sha256: str, identity_id: str | None, tags: list[str]) -> dict[str, Any]:
        """Store one version (creating the suite on its first); call inside a transaction."""
        now = now_iso()
        suite = self.find(slug)
        if suite is None:
            suite_id = new_id("suite_")
            self.conn.execute(
                "insert into suites (id, slug, title, summary, latest_version, legacy, created_by,"
                " created_at, updated_at) values (?,?,?,?,?,?,?,?,?)",
                (suite_id, slug, title, summary, version, int(legacy), identity_id, now, now))
        else:
            suite_id = suite["id"]
            # An older version imported later is kept, but never becomes the latest.
            if semver_key(version) >= semver_key(suite["latest_version"]):
                self.conn.execute(
                    "update suites set title = ?, summary = ?, latest_version = ?, updated_at = ?"
                    " where id = ?", (title, summary, version, now, suite_id))
            self.conn.execute("delete from suite_fts where slug = ?", (slug,))
        version_id = new_id("suitever_")
        self.conn.execute(
            "insert into suite_versions (id, suite_id, version, manifest, archive_sha256,"
            " created_by, created_at) values (?,?,?,?,?,?,?)",
            (version_id, suite_id, version, json.dumps(manifest, ensure_ascii=False),
             archive_sha256, identity_id, now))
        self.conn.executemany(
            "insert into suite_files (version_id, path, content, sha256) values (?,?,?,?)",
            [(version_id, path, content, file_sha[path]) for path, content in sorted(files.items())])
        self.conn.execute("insert into suite_fts (slug, tokens) values (?, ?)",
                          (slug, index_text(f"{slug} {title} {summary} {' '.join(tags)}")))
        return self.suite(slug)

    def versions(self, slug: str) -> list[dict[str, Any]]:
        suite = self.suite(slug)
        rows = self.conn.execute(
            "select id, version, archive_sha256, created_by, created_at from suite_versions"
            " where suite_id = ? order by created_at, id", (suite["id"],)).fetchall()
        return [dict(r) for r in rows]

    def version(self, slug: str, version: str | None = None) -> dict[str, Any]:
        """One version (the latest by default) with its manifest and files."""
        suite = self.suite(slug)
        version = version or suite["latest_version"]
        row = self.conn.execute(
            "select * from suite_versions where suite_id = ? and version = ?",
            (suite["id"], version)).fetchone()
        if row is None:
            raise NotFound(f"memory suite {slug} has no version {version}")
        result = dict(row)
        result["manifest"] = json.loads(result["manifest"])
        files = self.conn.execute(
            "select path, content, sha256 from suite_files where version_id = ? order by path",
            (row["id"],)).fetchall()
        result["files"] = {f["path"]: f["content"] for f in files}
        result["file_sha256"] = {f["path"]: f["sha256"] for f in files}
        result["suite"] = suite
        return result

    def catalog(self, query: str | None, limit: int) -> list[dict[str, Any]]:
        if query and (match := fts_query(query)):
            rows = self.conn.execute(
                "select s.* from suite_fts f join suites s on s.slug = f.slug"
                " where suite_fts match ? order by bm25(suite_fts) limit ?", (match, limit))
        else:
            rows = self.conn.execute("select * from suites order by updated_at desc limit ?", (limit,))
        return [dict(r) for r in rows]

    def installed_lenses(self, workspace_id: str, project_key: str | None,
                         limit: int = 3, facts: int = 3) -> list[dict[str, Any]]:
        """The newest suites installed in a workspace, each with its first few facts."""
        rows = self.conn.execute(
            "select id, slug, title, version, memory_ids from installed_open_memories"
            " where workspace_id = ? and (project_key is null or ? is null or project_key = ?)"
            " order by installed_at desc limit ?",
            (workspace_id, project_key, project_key, limit)).fetchall()
        lenses = []
        for row in rows:
            ids = json.loads(row["memory_ids"])
            marks = ",".join("?" * len(ids[:facts]))
            contents = [r[0] for r in self.conn.execute(
                f"select content from memory_records where id in ({marks}) and deleted_at is null"
                " order by seq", ids[:facts])] if ids else []
            lenses.append({"installed_memory_id": row["id"], "slug": row["slug"],
                           "title": row["title"], "version": row["version"],
                           "memory_count": len(ids), "facts": contents})
        return lenses
