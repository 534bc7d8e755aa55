"""Install plans and confirmations under the MemoryCloud reference's keys.

Our plan (plan_id, files, approval, signature ...) is what the daemon stores and the person
approves; a client written for the reference reads startup_item, managed_block,
install_manifest, next.confirm_body and the legacy native_hook names. This module derives
those from a stored plan, so the two views cannot disagree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from daemon.runtime.notices import default_authorization, runtime_connection_notice
from daemon.runtime.surfaces import StartupSurface
from startup_items.installer import PlannedFile
from startup_items.runtimes import CONFIG_PATH
from state.startup_records import StartupPlanRecord

PLAN_SCHEMA, LEGACY_PLAN_SCHEMA = "amp.startup-item-install-plan.v1", "amp.native-hook-install-plan.v1"
CONFIRM_SCHEMA, LEGACY_CONFIRM_SCHEMA = "amp.startup-item-confirm.v1", "amp.native-hook-confirm.v1"


def _stamps(plan: StartupPlanRecord) -> list[str]:
    """The plan's times that are set."""
    stamps = (
        plan["created_at"],
        plan["decided_at"],
        plan["applied_at"],
        plan["confirmed_at"],
        plan["removed_at"],
        plan["last_refresh_at"],
    )
    return [s for s in stamps if s]


def startup_item(
    plan: StartupPlanRecord, surface: StartupSurface, files: list[PlannedFile]
) -> dict[str, Any]:
    """The reference's startup_item object of a plan row (status and stamps as stored)."""
    body = plan["body"]
    block = next((f for f in files if f.path == surface.install_path), None)
    stamps = _stamps(plan)
    return {
        "id": plan["id"],
        "startup_item_id": plan["id"],
        "workspace_id": body["workspace_id"],
        "project_binding_id": plan["binding_id"],
        "project_key": body["project_key"],
        "runtime_type": body["runtime"],
        "startup_surface": surface.surface,
        "install_path": surface.install_path,
        "install_mode": surface.install_mode,
        "managed_block_id": block.region_id if block else "",
        "bootstrap_url": f"{body['daemon_url']}/api/agent/bootstrap/context",
        "fallback_cache_path": body["fallback_cache"]["path"],
        "memory_config_path": CONFIG_PATH,
        "startup_signature": plan["signature"],
        "signature": plan["signature"],
        "status": plan["status"],
        # The daemon writes the files when the person approves; the agent's confirm verifies.
        "installed_at": plan["applied_at"],
        "last_verified_at": plan["confirmed_at"],
        "created_at": plan["created_at"],
        "updated_at": max(stamps),
        "repo_root": body["repo_root"],
        "repo_root_exists": body.get("repo_root_exists", True),
    }


def native_hook(item: dict[str, Any]) -> dict[str, Any]:
    """The startup item under its legacy native-hook names."""
    return {
        **item,
        "legacy_name": "native_hook",
        "hook_install_id": item["id"],
        "hook_surface": item["startup_surface"],
        "hook_sig": item["signature"],
    }


def _manifest(plan: StartupPlanRecord, files: list[PlannedFile]) -> dict[str, Any]:
    body = plan["body"]
    return {
        "schema": "amp.startup-item-install.v1",
        "startup_item_id": plan["id"],
        "runtime": body["runtime"],
        "repo_root": body["repo_root"],
        "repo_root_exists": body.get("repo_root_exists", True),
        "write_files": [
            {"path": f.path, "region_id": f.region_id, "kind": f.region.kind, "purpose": f.purpose}
            for f in files
        ],
        "credential_ref": body["credential_ref"],
        "contains_api_key": False,
        "written_by": "the daemon, after the person approves",
        "approve": body["approval"]["how"],
    }


def _copy_for_agent(plan: StartupPlanRecord, surface: StartupSurface) -> str:
    body = plan["body"]
    if not body.get("repo_root_exists", True):
        return (
            f"The repository {body['repo_root'] or '(none given)'} is not on this machine, so"
            " this plan cannot be approved here. Probe again from the machine that has it"
            " (POST /api/agent/project/probe with repo_root), then ask for a new plan."
        )
    return (
        f"Show the person this plan: it writes {surface.install_path} and"
        f" {CONFIG_PATH} in {body['repo_root']} (no API key in any file). Only they can"
        f" approve it: `{body['approval']['how']}` or in the TUI. Then POST next.confirm"
        " with next.confirm_body."
    )


def plan_view(
    plan: StartupPlanRecord, surface: StartupSurface, files: list[PlannedFile], base_url: str, *, legacy: bool
) -> dict[str, Any]:
    """The reference's install-plan keys for a plan (merged over ours by the caller)."""
    item = startup_item(plan, surface, files)
    block = next((f for f in files if f.path == surface.install_path), None)
    rendered = block.region.render(block.desired) if block else ""
    config: dict[str, Any] = next((f.desired["keys"] for f in files if f.region_id == "config"), {})
    confirm = {"status": "installed", "observed_signature": plan["signature"]}
    view = {
        "schema": LEGACY_PLAN_SCHEMA if legacy else PLAN_SCHEMA,
        "legacy_schema": LEGACY_PLAN_SCHEMA,
        "startup_item": item,
        "copy_for_agent": _copy_for_agent(plan, surface),
        "default_authorization": default_authorization(),
        "runtime_connection_notice": runtime_connection_notice(base_url),
        "memory_config": {**config, "path": CONFIG_PATH},
        "managed_block": rendered,
        "startup_item_block": rendered,
        "install_manifest": _manifest(plan, files),
        "setup_manifest": _manifest(plan, files),
        "next": {
            "confirm": f"{base_url}/api/agent/startup-items/confirm",
            "confirm_body": {"startup_item_id": plan["id"], **confirm},
            "bootstrap": f"{base_url}/api/agent/bootstrap/context",
            "approve": plan["body"]["approval"]["how"],
        },
        "legacy_aliases": {
            "native_hook": native_hook(item),
            "native_hook_confirm": f"{base_url}/api/agent/native-hooks/confirm",
            "confirm_body": {"hook_install_id": plan["id"], **confirm},
        },
    }
    if legacy:
        view["superseded_by"] = f"{base_url}/api/agent/startup-items/install-plan"
        view["native_hook"] = native_hook(item)
    return view


def confirm_view(
    plan: StartupPlanRecord,
    surface: StartupSurface,
    files: list[PlannedFile],
    base_url: str,
    *,
    verified: bool,
    legacy: bool,
) -> dict[str, Any]:
    """The reference's confirm keys for a plan as it is stored after the confirmation."""
    item = startup_item(plan, surface, files)
    view = {
        "schema": LEGACY_CONFIRM_SCHEMA if legacy else CONFIRM_SCHEMA,
        "legacy_schema": LEGACY_CONFIRM_SCHEMA,
        "verified": verified,
        "startup_item": item,
        "legacy_aliases": {"native_hook": native_hook(item)},
    }
    if legacy:
        view["superseded_by"] = f"{base_url}/api/agent/startup-items/confirm"
        view["native_hook"] = native_hook(item)
    return view


def is_local_dir(root: str) -> bool:
    """Whether a repo_root names a directory here (a relative path names none: relative to
    what?)."""
    return bool(root) and Path(root).is_absolute() and Path(root).is_dir()


def missing_root(root: str, *, when: str) -> str:
    """Why the daemon cannot write a plan's files into ``root``, and what to do about it."""
    if not root:
        return (
            "the project binding has no repo_root: probe again with repo_root"
            " (POST /api/agent/project/probe), then ask for a new plan"
        )
    if not Path(root).is_absolute():
        return f"repo_root {root} is not an absolute path on this machine"
    if when == "approve":
        return f"repo_root {root} is no longer a directory on this machine"
    what = "is not a directory" if Path(root).exists() else "does not exist"
    return (
        f"repo_root {root} {what} on this machine: the daemon cannot write this plan's files"
        " here, so it cannot be approved; probe from the machine that has the repository"
    )


def describe_unwritten(planned: PlannedFile) -> dict[str, Any]:
    """A planned file as the person is shown it, for a repository that is not here."""
    return {
        "path": planned.path,
        "region_id": planned.region_id,
        "kind": planned.region.kind,
        "purpose": planned.purpose,
        "content": planned.region.render(planned.desired),
        "exists": False,
        "changes": True,
        "error": None,
    }
