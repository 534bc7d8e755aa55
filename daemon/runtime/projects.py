"""Runtime profiles and project probes (amp.project-binding.v1)."""

from __future__ import annotations

from typing import Any

from daemon.runtime.access import public_workspace, resolve_workspace
from state.identities import normalize_runtime
from state.store import Store

# Where each runtime reads its startup instructions (the startup-items issue writes them).
STARTUP_SURFACES = {
    "codex": "AGENTS.md",
    "claude_code": "CLAUDE.md",
    "gemini_cli": "GEMINI.md",
    "cursor": ".cursor/rules/memorycloud.mdc",
    "openclaw": "AGENTS.md",
    "generic": ".amp/fallback-bootstrap.md",
}


class ProjectService:
    def __init__(self, store: Store) -> None:
        self.store = store

    def profile(self, identity: dict[str, Any], body: dict[str, Any], base_url: str) -> dict[str, Any]:
        runtime = normalize_runtime(body.get("runtime") or identity.get("runtime") or "generic")
        with self.store.transaction():
            profile = self.store.projects.upsert_profile(identity["id"], {**body, "runtime": runtime})
        surface = STARTUP_SURFACES.get(runtime, STARTUP_SURFACES["generic"])
        return {
            "schema": "amp.agent-runtime-profile.v1",
            "profile_id": profile["id"],
            "agent": {"id": identity["id"], "handle": identity["name"]},
            "runtime": {
                "type": runtime,
                "runtime_version": body.get("runtime_version") or "",
                "supports_files": profile["supports_files"],
                "supports_mcp": bool(body.get("supports_mcp")),
                "repo_root": profile["repo_root"] or None,
                "git_remote": profile["git_remote"],
            },
            "recommended_startup_item": {"surface": surface, "install_path": surface,
                                         "install_mode": "managed_block"},
            "updated_at": profile["updated_at"],
            "next": {
                "project_probe": f"{base_url}/api/agent/project/probe",
                "install_plan": f"{base_url}/api/agent/startup-items/install-plan",
                "bootstrap_context": f"{base_url}/api/agent/bootstrap/context",
            },
        }

    def probe(self, identity: dict[str, Any], body: dict[str, Any], base_url: str) -> dict[str, Any]:
        workspace = resolve_workspace(self.store, identity, body.get("workspace_id"))
        runtime = normalize_runtime(body.get("runtime") or identity.get("runtime") or "generic")
        with self.store.transaction():
            binding, reason = self.store.projects.probe(
                workspace_id=workspace["id"], identity_id=identity["id"], runtime=runtime,
                project_key=body.get("project_key"), repo_root=body.get("repo_root") or body.get("cwd"),
                git_remote=body.get("git_remote"))
        confidence = {"matched git remote": 0.92, "matched repo root": 0.78,
                      "matched project key": 0.7}.get(reason, 0.6)
        return {
            "schema": "amp.project-binding.v1",
            "project_binding_id": binding["id"],
            "project_binding": {**binding, "status": "active", "confidence": confidence,
                                "reason": reason},
            "workspace": public_workspace(workspace),
            "project_key": binding["project_key"],
            "memory_config_path": ".amp/memory-config.json",
            "next": {
                "install_plan": f"{base_url}/api/agent/startup-items/install-plan",
                "bootstrap_context": f"{base_url}/api/agent/bootstrap/context",
            },
        }
