"""Rows for platform updates, their acks and sync intents."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from state.db import Connection
from state.errors import NotFound
from state.ids import now_iso
from state.json_text import compact, loads


class UpdateRecord(TypedDict):
    """A row of platform_updates, its lists decoded from JSON."""

    id: str
    version: str
    severity: str  # required | recommended
    title: str
    summary: str
    requires_repull: list[str]
    next_actions: list[str]
    source: str  # builtin | local | upstream
    published_at: str
    published_by: str | None
    withdrawn_at: str | None


class SyncIntentRecord(TypedDict):
    """A row of sync_intents (a write held back by the sync gate), its JSON decoded."""

    id: str
    identity_id: str
    endpoint: str
    method: str
    path: str
    path_params: dict[str, Any]
    body: dict[str, Any]  # the original write, in full
    importance: int
    blocking_updates: list[dict[str, Any]]  # [{update_id, version}]
    status: str  # blocked | resumed | discarded | expired
    result: Any
    created_at: str
    expires_at: str
    finished_at: str | None
    headers: dict[str, str]


class UpdateAckRecord(TypedDict):
    """A row of update_acks: an identity acked an update at the update's own version."""

    identity_id: str
    update_id: str
    update_version: str
    seen_version: str | None  # what the client reported, kept for audit
    acked_by: str | None
    acked_at: str


def _ack(row: Any) -> UpdateAckRecord:
    return cast(UpdateAckRecord, dict(row))


def _update(row: Any) -> UpdateRecord:
    update = dict(row)
    update["requires_repull"] = loads(update["requires_repull"])
    update["next_actions"] = loads(update["next_actions"])
    return cast(UpdateRecord, update)


def _intent(row: Any) -> SyncIntentRecord:
    intent = dict(row)
    for key in ("path_params", "body", "blocking_updates", "headers"):
        intent[key] = loads(intent[key])
    intent["result"] = loads(intent["result"]) if intent["result"] else None
    return cast(SyncIntentRecord, intent)


class UpdateRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # -- updates -------------------------------------------------------------------------

    def upsert_update(self, update: dict[str, Any]) -> bool:
        """Insert an update unless one with this id exists; True if it was new."""
        cursor = self.conn.execute(
            "insert or ignore into platform_updates (id, version, severity, title, summary,"
            " requires_repull, next_actions, source, published_at, published_by)"
            " values (?,?,?,?,?,?,?,?,?,?)",
            (
                update["id"],
                update["version"],
                update["severity"],
                update["title"],
                update["summary"],
                compact(update.get("requires_repull", [])),
                compact(update.get("next_actions", [])),
                update["source"],
                update.get("published_at") or now_iso(),
                update.get("published_by"),
            ),
        )
        return cursor.rowcount == 1

    def updates(self) -> list[UpdateRecord]:
        rows = self.conn.execute(
            "select * from platform_updates where withdrawn_at is null order by published_at, id"
        )
        return [_update(r) for r in rows]

    def unacked_since(self, identity_id: str, created_at: str) -> list[UpdateRecord]:
        """The live updates published after ``created_at`` that ``identity_id`` has not acked
        at their own version: one statement, usually no row, so checking every agent write
        costs no decoding of the updates it would skip (bench/RESULTS.md, issue #16)."""
        rows = self.conn.execute(
            "select * from platform_updates u where withdrawn_at is null and published_at > ?"
            " and not exists (select 1 from update_acks a where a.identity_id = ?"
            " and a.update_id = u.id and a.update_version = u.version)"
            " order by published_at, id",
            (created_at, identity_id),
        )
        return [_update(r) for r in rows]

    def update(self, update_id: str) -> UpdateRecord:
        row = self.conn.execute("select * from platform_updates where id = ?", (update_id,)).fetchone()
        if row is None:
            raise NotFound(f"update {update_id} not found")
        return _update(row)

    def acks(self, identity_id: str) -> dict[tuple[str, str], UpdateAckRecord]:
        """The identity's acks, by (update id, the version acked)."""
        acks = [
            _ack(r)
            for r in self.conn.execute("select * from update_acks where identity_id = ?", (identity_id,))
        ]
        return {(a["update_id"], a["update_version"]): a for a in acks}

    def ack(self, identity_id: str, update: UpdateRecord, seen_version: str | None, acked_by: str) -> bool:
        """Record an ack at the update's own version; False if it was already acked."""
        cursor = self.conn.execute(
            "insert or ignore into update_acks (identity_id, update_id, update_version,"
            " seen_version, acked_by, acked_at) values (?,?,?,?,?,?)",
            (identity_id, update["id"], update["version"], seen_version, acked_by, now_iso()),
        )
        return cursor.rowcount == 1

    # -- sync intents ------------------------------------------------------------------------

    def insert_intent(self, intent: dict[str, Any]) -> None:
        self.conn.execute(
            "insert into sync_intents (id, identity_id, endpoint, method, path, path_params, body,"
            " importance, blocking_updates, status, created_at, expires_at, headers)"
            " values (?,?,?,?,?,?,?,?,?, 'blocked', ?, ?, ?)",
            (
                intent["id"],
                intent["identity_id"],
                intent["endpoint"],
                intent["method"],
                intent["path"],
                compact(intent["path_params"]),
                compact(intent["body"]),
                intent["importance"],
                compact(intent["blocking_updates"]),
                intent["created_at"],
                intent["expires_at"],
                compact(intent.get("headers") or {}),
            ),
        )

    def intent(self, intent_id: str) -> SyncIntentRecord:
        row = self.conn.execute("select * from sync_intents where id = ?", (intent_id,)).fetchone()
        if row is None:
            raise NotFound(f"sync intent {intent_id} not found")
        return _intent(row)

    def intents(self, identity_id: str | None = None, status: str | None = None) -> list[SyncIntentRecord]:
        query, params = "select * from sync_intents where 1 = 1", list[str]()
        if identity_id is not None:
            query, params = query + " and identity_id = ?", [*params, identity_id]
        if status is not None:
            query, params = query + " and status = ?", [*params, status]
        return [_intent(r) for r in self.conn.execute(query + " order by created_at", params)]

    def finish_intent(self, intent_id: str, status: str, result: Any = None) -> bool:
        """Move a blocked intent to its final status; False if it was no longer blocked
        (so a second resume can never replay the write again)."""
        cursor = self.conn.execute(
            "update sync_intents set status = ?, result = ?, finished_at = ?"
            " where id = ? and status = 'blocked'",
            (status, compact(result) if result is not None else None, now_iso(), intent_id),
        )
        return cursor.rowcount == 1

    def set_intent_result(self, intent_id: str, result: Any) -> None:
        """The answer of a resumed intent's replayed write."""
        self.conn.execute("update sync_intents set result = ? where id = ?", (compact(result), intent_id))

    def expire_intents(self, now: str) -> int:
        cursor = self.conn.execute(
            "update sync_intents set status = 'expired', finished_at = ?"
            " where status = 'blocked' and expires_at <= ?",
            (now, now),
        )
        return cursor.rowcount
