"""Rows for startup items: install plans, the managed regions written for them, hook runs."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from state.db import Connection
from state.errors import NotFound
from state.ids import now_iso
from state.json_text import compact, loads


class StartupPlanRecord(TypedDict):
    """A row of startup_plans (an install plan), its body decoded from JSON."""

    id: str
    binding_id: str
    runtime: str
    repo_root: str
    credential_ref: str
    # pending_approval | rejected | conflict | applied | installed | fallback_active | removed
    status: str
    body: dict[str, Any]  # the amp.startup-item-install-plan.v1 answer, kept up to date
    signature: str
    created_by: str | None
    decided_by: str | None
    created_at: str
    decided_at: str | None
    applied_at: str | None
    confirmed_at: str | None
    removed_at: str | None
    last_refresh_at: str | None


class ManagedRegion(TypedDict):
    """The record and owners of a managed_regions row (the rest is its key), decoded."""

    record: dict[str, Any]  # startup_items.installer.FileRecord's fields
    owners: list[str]  # the plans sharing the region


class HookRunRecord(TypedDict):
    """Some columns of a startup_hook_runs row (the binding and runtime were asked for)."""

    event: str  # session-start | pre-compact
    source: str | None  # SessionStart's source: startup, resume, clear, ...
    first_run_at: str
    last_run_at: str
    runs: int


def _plan(row: Any) -> StartupPlanRecord:
    plan = dict(row)
    plan["body"] = loads(plan["body"])
    return cast(StartupPlanRecord, plan)


class StartupRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # -- plans ---------------------------------------------------------------------------

    def insert_plan(self, plan: StartupPlanRecord) -> None:
        self.conn.execute(
            "insert into startup_plans (id, binding_id, runtime, repo_root, credential_ref,"
            " status, body, signature, created_by, created_at) values (?,?,?,?,?,?,?,?,?,?)",
            (
                plan["id"],
                plan["binding_id"],
                plan["runtime"],
                plan["repo_root"],
                plan["credential_ref"],
                plan["status"],
                compact(plan["body"]),
                plan["signature"],
                plan["created_by"],
                plan["created_at"],
            ),
        )

    def plan(self, plan_id: str) -> StartupPlanRecord:
        row = self.conn.execute("select * from startup_plans where id = ?", (plan_id,)).fetchone()
        if row is None:
            raise NotFound(f"install plan {plan_id} not found")
        return _plan(row)

    def plans(self, status: str | None = None) -> list[StartupPlanRecord]:
        if status is None:
            rows = self.conn.execute("select * from startup_plans order by created_at desc")
        else:
            rows = self.conn.execute(
                "select * from startup_plans where status = ? order by created_at desc", (status,)
            )
        return [_plan(r) for r in rows]

    def active_plans(self, binding_id: str | None = None) -> list[StartupPlanRecord]:
        """Plans whose files are on disk (applied, installed or fallback_active)."""
        query = "select * from startup_plans where status in ('applied', 'installed', 'fallback_active')"
        params: tuple = ()
        if binding_id is not None:
            query += " and binding_id = ?"
            params = (binding_id,)
        return [_plan(r) for r in self.conn.execute(query + " order by created_at", params)]

    def set_status(
        self,
        plan_id: str,
        status: str,
        *,
        stamp: str | None = None,
        decided_by: str | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        now = now_iso()
        sets, params = ["status = ?"], [status]
        if stamp:
            sets.append(f"{stamp} = ?")
            params.append(now)
        if decided_by:
            sets.append("decided_by = ?")
            params.append(decided_by)
        if body is not None:
            sets.append("body = ?")
            params.append(compact(body))
        self.conn.execute(f"update startup_plans set {', '.join(sets)} where id = ?", (*params, plan_id))

    def touch_refresh(self, plan_id: str) -> None:
        self.conn.execute("update startup_plans set last_refresh_at = ? where id = ?", (now_iso(), plan_id))

    # -- managed regions -------------------------------------------------------------------

    def regions(self, repo_root: str) -> dict[tuple[str, str], ManagedRegion]:
        rows = self.conn.execute(
            "select path, region_id, record, owners from managed_regions where repo_root = ?", (repo_root,)
        ).fetchall()
        return {
            (r["path"], r["region_id"]): {
                "record": loads(r["record"]),
                "owners": loads(r["owners"]),
            }
            for r in rows
        }

    def save_region(
        self, repo_root: str, path: str, region_id: str, record: dict[str, Any], owners: list[str]
    ) -> None:
        self.conn.execute(
            "insert into managed_regions (repo_root, path, region_id, record, owners, updated_at)"
            " values (?,?,?,?,?,?) on conflict (repo_root, path, region_id) do update set"
            " record = excluded.record, owners = excluded.owners, updated_at = excluded.updated_at",
            (repo_root, path, region_id, compact(record), compact(owners), now_iso()),
        )

    def delete_region(self, repo_root: str, path: str, region_id: str) -> None:
        self.conn.execute(
            "delete from managed_regions where repo_root = ? and path = ? and region_id = ?",
            (repo_root, path, region_id),
        )

    # -- hook runs (m0015) -------------------------------------------------------------------

    def record_hook_run(
        self, binding_id: str, runtime: str, event: str, source: str | None, identity_id: str | None
    ) -> None:
        """Count one run of a startup item's hook; the last run's time and source are kept."""
        now = now_iso()
        self.conn.execute(
            "insert into startup_hook_runs (binding_id, runtime, event, source, identity_id,"
            " first_run_at, last_run_at) values (?,?,?,?,?,?,?)"
            " on conflict (binding_id, runtime, event) do update set source = excluded.source,"
            " identity_id = excluded.identity_id, last_run_at = excluded.last_run_at,"
            " runs = startup_hook_runs.runs + 1",
            (binding_id, runtime, event, source, identity_id, now, now),
        )

    def hook_runs(self, binding_id: str, runtime: str) -> dict[str, HookRunRecord]:
        """The runs of one binding's hooks for one runtime, by event."""
        rows = self.conn.execute(
            "select event, source, first_run_at, last_run_at, runs from startup_hook_runs"
            " where binding_id = ? and runtime = ?",
            (binding_id, runtime),
        ).fetchall()
        return {r["event"]: cast(HookRunRecord, dict(r)) for r in rows}
