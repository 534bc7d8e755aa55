"""Runtime profiles (what an agent runtime can do) and project bindings (repo -> project)."""

from __future__ import annotations

import json
import os
import re
from typing import Any, TypedDict, cast

from state.db import Connection
from state.errors import InvalidRequest, NotFound
from state.identities import normalize_runtime
from state.ids import new_id, now_iso
from state.json_text import loads


class ProjectBindingRecord(TypedDict):
    """A row of project_bindings (a repository bound to a project of a workspace)."""

    id: str
    workspace_id: str
    project_key: str
    repo_root: str | None  # normalized
    git_remote: str | None  # as given
    runtime: str | None  # the runtime that bound it first (normalized)
    created_by: str | None
    created_at: str
    updated_at: str


class RuntimeProfileRecord(TypedDict):
    """A row of runtime_profiles (what an agent runtime said it can do), its capabilities
    decoded from JSON and supports_files as a bool."""

    id: str
    identity_id: str
    runtime: str
    repo_root: str  # '' when none was given
    git_remote: str | None
    supports_files: bool
    capabilities: dict[str, Any]  # the other fields of the profile request
    created_at: str
    updated_at: str


def _binding(row: Any) -> ProjectBindingRecord:
    return cast(ProjectBindingRecord, dict(row))


def derive_project_key(repo_root: str | None, git_remote: str | None) -> str | None:
    """A stable slug from the git remote's repository name, else the repo directory name."""
    for source in (git_remote, repo_root):
        if source:
            name = source.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
            name = name.removesuffix(".git")
            slug = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-.")
            if slug:
                return slug[:160]
    return None


def normalize_remote(remote: str | None) -> str | None:
    """git@host:org/repo.git and https://host/org/repo are the same repository."""
    if not remote:
        return None
    value = remote.strip()
    match = re.match(r"^[\w.-]+@([\w.-]+):(.+)$", value)
    if match:
        value = f"{match.group(1)}/{match.group(2)}"
    value = re.sub(r"^[a-z+]+://", "", value.lower())
    value = re.sub(r"^[^@/]+@", "", value)
    return value.removesuffix("/").removesuffix(".git")


class ProjectRepository:
    """Runtime profiles and the idempotent repo -> project binding."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def upsert_profile(self, identity_id: str, fields: dict[str, Any]) -> RuntimeProfileRecord:
        runtime = normalize_runtime(fields.get("runtime") or "generic")
        repo_root = fields.get("repo_root") or ""
        now = now_iso()
        capabilities = {
            k: v
            for k, v in fields.items()
            if k not in ("runtime", "repo_root", "git_remote", "supports_files")
        }
        existing = self.conn.execute(
            "select id from runtime_profiles where identity_id = ? and runtime = ? and repo_root = ?",
            (identity_id, runtime, repo_root),
        ).fetchone()
        if existing:
            profile_id = existing[0]
            self.conn.execute(
                "update runtime_profiles set git_remote = ?, supports_files = ?, capabilities = ?,"
                " updated_at = ? where id = ?",
                (
                    fields.get("git_remote"),
                    int(fields.get("supports_files", True)),
                    json.dumps(capabilities, ensure_ascii=False),
                    now,
                    profile_id,
                ),
            )
        else:
            profile_id = new_id("rtp_")
            self.conn.execute(
                "insert into runtime_profiles (id, identity_id, runtime, repo_root, git_remote,"
                " supports_files, capabilities, created_at, updated_at) values (?,?,?,?,?,?,?,?,?)",
                (
                    profile_id,
                    identity_id,
                    runtime,
                    repo_root,
                    fields.get("git_remote"),
                    int(fields.get("supports_files", True)),
                    json.dumps(capabilities, ensure_ascii=False),
                    now,
                    now,
                ),
            )
        row = self.conn.execute("select * from runtime_profiles where id = ?", (profile_id,)).fetchone()
        profile = dict(row)
        profile["capabilities"] = loads(profile["capabilities"])
        profile["supports_files"] = bool(profile["supports_files"])
        return cast(RuntimeProfileRecord, profile)

    def binding(self, binding_id: str) -> ProjectBindingRecord:
        row = self.conn.execute("select * from project_bindings where id = ?", (binding_id,)).fetchone()
        if row is None:
            raise NotFound(f"project binding {binding_id} not found")
        return _binding(row)

    def count(self) -> int:
        """How many project bindings there are, in every workspace."""
        return self.conn.execute("select count(*) from project_bindings").fetchone()[0]

    def bindings(self, workspace_id: str | None = None) -> list[ProjectBindingRecord]:
        if workspace_id is None:
            rows = self.conn.execute("select * from project_bindings order by created_at")
        else:
            rows = self.conn.execute(
                "select * from project_bindings where workspace_id = ? order by created_at", (workspace_id,)
            )
        return [_binding(r) for r in rows]

    def probe(
        self,
        *,
        workspace_id: str,
        identity_id: str,
        runtime: str,
        project_key: str | None,
        repo_root: str | None,
        git_remote: str | None,
    ) -> tuple[ProjectBindingRecord, str]:
        """Find or create the binding for a repository; returns (binding, how it matched).

        Matching order: same git remote, then same repo root, then explicit project key. So
        probing the same repository twice (from any agent) yields the same binding.
        """
        remote = normalize_remote(git_remote)
        root = os.path.normpath(repo_root) if repo_root else None
        rows = self.conn.execute(
            "select * from project_bindings where workspace_id = ?", (workspace_id,)
        ).fetchall()
        match, reason = None, "created"
        if remote:
            match = next((r for r in rows if normalize_remote(r["git_remote"]) == remote), None)
            reason = "matched git remote" if match else reason
        if match is None and root:
            match = next((r for r in rows if r["repo_root"] == root), None)
            reason = "matched repo root" if match else reason
        key = project_key or (match["project_key"] if match else None) or derive_project_key(root, remote)
        if match is None and key:
            match = next((r for r in rows if r["project_key"] == key), None)
            reason = "matched project key" if match else reason
        if key is None:
            raise InvalidRequest("give project_key, repo_root or git_remote to bind a project")
        now = now_iso()
        if match is not None:
            self.conn.execute(
                "update project_bindings set repo_root = coalesce(?, repo_root),"
                " git_remote = coalesce(?, git_remote), updated_at = ? where id = ?",
                (root, git_remote, now, match["id"]),
            )
            return self.binding(match["id"]), reason
        binding_id = new_id("pbind_")
        self.conn.execute(
            "insert into project_bindings (id, workspace_id, project_key, repo_root, git_remote,"
            " runtime, created_by, created_at, updated_at) values (?,?,?,?,?,?,?,?,?)",
            (
                binding_id,
                workspace_id,
                key,
                root,
                git_remote,
                normalize_runtime(runtime),
                identity_id,
                now,
                now,
            ),
        )
        return self.binding(binding_id), reason
