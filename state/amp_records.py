"""Rows of AMP's runtime tables: briefs and their events, context packs, receipts, memory
deltas, summary cards and adaptive memory runs. Plain data access; the rules live in
``daemon/runtime``."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from state.db import Connection
from state.errors import NotFound
from state.ids import new_id, now_iso
from state.json_text import compact, loads


class ContextPackRecord(TypedDict):
    """A row of context_packs, its body decoded from JSON."""

    id: str
    identity_id: str | None
    workspace_id: str
    project_key: str | None
    project_binding_id: str | None
    runtime: str | None
    reason: str | None
    body: dict[str, Any]  # the amp.context-pack.v1 answer, as returned
    created_at: str


class ReceiptRecord(TypedDict):
    """A row of receipts (a context pack's receipt)."""

    id: str
    context_pack_id: str
    identity_id: str | None
    workspace_id: str
    project_key: str | None
    summary_sha256: str
    issued_at: str
    expires_at: str
    verified_at: str | None
    last_used_at: str | None


class SummaryCardRecord(TypedDict):
    """A row of summary_cards."""

    id: str
    workspace_id: str
    project_key: str | None
    source_type: str  # memory_delta | brief_event
    source_id: str  # the delta's id
    title: str
    body: str
    importance: int
    memory_id: str | None
    created_at: str


class MemoryBriefRecord(TypedDict):
    """A row of memory_briefs, its JSON columns decoded."""

    id: str
    identity_id: str | None
    workspace_id: str
    project_key: str | None
    task: str
    request: dict[str, Any]  # the request body the brief was made for
    brief_markdown: str
    source_counts: dict[str, int]
    context_pack_id: str | None
    receipt_id: str | None
    created_at: str
    sources: dict[str, Any]  # carry_in, project_state, handoff, ...; {} before m0014


class BriefEventRecord(TypedDict):
    """A row of brief_events, its payload decoded from JSON."""

    id: str
    brief_id: str
    event_type: str
    summary: str
    importance: int
    payload: dict[str, Any]
    identity_id: str | None
    memory_id: str | None  # the memory record the event is mirrored into
    delta_id: str | None
    created_at: str


class RecentBriefEvent(TypedDict):
    """Some columns of a brief_events row: a brief's recent events (served as they are)."""

    id: str
    brief_id: str
    event_type: str
    summary: str
    importance: int
    created_at: str


class AdaptiveRunRecord(TypedDict):
    """A row of adaptive_runs (a memory form run), its JSON columns decoded."""

    id: str
    identity_id: str | None
    workspace_id: str
    project_key: str | None
    task: str
    request: dict[str, Any]
    selection: dict[str, Any]  # the chosen memory type, its alternatives and form schema
    status: str  # selected | submitted
    created_at: str
    submitted_at: str | None
    memory_ids: list[str]  # the memories a submit stored


def _event(row: Any) -> BriefEventRecord:
    event = dict(row)
    event["payload"] = loads(event["payload"])
    return cast(BriefEventRecord, event)


class AmpRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # -- context packs and receipts ------------------------------------------------------

    def insert_pack(
        self,
        pack_id: str,
        *,
        identity_id: str,
        workspace_id: str,
        project_key: str | None,
        binding_id: str | None,
        runtime: str,
        reason: str,
        body: dict[str, Any],
        created_at: str,
    ) -> None:
        self.conn.execute(
            "insert into context_packs (id, identity_id, workspace_id, project_key,"
            " project_binding_id, runtime, reason, body, created_at) values (?,?,?,?,?,?,?,?,?)",
            (
                pack_id,
                identity_id,
                workspace_id,
                project_key,
                binding_id,
                runtime,
                reason,
                compact(body),
                created_at,
            ),
        )

    def pack(self, pack_id: str) -> ContextPackRecord:
        row = self.conn.execute("select * from context_packs where id = ?", (pack_id,)).fetchone()
        if row is None:
            raise NotFound(f"context pack {pack_id} not found")
        result = dict(row)
        result["body"] = loads(result["body"])
        return cast(ContextPackRecord, result)

    def count_packs(self) -> int:
        """How many context packs have been built (every identity, every workspace)."""
        return self.conn.execute("select count(*) from context_packs").fetchone()[0]

    def insert_receipt(self, receipt: dict[str, Any], *, identity_id: str) -> None:
        self.conn.execute(
            "insert into receipts (id, context_pack_id, identity_id, workspace_id, project_key,"
            " summary_sha256, issued_at, expires_at) values (?,?,?,?,?,?,?,?)",
            (
                receipt["receipt_id"],
                receipt["context_pack_id"],
                identity_id,
                receipt["workspace_id"],
                receipt["project_key"],
                receipt["summary_sha256"],
                receipt["issued_at"],
                receipt["expires_at"],
            ),
        )

    def receipt(self, receipt_id: str) -> ReceiptRecord | None:
        row = self.conn.execute("select * from receipts where id = ?", (receipt_id,)).fetchone()
        return cast(ReceiptRecord, dict(row)) if row else None

    def touch_receipt(self, receipt_id: str, *, verified: bool = False) -> None:
        column = "verified_at" if verified else "last_used_at"
        self.conn.execute(f"update receipts set {column} = ? where id = ?", (now_iso(), receipt_id))

    # -- memory deltas and summary cards -------------------------------------------------

    def insert_delta(self, delta: dict[str, Any]) -> None:
        self.conn.execute(
            "insert into memory_deltas (id, receipt_id, context_pack_id, identity_id,"
            " workspace_id, project_key, delta_type, summary, why_it_matters, triggers,"
            " importance, source, source_id, memory_id, created_at)"
            " values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                delta["id"],
                delta.get("receipt_id"),
                delta.get("context_pack_id"),
                delta.get("identity_id"),
                delta["workspace_id"],
                delta.get("project_key"),
                delta["delta_type"],
                delta["summary"],
                delta.get("why_it_matters"),
                compact(delta.get("retrieval_triggers", [])),
                delta["importance"],
                delta["source"],
                delta.get("source_id"),
                delta.get("memory_id"),
                delta["created_at"],
            ),
        )

    def insert_card(
        self,
        *,
        workspace_id: str,
        project_key: str | None,
        source_type: str,
        source_id: str,
        title: str,
        body: str,
        importance: int,
        memory_id: str | None,
    ) -> SummaryCardRecord:
        card: SummaryCardRecord = {
            "id": new_id("card_"),
            "workspace_id": workspace_id,
            "project_key": project_key,
            "source_type": source_type,
            "source_id": source_id,
            "title": title,
            "body": body,
            "importance": importance,
            "memory_id": memory_id,
            "created_at": now_iso(),
        }
        self.conn.execute(
            "insert into summary_cards (id, workspace_id, project_key, source_type, source_id,"
            " title, body, importance, memory_id, created_at) values (?,?,?,?,?,?,?,?,?,?)",
            tuple(card.values()),
        )
        return card

    # -- briefs and events ---------------------------------------------------------------

    def insert_brief(self, brief: MemoryBriefRecord) -> None:
        self.conn.execute(
            "insert into memory_briefs (id, identity_id, workspace_id, project_key, task, request,"
            " brief_markdown, source_counts, context_pack_id, receipt_id, created_at, sources)"
            " values (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                brief["id"],
                brief["identity_id"],
                brief["workspace_id"],
                brief["project_key"],
                brief["task"],
                compact(brief["request"]),
                brief["brief_markdown"],
                compact(brief["source_counts"]),
                brief["context_pack_id"],
                brief["receipt_id"],
                brief["created_at"],
                compact(brief["sources"]),
            ),
        )

    def brief(self, brief_id: str) -> MemoryBriefRecord:
        row = self.conn.execute("select * from memory_briefs where id = ?", (brief_id,)).fetchone()
        if row is None:
            raise NotFound(f"memory brief {brief_id} not found")
        brief = dict(row)
        brief["request"] = loads(brief["request"])
        brief["source_counts"] = loads(brief["source_counts"])
        brief["sources"] = loads(brief["sources"])
        return cast(MemoryBriefRecord, brief)

    def insert_event(self, event: BriefEventRecord) -> None:
        self.conn.execute(
            "insert into brief_events (id, brief_id, event_type, summary, importance, payload,"
            " identity_id, memory_id, delta_id, created_at) values (?,?,?,?,?,?,?,?,?,?)",
            (
                event["id"],
                event["brief_id"],
                event["event_type"],
                event["summary"],
                event["importance"],
                compact(event["payload"]),
                event.get("identity_id"),
                event.get("memory_id"),
                event.get("delta_id"),
                event["created_at"],
            ),
        )

    def event_for_memory(self, memory_id: str) -> BriefEventRecord | None:
        """The brief event a memory record mirrors, if any."""
        row = self.conn.execute("select * from brief_events where memory_id = ?", (memory_id,)).fetchone()
        return _event(row) if row is not None else None

    def events(self, brief_id: str, limit: int = 200) -> list[BriefEventRecord]:
        rows = self.conn.execute(
            "select * from brief_events where brief_id = ? order by created_at, id limit cast(? as integer)",
            (brief_id, limit),
        ).fetchall()
        return [_event(row) for row in rows]

    def handoff_event(self, workspace_id: str, code: str) -> BriefEventRecord | None:
        """The newest event of this workspace whose id, or whose brief's id, is ``code``."""
        row = self.conn.execute(
            "select e.* from brief_events e join memory_briefs b on b.id = e.brief_id"
            " where b.workspace_id = ? and (e.id = ? or e.brief_id = ?)"
            " order by e.created_at desc limit 1",
            (workspace_id, code, code),
        ).fetchone()
        return _event(row) if row is not None else None

    def latest_handoff(self, workspace_id: str, project_key: str | None) -> BriefEventRecord | None:
        """The workspace's newest ``handoff_ready`` event (of the project's briefs, if one is
        given)."""
        # Newest handoff_ready events first (brief_events_type_newest, m0017), not a join of
        # every brief of the workspace; the newer of two at the same millisecond wins.
        row = self.conn.execute(
            "select e.* from brief_events e cross join memory_briefs b on b.id = e.brief_id"
            " where b.workspace_id = ? and e.event_type = 'handoff_ready'"
            " and (? is null or b.project_key = ?) order by e.created_at desc, e.id desc limit 1",
            (workspace_id, project_key, project_key),
        ).fetchone()
        return _event(row) if row else None

    def recent_events(self, workspace_id: str, project_key: str | None, limit: int) -> list[RecentBriefEvent]:
        # Events newest first (brief_events_newest, m0017), each checked against its brief:
        # the CROSS JOIN keeps that order, so the walk stops at the limit instead of
        # joining every brief the workspace ever had.
        rows = self.conn.execute(
            "select e.id, e.brief_id, e.event_type, e.summary, e.importance, e.created_at"
            " from brief_events e cross join memory_briefs b on b.id = e.brief_id"
            " where b.workspace_id = ? and (? is null or b.project_key = ? or b.project_key is null)"
            " order by e.created_at desc, e.id desc limit cast(? as integer)",
            (workspace_id, project_key, project_key, limit),
        ).fetchall()
        return [cast(RecentBriefEvent, dict(r)) for r in rows]

    # -- adaptive memory runs -------------------------------------------------------------

    def insert_run(self, run: dict[str, Any]) -> None:
        self.conn.execute(
            "insert into adaptive_runs (id, identity_id, workspace_id, project_key, task, request,"
            " selection, status, created_at) values (?,?,?,?,?,?,?, 'selected', ?)",
            (
                run["id"],
                run["identity_id"],
                run["workspace_id"],
                run["project_key"],
                run["task"],
                compact(run["request"]),
                compact(run["selection"]),
                run["created_at"],
            ),
        )

    def run(self, run_id: str) -> AdaptiveRunRecord:
        row = self.conn.execute("select * from adaptive_runs where id = ?", (run_id,)).fetchone()
        if row is None:
            raise NotFound(f"memory form {run_id} not found")
        run = dict(row)
        for key in ("request", "selection", "memory_ids"):
            run[key] = loads(run[key])
        return cast(AdaptiveRunRecord, run)

    def mark_run_submitted(self, run_id: str, memory_ids: list[str]) -> None:
        self.conn.execute(
            "update adaptive_runs set status = 'submitted', submitted_at = ?, memory_ids = ? where id = ?",
            (now_iso(), compact(memory_ids), run_id),
        )
