"""Rows of agent-memory1.0 (seed 004): the kept messages, the profile variables, and the
reads and marks of its memory records (session summaries, pages) that the memory
repository has no general form for.

Only the mem1 dialect uses this; its service (daemon/runtime/mem1.py) builds it over the
store's connection. A mem1 namespace is ``mem1:<user>:<scope>``.
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

from state.db import Connection
from state.json_text import loads

PENDING = "$.pending_message_id"  # provenance key: the summary still lacks turns up to this one
# A session's summary record, found through its own index (migration m0010): every turn
# looks it up, and without the index that walked the user's whole history.
SUMMARY_OF_SESSION = (
    "select id from memory_records where namespace = ? and kind = 'summary'"
    " and deleted_at is null and json_extract(provenance, '$.session_id') = ?"
)


class Mem1MessageRecord(TypedDict):
    """A row of mem1_messages without its seq and namespace (the user and scope say it)."""

    id: str
    user_id: str
    scope_id: str
    session_id: str
    role: str
    content: str
    timestamp: str  # ISO 8601 with the local UTC offset


class SessionLine(TypedDict):
    """The role and content of a kept message (``Mem1Records.session_lines``)."""

    role: str
    content: str


class Mem1PageRecord(TypedDict):
    """Some columns of a memory_records row, its provenance decoded (``Mem1Records.page``)."""

    id: str
    kind: str
    content: str
    created_at: str
    provenance: dict[str, Any]


def _message(row: Any) -> Mem1MessageRecord:
    return cast(Mem1MessageRecord, dict(row))


def _session_line(row: Any) -> SessionLine:
    return cast(SessionLine, dict(row))


def _page_record(row: Any) -> Mem1PageRecord:
    record = dict(row)
    record["provenance"] = loads(record["provenance"])
    return cast(Mem1PageRecord, record)


class Mem1Records:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # -- messages --------------------------------------------------------------------------

    def add_message(
        self,
        message_id: str,
        ns: str,
        user_id: str,
        scope_id: str,
        session_id: str,
        role: str,
        content: str,
        timestamp: str,
    ) -> None:
        """Keep one message of a turn."""
        self.conn.execute(
            "insert into mem1_messages (id, namespace, user_id, scope_id, session_id, role,"
            " content, timestamp) values (?,?,?,?,?,?,?,?)",
            (message_id, ns, user_id, scope_id, session_id, role, content, timestamp),
        )

    def session_lines(self, ns: str, session_id: str, last_message: str) -> list[SessionLine]:
        """The session's messages in order, up to and including ``last_message``; every one
        of them if that message is not kept."""
        rows = self.conn.execute(
            "select role, content from mem1_messages where namespace = ? and session_id = ?"
            " and seq <= coalesce((select seq from mem1_messages where id = ?), 9223372036854775807)"
            " order by seq",
            (ns, session_id, last_message),
        ).fetchall()
        return [_session_line(r) for r in rows]

    def message(
        self, message_id: str, user_id: str | None = None, scope_id: str | None = None
    ) -> Mem1MessageRecord | None:
        """One kept message, or None. ``user_id`` and ``scope_id`` are independent filters:
        each one given must match, one left out matches any value (the skill traces with
        ``{"message_id", "user_id"}`` and no scope)."""
        row = self.conn.execute(
            "select id, user_id, scope_id, session_id, role, content, timestamp from mem1_messages"
            " where id = ? and (? is null or user_id = ?) and (? is null or scope_id = ?)",
            (message_id, user_id, user_id, scope_id, scope_id),
        ).fetchone()
        return _message(row) if row is not None else None

    # -- variables (the profile) -------------------------------------------------------------

    def variables(self, ns: str) -> dict[str, str | None]:
        """Every variable of the namespace, name -> value (the column is nullable, though
        the service only writes strings)."""
        return {
            r["name"]: r["value"]
            for r in self.conn.execute("select name, value from mem1_variables where namespace = ?", (ns,))
        }

    def default_variable(self, ns: str, name: str, value: str, updated_at: str) -> None:
        """Set a variable that has no value yet (a default); one that has keeps it."""
        self.conn.execute(
            "insert or ignore into mem1_variables (namespace, name, value, updated_at) values (?,?,?,?)",
            (ns, name, value, updated_at),
        )

    def set_variable(self, ns: str, name: str, value: str, updated_at: str) -> None:
        """Set a variable, replacing its value if it has one."""
        self.conn.execute(
            "insert into mem1_variables (namespace, name, value, updated_at) values (?,?,?,?)"
            " on conflict (namespace, name) do update set value = excluded.value,"
            " updated_at = excluded.updated_at",
            (ns, name, value, updated_at),
        )

    def delete_variables(self, ns: str, names: list[str]) -> int:
        """Delete the named variables; how many there were."""
        marks = ",".join("?" * len(names)) or "''"
        return self.conn.execute(
            f"delete from mem1_variables where namespace = ? and name in ({marks})", (ns, *names)
        ).rowcount

    # -- session summaries ---------------------------------------------------------------------

    def summary_id(self, ns: str, session_id: str) -> str | None:
        """The id of the session's live summary record, if it has one."""
        row = self.conn.execute(SUMMARY_OF_SESSION, (ns, session_id)).fetchone()
        return row[0] if row else None

    def mark_summary_behind(self, summary_id: str, last_message: str) -> None:
        """Mark the summary as lacking the turns up to ``last_message`` (``PENDING``)."""
        self.conn.execute(
            f"update memory_records set provenance = json_set(provenance, '{PENDING}', ?) where id = ?",
            (last_message, summary_id),
        )

    def clear_summary_mark(self, summary_id: str) -> None:
        """Take the ``PENDING`` mark off a summary record."""
        self.conn.execute(
            f"update memory_records set provenance = json_remove(provenance, '{PENDING}') where id = ?",
            (summary_id,),
        )

    def summary_written(self, summary_id: str, last_message: str) -> None:
        """The summary now covers the turns up to ``last_message``: its provenance names
        that message, and its ``PENDING`` mark goes."""
        self.conn.execute(
            "update memory_records set provenance = json_remove(json_set(provenance,"
            f" '$.message_id', ?), '{PENDING}') where id = ?",
            (last_message, summary_id),
        )

    def summary_mark(self, summary_id: str) -> tuple[str, str, str | None] | None:
        """(namespace, session id, the turn its ``PENDING`` mark names or None) of a summary
        record; None if there is no such record."""
        row = self.conn.execute(
            f"select namespace, json_extract(provenance, '$.session_id'),"
            f" json_extract(provenance, '{PENDING}') from memory_records where id = ?",
            (summary_id,),
        ).fetchone()
        return (row[0], row[1], row[2]) if row is not None else None

    def marked_summaries(self) -> list[tuple[str, str | None]]:
        """(id, identity id) of every live summary marked behind. The scan stays within mem1
        namespaces (an index range)."""
        rows = self.conn.execute(
            "select id, identity_id from memory_records where namespace >= 'mem1:'"
            " and namespace < 'mem1;' and kind = 'summary' and deleted_at is null"
            f" and json_extract(provenance, '{PENDING}') is not null"
        ).fetchall()
        return [(r[0], r[1]) for r in rows]

    # -- memory records of one namespace ------------------------------------------------------

    def page(self, ns: str, kinds: tuple[str, ...], limit: int, offset: int) -> list[Mem1PageRecord]:
        """Live records of these kinds, oldest first."""
        marks = ",".join("?" * len(kinds))
        rows = self.conn.execute(
            "select id, kind, content, created_at, provenance from memory_records"
            f" where namespace = ? and deleted_at is null and kind in ({marks})"
            " order by seq limit cast(? as integer) offset cast(? as integer)",
            (ns, *kinds, limit, offset),
        ).fetchall()
        return [_page_record(r) for r in rows]

    def count(self, ns: str, kinds: tuple[str, ...]) -> int:
        """How many live records of these kinds the namespace holds."""
        marks = ",".join("?" * len(kinds))
        return self.conn.execute(
            "select count(*) from memory_records"
            f" where namespace = ? and deleted_at is null and kind in ({marks})",
            (ns, *kinds),
        ).fetchone()[0]

    def live_ids(self, ns: str) -> list[str]:
        """The ids of every live record of the namespace."""
        return [
            r[0]
            for r in self.conn.execute(
                "select id from memory_records where namespace = ? and deleted_at is null", (ns,)
            )
        ]
