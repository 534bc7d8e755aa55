"""Rows of upstream sync: the connection state, the outbox, links, the changes feed and
idempotent responses (see migrations m0009 and m0012)."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from state.db import Connection
from state.ids import now_iso
from state.json_text import compact, loads


class OutboxEntryRecord(TypedDict):
    """A row of upstream_outbox (a local change on its way upstream), its JSON decoded."""

    seq: int
    memory_id: str  # the record's id, or suite:SLUG for a suite sync
    version: int
    operation: str  # created | updated | deleted | reverted | redacted | suite_sync
    content_sha256: str | None  # the redacted content, for 'redacted'
    body: dict[str, Any] | None  # the original request, for 'suite_sync'
    idempotency_key: str
    status: str  # pending | sent | interrupted | held | superseded | skipped | discarded
    attempts: int
    next_attempt_at: str | None
    last_error: str | None
    upstream_sync_intent_id: str | None
    result: Any  # the upstream's answer, or its sync interrupt (None until there is one)
    created_at: str
    finished_at: str | None


class UpstreamLinkRecord(TypedDict):
    """A row of upstream_links: which upstream object a local one is."""

    local_id: str
    upstream_id: str
    kind: str  # memory | delta | brief | suite
    upstream_version: int | None
    local_version: int | None
    synced_sha256: str | None
    updated_at: str
    upstream_updated_at: str | None  # the upstream's updated_at when last pulled (m0012)
    upstream_sha256: str | None  # digest of the content pulled then (m0012)


class ChangeRow(TypedDict):
    """One change of the changes feed: a sync_changelog row (``change_sha256`` is its
    content_sha256) joined with that version (memory_versions) and its record
    (memory_records; ``current_version`` is the record's version), JSON decoded."""

    seq: int
    change: str  # version | redaction
    memory_id: str
    version: int
    change_sha256: str | None
    operation: str  # created | updated | deleted | reverted
    title: str
    content: str | None  # None once redacted
    importance: int
    content_sha256: str
    redacted_at: str | None
    namespace: str
    project_key: str | None
    path: str | None
    kind: str
    triggers: list[str]
    provenance: dict[str, Any]
    source: str
    current_version: int


def _entry(row: Any) -> OutboxEntryRecord:
    entry = dict(row)
    for key in ("body", "result"):
        entry[key] = loads(entry[key]) if entry[key] else None
    return cast(OutboxEntryRecord, entry)


def _link(row: Any) -> UpstreamLinkRecord:
    return cast(UpstreamLinkRecord, dict(row))


class UpstreamRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # -- connection state ---------------------------------------------------------------

    def state(self) -> dict[str, str]:
        return {r["key"]: r["value"] for r in self.conn.execute("select key, value from upstream_state")}

    def get(self, key: str) -> str | None:
        row = self.conn.execute("select value from upstream_state where key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, **values: Any) -> None:
        for key, value in values.items():
            if value is None:
                self.conn.execute("delete from upstream_state where key = ?", (key,))
            else:
                self.conn.execute(
                    "insert into upstream_state (key, value) values (?, ?)"
                    " on conflict (key) do update set value = excluded.value",
                    (key, str(value)),
                )

    def forget(self) -> None:
        """Disconnect: the state, links and unsent outbox go; the local memory stays."""
        for table in ("upstream_state", "upstream_links", "upstream_outbox"):
            self.conn.execute(f"delete from {table}")

    # -- outbox -------------------------------------------------------------------------

    def due(self, now: str, limit: int = 100) -> list[OutboxEntryRecord]:
        rows = self.conn.execute(
            "select * from upstream_outbox where status = 'pending'"
            " and (next_attempt_at is null or next_attempt_at <= ?) order by seq limit cast(? as integer)",
            (now, limit),
        ).fetchall()
        return [_entry(r) for r in rows]

    def entries(self, status: str | None = None, limit: int = 200) -> list[OutboxEntryRecord]:
        query, params = "select * from upstream_outbox", []
        if status:
            query += " where status = ?"
            params.append(status)
        rows = self.conn.execute(
            query + " order by seq desc limit cast(? as integer)", (*params, limit)
        ).fetchall()
        return [_entry(r) for r in rows]

    def entry(self, seq: int) -> OutboxEntryRecord | None:
        row = self.conn.execute("select * from upstream_outbox where seq = ?", (seq,)).fetchone()
        return _entry(row) if row else None

    def finish(self, seq: int, status: str, result: Any = None, error: str | None = None) -> None:
        self.conn.execute(
            "update upstream_outbox set status = ?, result = ?, last_error = ?, finished_at = ?,"
            " attempts = attempts + 1 where seq = ?",
            (status, compact(result) if result is not None else None, error, now_iso(), seq),
        )

    def retry_later(self, seq: int, error: str, next_attempt_at: str) -> None:
        self.conn.execute(
            "update upstream_outbox set attempts = attempts + 1, last_error = ?, next_attempt_at = ?"
            " where seq = ?",
            (error, next_attempt_at, seq),
        )

    def interrupt(self, seq: int, intent_id: str | None, detail: Any) -> None:
        self.conn.execute(
            "update upstream_outbox set status = 'interrupted', upstream_sync_intent_id = ?,"
            " result = ?, attempts = attempts + 1 where seq = ?",
            (intent_id, compact(detail), seq),
        )

    def enqueue_suite_sync(self, slug: str, body: dict[str, Any]) -> None:
        """A suite sync has no memory record to point at: keep its request (no files)."""
        if self.get("local_workspace_id") is None:
            return
        self.conn.execute(
            "insert into upstream_outbox (memory_id, version, operation, body, created_at)"
            " values (?, 0, 'suite_sync', ?, ?)",
            (f"suite:{slug}", compact(body), now_iso()),
        )

    def cover_suite_syncs(self, slug: str) -> None:
        """The suite was sent whole: its pending syncs are in it already."""
        self.conn.execute(
            "update upstream_outbox set status = 'sent', finished_at = ?,"
            ' result = \'{"covered_by":"import"}\' where memory_id = ?'
            " and operation = 'suite_sync' and status = 'pending'",
            (now_iso(), f"suite:{slug}"),
        )

    def requeue(self, seq: int) -> None:
        """Send this change again (an interrupted write the upstream cannot resume)."""
        self.conn.execute(
            "update upstream_outbox set status = 'pending', next_attempt_at = null where seq = ?", (seq,)
        )

    def backfill(self, namespace: str) -> int:
        """Queue every live record of a namespace (connecting a store that has memory) that
        is not already upstream or on its way there."""
        cursor = self.conn.execute(
            "insert into upstream_outbox (memory_id, version, operation, created_at)"
            " select id, version, 'created', ? from memory_records where deleted_at is null"
            " and json_extract(provenance, '$.upstream_id') is null"
            " and id not in (select local_id from upstream_links)"
            " and id not in (select memory_id from upstream_outbox"
            "                where status in ('pending', 'interrupted', 'held'))"
            " and (namespace = ? or namespace like 'memstore!_%' escape '!') order by seq",
            (now_iso(), namespace),
        )
        return cursor.rowcount

    def supersede_older(self, memory_id: str, seq: int) -> None:
        """Older pending changes of a record are covered by sending its current state."""
        self.conn.execute(
            "update upstream_outbox set status = 'superseded', finished_at = ? where memory_id = ?"
            " and seq < ? and status = 'pending' and operation != 'redacted'",
            (now_iso(), memory_id, seq),
        )

    def hold(self, memory_id: str) -> None:
        """A conflict waits for a person: the record's pending changes are held."""
        self.conn.execute(
            "update upstream_outbox set status = 'held' where memory_id = ?"
            " and status = 'pending' and operation != 'redacted'",
            (memory_id,),
        )

    def release(self, memory_id: str, *, resend: bool) -> None:
        """After the person decided: held changes are covered; ``resend`` queues the record's
        current state again (keep current)."""
        self.conn.execute(
            "update upstream_outbox set status = 'superseded', finished_at = ?"
            " where memory_id = ? and status = 'held'",
            (now_iso(), memory_id),
        )
        if resend:
            row = self.conn.execute(
                "select version from memory_records where id = ?", (memory_id,)
            ).fetchone()
            if row:
                self.conn.execute(
                    "insert into upstream_outbox (memory_id, version, operation, created_at)"
                    " values (?, ?, 'updated', ?)",
                    (memory_id, row[0], now_iso()),
                )

    def drop_echo(self, memory_id: str, since_seq: int) -> None:
        """Changes that came from the upstream are not sent back to it."""
        self.conn.execute(
            "delete from upstream_outbox where memory_id = ? and seq > ?", (memory_id, since_seq)
        )

    def last_seq(self) -> int:
        return self.conn.execute("select coalesce(max(seq), 0) from upstream_outbox").fetchone()[0]

    def counts(self) -> dict[str, int]:
        """Outbox entries by status: the unsent (pending, held, interrupted) and the finished
        (sent, superseded, skipped, discarded) alike."""
        return {
            r[0]: r[1]
            for r in self.conn.execute("select status, count(*) from upstream_outbox group by status")
        }

    # -- links --------------------------------------------------------------------------

    def link(self, local_id: str) -> UpstreamLinkRecord | None:
        row = self.conn.execute("select * from upstream_links where local_id = ?", (local_id,)).fetchone()
        return _link(row) if row else None

    def link_by_upstream(self, upstream_id: str) -> UpstreamLinkRecord | None:
        row = self.conn.execute(
            "select * from upstream_links where upstream_id = ?", (upstream_id,)
        ).fetchone()
        return _link(row) if row else None

    def save_link(
        self,
        local_id: str,
        upstream_id: str,
        kind: str,
        *,
        upstream_version: int | None,
        local_version: int | None,
        synced_sha256: str | None,
    ) -> None:
        self.conn.execute(
            "insert into upstream_links (local_id, upstream_id, kind, upstream_version,"
            " local_version, synced_sha256, updated_at) values (?,?,?,?,?,?,?)"
            " on conflict (local_id) do update set upstream_id = excluded.upstream_id,"
            " kind = excluded.kind, upstream_version = excluded.upstream_version,"
            " local_version = excluded.local_version, synced_sha256 = excluded.synced_sha256,"
            " updated_at = excluded.updated_at",
            (local_id, upstream_id, kind, upstream_version, local_version, synced_sha256, now_iso()),
        )

    def mark_pulled(self, local_id: str, *, upstream_updated_at: str, upstream_sha256: str | None) -> None:
        """What the read-endpoint pull last saw of the upstream's record (``save_link`` keeps
        these as they are)."""
        self.conn.execute(
            "update upstream_links set upstream_updated_at = ?,"
            " upstream_sha256 = coalesce(?, upstream_sha256), updated_at = ? where local_id = ?",
            (upstream_updated_at, upstream_sha256, now_iso(), local_id),
        )

    # -- the changes feed (cloud role) --------------------------------------------------------

    def changes(self, namespaces: list[str], cursor: int, limit: int) -> list[ChangeRow]:
        """Changes after ``cursor`` to records in ``namespaces``, each with the record's
        fields and that version's content (None once redacted)."""
        marks = ",".join("?" * len(namespaces))
        rows = self.conn.execute(
            f"select c.seq, c.change, c.memory_id, c.version, c.content_sha256 as change_sha256,"
            f" v.operation, v.title, v.content, v.importance, v.content_sha256, v.redacted_at,"
            f" r.namespace, r.project_key, r.path, r.kind, r.triggers, r.provenance, r.source,"
            f" r.version as current_version"
            f" from sync_changelog c join memory_records r on r.id = c.memory_id"
            f" join memory_versions v on v.memory_id = c.memory_id and v.version = c.version"
            f" where c.seq > ? and r.namespace in ({marks}) order by c.seq limit cast(? as integer)",
            (cursor, *namespaces, limit),
        ).fetchall()
        out = []
        for row in rows:
            change = dict(row)
            change["triggers"] = loads(change["triggers"])
            change["provenance"] = loads(change["provenance"])
            out.append(cast(ChangeRow, change))
        return out

    def latest_change(self) -> int:
        return self.conn.execute("select coalesce(max(seq), 0) from sync_changelog").fetchone()[0]

    def synced_copy(self, namespace: str, identity_id: str, origin_memory_id: str) -> str | None:
        """The id of the record this identity already sent into ``namespace`` as a copy of
        its ``origin_memory_id`` (deleted or not), if it did."""
        row = self.conn.execute(
            "select id from memory_records where namespace = ? and identity_id = ?"
            " and json_extract(provenance, '$.origin_memory_id') = ?",
            (namespace, identity_id, origin_memory_id),
        ).fetchone()
        return row[0] if row else None

    # -- idempotent responses -----------------------------------------------------------------

    def response(self, identity_id: str, key: str) -> tuple[int, Any] | None:
        row = self.conn.execute(
            "select status, body from idempotent_responses where identity_id = ? and key = ?",
            (identity_id, key),
        ).fetchone()
        return (row[0], loads(row[1])) if row else None

    def remember_response(self, identity_id: str, key: str, status: int, body: Any) -> None:
        self.conn.execute(
            "insert or ignore into idempotent_responses (identity_id, key, status, body, created_at)"
            " values (?,?,?,?,?)",
            (identity_id, key, status, compact(body), now_iso()),
        )
