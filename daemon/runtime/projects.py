"""Runtime profiles (amp.agent-runtime-profile.v1) and project probes (amp.project-binding.v1),
with the MemoryCloud reference's keys beside ours."""

from __future__ import annotations

import hashlib
from typing import Any

from daemon.runtime.access import public_workspace, resolve_workspace, workspace_slug
from daemon.runtime.surfaces import runtime_for
from state.identities import IdentityRecord, normalize_runtime
from state.store import Store


def _confidence(body: dict[str, Any], repo_root: str | None) -> float:
    """How sure a probe is of its binding, by what it was given (the reference's figures):
    a git remote names a repository everywhere, a path only on this machine."""
    if body.get("git_remote"):
        return 0.92
    if repo_root:
        return 0.78
    return 0.7 if body.get("project_key") else 0.5


def _recommended(runtime: str) -> tuple[dict[str, Any], bool]:
    spec, surface, known = runtime_for(runtime)
    why = surface.why if known else f"{surface.why} (no startup item of its own for {runtime!r})"
    return {
        "surface": surface.surface,
        "install_path": surface.install_path,
        "install_mode": surface.install_mode,
        "why": why,
        "runtime": spec.name,
    }, known


class ProjectService:
    def __init__(self, store: Store) -> None:
        self.store = store

    def bindings_of(self, identity: IdentityRecord) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The workspaces an identity sees (every one for the owner, its own for an agent),
        public, and their project bindings, all active."""
        store = self.store
        workspaces = (
            store.identities.workspaces()
            if identity["kind"] == "owner"
            else [resolve_workspace(store, identity, None)]
        )
        bindings = [
            {**binding, "status": "active"}
            for workspace in workspaces
            for binding in store.projects.bindings(workspace["id"])
        ]
        return [public_workspace(w) for w in workspaces], bindings

    def profile(self, identity: IdentityRecord, body: dict[str, Any], base_url: str) -> dict[str, Any]:
        """Record what the runtime can do (kept per agent, runtime and repository: the
        reference keeps nothing) and say which startup item suits it."""
        runtime = normalize_runtime(body.get("runtime") or identity.get("runtime") or "generic")
        with self.store.transaction():
            profile = self.store.projects.upsert_profile(identity["id"], {**body, "runtime": runtime})
        recommended, _ = _recommended(runtime)
        install_plan = f"{base_url}/api/agent/startup-items/install-plan"
        return {
            "schema": "amp.agent-runtime-profile.v1",
            "profile_id": profile["id"],
            "agent": {"id": identity["id"], "handle": identity["name"]},
            "runtime": {
                "type": runtime,
                "runtime_version": body.get("runtime_version") or "",
                "supports_files": profile["supports_files"],
                "supports_mcp": bool(body.get("supports_mcp")),
                "supports_project_rules": bool(body.get("supports_project_rules", True)),
                "repo_root": profile["repo_root"] or None,
                "git_remote": profile["git_remote"],
            },
            "recommended_startup_item": recommended,
            "updated_at": profile["updated_at"],
            "next": {
                "project_probe": f"{base_url}/api/agent/project/probe",
                "install_plan": install_plan,
                "bootstrap_context": f"{base_url}/api/agent/bootstrap/context",
            },
            "legacy_aliases": {
                "recommended_hook": recommended,
                "native_hook_install_plan": f"{base_url}/api/agent/native-hooks/install-plan",
            },
        }

    def probe(self, identity: IdentityRecord, body: dict[str, Any], base_url: str) -> dict[str, Any]:
        """Find or create the binding of a repository; nothing to go by (no project_key,
        repo_root, cwd or git_remote) binds the workspace's default project, as the
        reference does (its slug)."""
        workspace = resolve_workspace(self.store, identity, body.get("workspace_id"))
        runtime = normalize_runtime(body.get("runtime") or identity.get("runtime") or "generic")
        repo_root = body.get("repo_root") or body.get("cwd")
        project_key = body.get("project_key")
        fallback = not (project_key or repo_root or body.get("git_remote"))
        if fallback:
            project_key = workspace_slug(workspace["name"])
        with self.store.transaction():
            binding, reason = self.store.projects.probe(
                workspace_id=workspace["id"],
                identity_id=identity["id"],
                runtime=runtime,
                project_key=project_key,
                repo_root=repo_root,
                git_remote=body.get("git_remote"),
            )
        confidence = _confidence(body, repo_root)
        if fallback:
            reason = "no project_key, repo_root or git_remote: the workspace's default project"
        root = binding["repo_root"] or ""
        install_plan = f"{base_url}/api/agent/startup-items/install-plan"
        return {
            "schema": "amp.project-binding.v1",
            "project_binding_id": binding["id"],
            "project_binding": {
                **binding,
                "agent_id": binding["created_by"] or "",
                "runtime_type": binding["runtime"] or runtime,
                "repo_root": root,
                "repo_root_hash": hashlib.sha256(root.encode()).hexdigest() if root else "",
                "git_remote": binding["git_remote"] or "",
                # As this probe saw them: a branch and head change too often to bind by.
                "git_branch": body.get("git_branch") or "",
                "git_head": body.get("git_head") or "",
                "status": "active",
                "confidence": confidence,
                "reason": reason,
            },
            "workspace": public_workspace(workspace),
            "project_key": binding["project_key"],
            "context_pack_url": f"{base_url}/api/agent/bootstrap/context",
            "memory_config_path": ".amp/memory-config.json",
            "next": {
                "install_plan": install_plan,
                "bootstrap_context": f"{base_url}/api/agent/bootstrap/context",
            },
            "legacy_aliases": {"native_hook_install_plan": f"{base_url}/api/agent/native-hooks/install-plan"},
        }
