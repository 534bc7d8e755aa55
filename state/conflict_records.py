"""The conflicts inbox: anything the daemon would not decide alone waits here for a person
(drifted startup-item regions, suite facts that contradict workspace memory, ...)."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from state.db import Connection
from state.errors import NotFound
from state.ids import new_id, now_iso
from state.json_text import compact, loads


class ConflictRecord(TypedDict):
    """A row of conflicts, its detail decoded from JSON."""

    id: str
    kind: str  # startup_item_drift, memory_store_occ, suite_fact_contradiction, upstream_sync
    subject_id: str | None  # the plan, the memory, ...
    path: str | None
    detail: dict[str, Any]
    status: str  # open | resolved
    created_at: str
    resolved_at: str | None
    resolution: str | None


class ConflictRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add_conflict(
        self,
        kind: str,
        subject_id: str | None,
        path: str | None,
        detail: dict[str, Any],
        *,
        dedupe: bool = True,
    ) -> ConflictRecord:
        """Record an open conflict. With ``dedupe`` an identical open one is reused (a drift
        seen at every refresh); without it every conflict is kept (each losing write)."""
        existing = (
            self.conn.execute(
                "select id from conflicts where kind = ? and subject_id is ? and path is ?"
                " and status = 'open'",
                (kind, subject_id, path),
            ).fetchone()
            if dedupe
            else None
        )
        if existing:
            return self.conflict(existing[0])
        conflict_id = new_id("conf_")
        self.conn.execute(
            "insert into conflicts (id, kind, subject_id, path, detail, status, created_at)"
            " values (?,?,?,?,?, 'open', ?)",
            (conflict_id, kind, subject_id, path, compact(detail), now_iso()),
        )
        return self.conflict(conflict_id)

    def is_open(self, kind: str, subject_id: str) -> bool:
        """Whether an open conflict of this kind holds ``subject_id``."""
        return (
            self.conn.execute(
                "select 1 from conflicts where kind = ? and subject_id = ? and status = 'open'",
                (kind, subject_id),
            ).fetchone()
            is not None
        )

    def update_detail(self, conflict_id: str, detail: dict[str, Any]) -> None:
        self.conn.execute("update conflicts set detail = ? where id = ?", (compact(detail), conflict_id))

    def conflict(self, conflict_id: str) -> ConflictRecord:
        row = self.conn.execute("select * from conflicts where id = ?", (conflict_id,)).fetchone()
        if row is None:
            raise NotFound(f"conflict {conflict_id} not found")
        conflict = dict(row)
        conflict["detail"] = loads(conflict["detail"])
        return cast(ConflictRecord, conflict)

    def conflicts(self, status: str | None = "open") -> list[ConflictRecord]:
        query, params = "select id from conflicts", list[str]()
        if status:
            query, params = query + " where status = ?", [status]
        return [self.conflict(r[0]) for r in self.conn.execute(query + " order by created_at", params)]

    def resolve_conflict(self, conflict_id: str, resolution: str) -> None:
        """Mark one open conflict resolved by ``resolution``; a resolved one stays as it was."""
        self.conn.execute(
            "update conflicts set status = 'resolved', resolved_at = ?, resolution = ?"
            " where id = ? and status = 'open'",
            (now_iso(), resolution, conflict_id),
        )

    def resolve_conflicts(self, subject_id: str, resolution: str) -> int:
        cursor = self.conn.execute(
            "update conflicts set status = 'resolved', resolved_at = ?, resolution = ?"
            " where subject_id = ? and status = 'open'",
            (now_iso(), resolution, subject_id),
        )
        return cursor.rowcount
