"""Rows of agent-memory1.0 (seed 004) that are not memory records: the kept messages.

Only the mem1 dialect uses this; its service (daemon/runtime/mem1.py) builds it over the
store's connection.
"""

from __future__ import annotations

from typing import Any

from state.db import Connection


class Mem1Records:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def message(self, message_id: str, user_id: str | None = None,
                scope_id: str | None = None) -> dict[str, Any] | None:
        """One kept message, or None. ``user_id`` and ``scope_id`` are independent filters:
        each one given must match, one left out matches any value (the skill traces with
        ``{"message_id", "user_id"}`` and no scope)."""
        row = self.conn.execute(
            "select id, user_id, scope_id, session_id, role, content, timestamp from mem1_messages"
            " where id = ? and (? is null or user_id = ?) and (? is null or scope_id = ?)",
            (message_id, user_id, user_id, scope_id, scope_id)).fetchone()
        return dict(row) if row is not None else None
