"""Startup items: install plans, approval, writing files, confirmation, removal, refresh.

The agent asks for a plan; only a person (the owner) approves it; the daemon then writes
the files itself through ``startup_items.installer`` and remembers every managed region so
it can detect hand edits (conflicts, never overwrites) and undo the installation exactly.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from pathlib import Path
from typing import Any

from daemon.runtime.access import resolve_workspace, workspace_slug
from daemon.runtime.context_packs import ContextPackService
from daemon.runtime.hook_runs import HookRunService
from daemon.runtime.startup_view import (
    LEGACY_PLAN_SCHEMA,
    PLAN_SCHEMA,
    confirm_view,
    describe_unwritten,
    is_local_dir,
    missing_root,
    plan_view,
)
from daemon.runtime.surfaces import SURFACES, runtime_for
from startup_items.credentials import read_credentials, store_credential
from startup_items.fallback import remove_caches, write_cache
from startup_items.files import read_text, sha256_text
from startup_items.installer import (
    FileRecord,
    PlannedFile,
    apply_plan,
    drifted,
    remove_regions,
    verify_plan,
)
from startup_items.local_config import local_config_text
from startup_items.runtimes import (
    CACHE_HEADER_ROOM,
    RUNTIMES,
    InstallTarget,
    RuntimeSpec,
    dynamic_region_ids,
    legacy_dynamic_region_ids,
    planned_files,
    resolve_runtime,
)
from state.errors import Conflict, InvalidRequest, NotFound
from state.identities import IdentityRecord
from state.ids import new_id, now_iso
from state.paths import Paths
from state.projects import ProjectBindingRecord
from state.secrets import SecretStore
from state.startup_records import StartupPlanRecord
from state.store import Store

SIGNING_SECRET = "plan_signing_key"
ACTIVE = ("applied", "installed", "fallback_active")


class StartupService:
    def __init__(
        self, store: Store, packs: ContextPackService, paths: Paths, secret_store: SecretStore
    ) -> None:
        self.store = store
        self.packs = packs
        self.paths = paths
        self.secrets = secret_store
        self.runs = HookRunService(store)

    # -- building and signing ------------------------------------------------------------

    def _signing_key(self) -> bytes:
        key = self.secrets.get(SIGNING_SECRET)
        if not key:
            key = secrets.token_hex(32)
            self.secrets.set(SIGNING_SECRET, key)
        return bytes.fromhex(key)

    def _sign(self, plan_id: str, target: InstallTarget, spec: RuntimeSpec, files: list[PlannedFile]) -> str:
        """HMAC over what the plan writes; dynamic (summary) regions are signed by frame only."""
        dynamic = dynamic_region_ids()
        manifest = {
            "plan_id": plan_id,
            "runtime": spec.name,
            "repo_root": str(target.repo_root),
            "binding_id": target.binding_id,
            "credential_ref": target.credential_ref,
            "daemon_url": target.daemon_url,
            "files": [
                {
                    "path": f.path,
                    "region": f.region_id,
                    "kind": f.region.kind,
                    "sha256": None
                    if f.region_id in dynamic
                    else hashlib.sha256(f.region.render(f.desired).encode()).hexdigest(),
                }
                for f in files
            ],
        }
        canonical = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
        return "hmac-sha256:" + hmac.new(self._signing_key(), canonical, hashlib.sha256).hexdigest()

    def _summary(self, target: InstallTarget, spec: RuntimeSpec) -> str:
        max_chars = spec.max_chars
        if spec.name == "openclaw":
            # OpenClaw's cap is per file: leave room for what the user keeps in MEMORY.md.
            memory_md = target.repo_root / "MEMORY.md"
            here = is_local_dir(str(target.repo_root)) and memory_md.is_file()
            other = len(memory_md.read_text(encoding="utf-8")) if here else 0
            max_chars = max(2_000, (spec.max_chars or 20_000) - other - 400)
        return self.packs.summary_for_cache(
            target.workspace_id, target.project_key, spec.name, max_chars, spec.max_tokens
        )

    def _target(self, plan: StartupPlanRecord) -> tuple[InstallTarget, RuntimeSpec]:
        body = plan["body"]
        target = InstallTarget(
            Path(plan["repo_root"]),
            body["daemon_url"],
            body["workspace_id"],
            body["project_key"],
            plan["binding_id"],
            plan["credential_ref"],
            local_config_text(self.paths),
        )
        return target, resolve_runtime(plan["runtime"])

    def _files(self, plan: StartupPlanRecord) -> tuple[InstallTarget, RuntimeSpec, list[PlannedFile]]:
        target, spec = self._target(plan)
        return target, spec, planned_files(target, spec, lambda s: self._summary(target, s))

    def _binding(self, identity: IdentityRecord, body: dict[str, Any], runtime: str) -> ProjectBindingRecord:
        """The binding a plan is for: the one named (another workspace's looks missing, as the
        reference's "not owned" does), else the workspace's binding of project_key (made
        if there is none, as a probe with that key would)."""
        if body.get("project_binding_id"):
            binding = self.store.projects.binding(body["project_binding_id"])
            if identity["kind"] != "owner" and binding["workspace_id"] != identity.get("workspace_id"):
                raise NotFound(f"project binding {binding['id']} not found")
            return binding
        workspace = resolve_workspace(self.store, identity, body.get("workspace_id"))
        with self.store.transaction():
            binding, _ = self.store.projects.probe(
                workspace_id=workspace["id"],
                identity_id=identity["id"],
                runtime=runtime,
                project_key=body.get("project_key") or workspace_slug(workspace["name"]),
                repo_root=None,
                git_remote=None,
            )
        return binding

    def create_plan(
        self, identity: IdentityRecord, body: dict[str, Any], base_url: str, *, legacy: bool = False
    ) -> dict[str, Any]:
        """A plan for a person to approve. A repository that is not a directory on this
        machine still gets its plan (the reference returns one): it says so
        (repo_root_exists false, a warning) and approving it is refused."""
        spec, surface, known = runtime_for(body.get("runtime"))
        warnings = []
        if not known:
            warnings.append(
                f"runtime {body['runtime']!r} has no startup item of its own here;"
                f" planned the generic one (supported: {', '.join(RUNTIMES)})"
            )
        if body.get("install_mode") and body["install_mode"] != surface.install_mode:
            warnings.append(
                f"install_mode {body['install_mode']!r} is not available for"
                f" {spec.name}; the plan uses {surface.install_mode!r}"
            )
        binding = self._binding(identity, body, spec.name)
        root_text = binding["repo_root"] or ""
        exists = is_local_dir(root_text)
        if not exists:
            warnings.append(missing_root(root_text, when="plan"))
        plan_id = new_id("splan_")
        root = Path(root_text)
        target = InstallTarget(
            root,
            base_url,
            binding["workspace_id"],
            binding["project_key"],
            binding["id"],
            body["credential_ref"],
            local_config_text(self.paths),
        )
        files = planned_files(target, spec, lambda s: self._summary(target, s))
        signature = self._sign(plan_id, target, spec, files)
        plan_body = {
            "schema": LEGACY_PLAN_SCHEMA if legacy else PLAN_SCHEMA,
            "plan_id": plan_id,
            "startup_item_id": plan_id,
            "status": "pending_approval",
            "runtime": spec.name,
            "project_binding_id": binding["id"],
            "workspace_id": binding["workspace_id"],
            "project_key": binding["project_key"],
            "repo_root": root_text,
            "repo_root_exists": exists,
            "daemon_url": base_url,
            "credential_ref": body["credential_ref"],
            "has_hook": spec.has_hook,
            "memory_config": {"path": ".amp/memory-config.json", "schema": "amp.memory-config.v1"},
            "launcher": {
                "path": ".amp/launcher.py",
                "command": f"python3 .amp/launcher.py --runtime {spec.name}",
            },
            "fallback_cache": {"path": spec.cache_path(), "gitignored": True},
            "files": [f.describe(root) if exists else describe_unwritten(f) for f in files],
            "signature": signature,
            "approval": {
                "required": True,
                "by": "the owner (a person)",
                "how": f"memorycloud setup approve {plan_id}",
                "possible": exists,
            },
            **({"warnings": warnings} if warnings else {}),
        }
        row: StartupPlanRecord = {
            "id": plan_id,
            "binding_id": binding["id"],
            "runtime": spec.name,
            "repo_root": root_text,
            "credential_ref": body["credential_ref"],
            "status": "pending_approval",
            "body": plan_body,
            "signature": signature,
            "created_by": identity["id"],
            "decided_by": None,
            "created_at": now_iso(),
            "decided_at": None,
            "applied_at": None,
            "confirmed_at": None,
            "removed_at": None,
            "last_refresh_at": None,
        }
        with self.store.transaction():
            self.store.startup.insert_plan(row)
        return {**plan_body, **plan_view(row, surface, files, base_url, legacy=legacy)}

    # -- the person's decisions ------------------------------------------------------------

    def _records(self, repo_root: str) -> tuple[dict, dict]:
        stored = self.store.startup.regions(repo_root)
        records = {key: FileRecord(**value["record"]) for key, value in stored.items()}
        owners = {key: value["owners"] for key, value in stored.items()}
        return records, owners

    def plans(self, status: str | None) -> list[StartupPlanRecord]:
        """The plans with that status (all if None), for the owner's list."""
        return self.store.startup.plans(status)

    def plan(self, plan_id: str) -> StartupPlanRecord:
        return self.store.startup.plan(plan_id)

    def approve(self, owner: IdentityRecord, plan_id: str, *, overwrite: bool = False) -> dict[str, Any]:
        plan = self.store.startup.plan(plan_id)
        if plan["status"] not in ("pending_approval", "conflict"):
            raise Conflict(f"plan {plan_id} is {plan['status']}, not waiting for approval")
        if not is_local_dir(plan["repo_root"]):
            # Nothing is written for a repository this machine does not have: a plan made for
            # a path that did not exist, or one that moved since.
            when = "approve" if plan["body"].get("repo_root_exists", True) else "plan"
            raise InvalidRequest(
                f"cannot approve plan {plan_id}: {missing_root(plan['repo_root'], when=when)};"
                " nothing was written",
                details={"repo_root": plan["repo_root"], "repo_root_exists": False},
            )
        target, spec, files = self._files(plan)
        records, owners = self._records(plan["repo_root"])
        if overwrite:
            records = _accept_disk_as_baseline(target, files, records)
        outcome = apply_plan(target.repo_root, files, records)
        body = dict(plan["body"])
        if outcome.conflicts:
            body["status"] = "conflict"
            body["conflicts"] = [c.__dict__ for c in outcome.conflicts]
            with self.store.transaction():
                for c in outcome.conflicts:
                    self.store.conflicts.add_conflict(
                        "startup_item_drift",
                        plan_id,
                        c.path,
                        {"region_id": c.region_id, "reason": c.reason, "repo_root": plan["repo_root"]},
                    )
                self.store.startup.set_status(
                    plan_id, "conflict", stamp="decided_at", decided_by=owner["id"], body=body
                )
            return body
        self._ensure_launcher_key(target)
        self._write_cache(target, spec)
        body.update(status="applied", written=outcome.written, unchanged=outcome.unchanged)
        body.pop("conflicts", None)
        with self.store.transaction():
            for key, record in outcome.records.items():
                sharing = owners.get(key, [])
                self.store.startup.save_region(
                    plan["repo_root"], key[0], key[1], record.to_dict(), sorted({*sharing, plan_id})
                )
            self.store.conflicts.resolve_conflicts(plan_id, "overwritten" if overwrite else "applied")
            self.store.startup.set_status(
                plan_id, "applied", stamp="applied_at", decided_by=owner["id"], body=body
            )
        return body

    def reject(self, owner: IdentityRecord, plan_id: str) -> dict[str, Any]:
        plan = self.store.startup.plan(plan_id)
        if plan["status"] not in ("pending_approval", "conflict"):
            raise Conflict(f"plan {plan_id} is {plan['status']}, not waiting for approval")
        body = {**plan["body"], "status": "rejected"}
        with self.store.transaction():
            self.store.conflicts.resolve_conflicts(plan_id, "rejected")
            self.store.startup.set_status(
                plan_id, "rejected", stamp="decided_at", decided_by=owner["id"], body=body
            )
        return body

    def remove(self, owner: IdentityRecord, plan_id: str) -> dict[str, Any]:
        plan = self.store.startup.plan(plan_id)
        if plan["status"] not in ACTIVE:
            raise Conflict(f"plan {plan_id} is {plan['status']}: nothing of it is installed")
        target, spec, files = self._files(plan)
        records, owners = self._records(plan["repo_root"])
        # Regions other active plans still use stay; only this plan's ownership goes.
        exclusive = [f for f in files if owners.get(f.key) == [plan_id]]
        others = [p for p in self.store.startup.active_plans(plan["binding_id"]) if p["id"] != plan_id]
        conflicts = drifted(target.repo_root, [f for f in exclusive if f.key in records], records)
        if not conflicts:
            # Caches first, so the .amp/ directory can go when the last region leaves it.
            remove_caches(target.repo_root, spec, last=not others)
            outcome = remove_regions(target.repo_root, exclusive, records)
            conflicts = outcome.conflicts
        if conflicts:
            with self.store.transaction():
                for c in conflicts:
                    self.store.conflicts.add_conflict(
                        "startup_item_drift",
                        plan_id,
                        c.path,
                        {
                            "region_id": c.region_id,
                            "reason": c.reason,
                            "repo_root": plan["repo_root"],
                            "during": "remove",
                        },
                    )
            raise Conflict(
                "some managed regions were edited by hand; nothing was removed",
                details={"conflicts": [c.__dict__ for c in conflicts]},
            )
        body = {**plan["body"], "status": "removed", "removed": outcome.removed}
        with self.store.transaction():
            for f in files:
                sharing = [o for o in owners.get(f.key, []) if o != plan_id]
                if f.key not in owners:
                    continue
                if sharing:
                    self.store.startup.save_region(
                        plan["repo_root"], f.path, f.region_id, records[f.key].to_dict(), sharing
                    )
                else:
                    self.store.startup.delete_region(plan["repo_root"], f.path, f.region_id)
            self.store.startup.set_status(plan_id, "removed", stamp="removed_at", body=body)
        return body

    # -- the agent's confirmation ------------------------------------------------------------

    def confirm(
        self, identity: IdentityRecord, body: dict[str, Any], base_url: str, *, legacy: bool = False
    ) -> dict[str, Any]:
        """The agent reports the startup item in place. The daemon checks the signature it
        saw and the files on disk: a mismatch is answered as the reference answers a wrong
        signature (status stale, verified false) and changes nothing stored."""
        plan = self.store.startup.plan(body["startup_item_id"])
        if identity["kind"] != "owner" and plan["body"]["workspace_id"] != identity.get("workspace_id"):
            raise NotFound(f"install plan {plan['id']} not found")
        if plan["status"] not in ACTIVE:
            raise Conflict(f"plan {plan['id']} is {plan['status']}: it must be approved first")
        target, spec, files = self._files(plan)
        surface = SURFACES[spec.name]
        ours = {
            "plan_id": plan["id"],
            "startup_item_id": plan["id"],
            "signature": plan["signature"],
            "runtime": spec.name,
            "fallback_cache": spec.cache_path(),
        }
        problems = self._confirm_problems(plan, body, target, files)
        if problems:
            stale: StartupPlanRecord = {**plan, "status": "stale"}
            return {
                **ours,
                "status": "stale",
                "verified": False,
                **problems,
                **confirm_view(stale, surface, files, base_url, verified=False, legacy=legacy),
            }
        # The reference's statuses: installed and verified mean the startup item runs,
        # fallback that the agent fetches the context itself.
        hook_active = body.get("hook_active") is not False and body.get("status") != "fallback"
        status = "installed" if spec.has_hook and hook_active else "fallback_active"
        with self.store.transaction():
            self.store.startup.set_status(
                plan["id"], status, stamp="confirmed_at", body={**plan["body"], "status": status}
            )
        stored = self.store.startup.plan(plan["id"])
        return {
            **ours,
            "status": status,
            "verified": True,
            **confirm_view(stored, surface, files, base_url, verified=True, legacy=legacy),
        }

    def _confirm_problems(
        self, plan: StartupPlanRecord, body: dict[str, Any], target: InstallTarget, files: list[PlannedFile]
    ) -> dict[str, Any]:
        """What does not match the approved plan: the signature the agent saw, the files."""
        problems: list[str] = []
        out: dict[str, Any] = {}
        observed = body.get("observed_signature")
        if observed and not hmac.compare_digest(observed, plan["signature"]):
            problems.append("observed_signature does not match the approved plan")
        dynamic = dynamic_region_ids()
        records, _ = self._records(plan["repo_root"])
        wrong = verify_plan(target.repo_root, [f for f in files if f.region_id not in dynamic])
        wrong += [
            f.path
            for f in files
            if f.region_id in dynamic
            and _region_sha(target, f) != getattr(records.get(f.key), "region_sha", None)
        ]
        if wrong:
            out["mismatched"] = sorted(set(wrong))
            problems.append(
                "the files on disk do not match the approved plan: " + ", ".join(out["mismatched"])
            )
        if problems:
            out["problems"] = problems
            out["message"] = (
                "; ".join(problems) + ". Nothing was recorded; ask the person to"
                " look (memorycloud setup show " + plan["id"] + ")."
            )
        return out

    def _ensure_launcher_key(self, target: InstallTarget) -> None:
        """A working agent key under credential_ref for the launcher (memory scopes only)."""
        key = read_credentials(self.paths).get(target.credential_ref)
        if key and self.store.identities.identity_for_key(key) is not None:
            return
        name = f"launcher:{target.credential_ref}"
        with self.store.transaction():
            existing = [
                a for a in self.store.identities.agents() if a["name"] == name and not a["disabled_at"]
            ]
            if existing:
                key = self.store.identities.issue_key(existing[0]["id"], prefix="mca_")
            else:
                _, key = self.store.identities.create_agent(
                    name, "generic", scopes=["memory:read", "memory:write"], workspace_id=target.workspace_id
                )
        store_credential(self.paths, target.credential_ref, key)

    # -- keeping caches and summary files fresh ---------------------------------------------

    def _write_cache(self, target: InstallTarget, spec: RuntimeSpec) -> None:
        max_chars = spec.max_chars - CACHE_HEADER_ROOM if spec.max_chars else None
        max_tokens = spec.max_tokens - CACHE_HEADER_ROOM // 4 if spec.max_tokens else None
        summary = self.packs.summary_for_cache(
            target.workspace_id, target.project_key, spec.name, max_chars, max_tokens
        )
        write_cache(
            target.repo_root, spec, summary, workspace_id=target.workspace_id, project_key=target.project_key
        )

    def refresh(self, binding_id: str | None = None) -> int:
        """Rewrite caches and summary-bearing files of every active plan; returns how many."""
        done = 0
        for plan in self.store.startup.active_plans(binding_id):
            target, spec, files = self._files(plan)
            if not target.repo_root.is_dir():
                continue  # the repository moved or is on an unmounted disk: try next time
            self._write_cache(target, spec)
            records, owners = self._records(plan["repo_root"])
            dynamic = [f for f in files if f.region_id in dynamic_region_ids()]
            dynamic += _legacy_upgrades(target, files, records)
            if dynamic:
                outcome = apply_plan(target.repo_root, dynamic, records)
                with self.store.transaction():
                    for c in outcome.conflicts:
                        self.store.conflicts.add_conflict(
                            "startup_item_drift",
                            plan["id"],
                            c.path,
                            {
                                "region_id": c.region_id,
                                "reason": c.reason,
                                "repo_root": plan["repo_root"],
                                "during": "refresh",
                            },
                        )
                    for key, record in outcome.records.items():
                        self.store.startup.save_region(
                            plan["repo_root"], key[0], key[1], record.to_dict(), owners.get(key, [plan["id"]])
                        )
            with self.store.transaction():
                self.store.startup.touch_refresh(plan["id"])
            done += 1
        return done

    def bindings_for(self, workspace_id: str, project_key: str | None) -> list[str]:
        """Bindings whose context a write in (workspace, project) changes."""
        return sorted(
            {
                p["binding_id"]
                for p in self.store.startup.active_plans()
                if p["body"]["workspace_id"] == workspace_id
                and (project_key is None or p["body"]["project_key"] == project_key)
            }
        )


def _legacy_upgrades(
    target: InstallTarget, files: list[PlannedFile], records: dict[tuple[str, str], FileRecord]
) -> list[PlannedFile]:
    """Regions an earlier version rewrote with the memory and that are static now (the Cursor
    rule): an untouched old one is replaced by the static text once, so memory leaves the
    working tree without waiting for the person's next approval. One edited by hand is left
    alone (no conflict at every refresh); the next approval reports it."""
    out = []
    for planned in files:
        record = records.get(planned.key)
        if planned.region_id not in legacy_dynamic_region_ids() or record is None:
            continue
        current = _region_sha(target, planned)
        if current == record.region_sha and current != sha256_text(planned.region.render(planned.desired)):
            out.append(planned)
    return out


def _region_sha(target: InstallTarget, planned: PlannedFile) -> str | None:
    return sha256_text(planned.region.extract(read_text(target.repo_root / planned.path)))


def _accept_disk_as_baseline(
    target: InstallTarget, files: list[PlannedFile], records: dict[tuple[str, str], FileRecord]
) -> dict[tuple[str, str], FileRecord]:
    """The person chose the daemon's version over their hand edits: treat what is on disk
    now as the last write, so applying replaces it."""
    updated = dict(records)
    for planned in files:
        current = _region_sha(target, planned)
        record = records.get(planned.key)
        if record is not None:
            updated[planned.key] = FileRecord(**{**record.to_dict(), "region_sha": current})
        elif current is not None:
            text = read_text(target.repo_root / planned.path)
            updated[planned.key] = FileRecord(
                planned.path,
                planned.region_id,
                planned.region.kind,
                created_file=False,
                created_dirs=[],
                original_text=text,
                written_sha=sha256_text(text),
                region_sha=current,
            )
    return updated
