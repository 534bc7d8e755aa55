"""Reads of a workspace's memory newest first: AMP's memory query without a search term,
the memory map and the code-memory context (see daemon/runtime/workspace_reads.py).

Each read is bounded by its ``limit`` and walks an index (migration m0012), so it costs the
same at 100 or 100k records.
"""

from __future__ import annotations

from typing import Any

from state.db import Connection
from state.memories import _COLUMNS, MemoryRecord, row_to_memory


def _like(text: str) -> str:
    """A LIKE pattern matching ``text`` literally anywhere (``!`` escapes % and _)."""
    return "%" + text.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%"


class WorkspaceRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def newest(
        self, namespaces: list[str], *, limit: int, kind: str | None = None, project_key: str | None = None
    ) -> list[MemoryRecord]:
        """Live records of these namespaces, last changed first; ``kind`` exactly, and with a
        ``project_key`` only that project's and workspace-wide ones."""
        if not namespaces:
            return []
        marks = ",".join("?" * len(namespaces))
        query = f"select {_COLUMNS} from memory_records where namespace in ({marks}) and deleted_at is null"
        params: list[Any] = list(namespaces)
        if kind is not None:
            query += " and kind = cast(? as text)"  # planned once: state/db.py STATEMENT_CACHE
            params.append(kind)
        if project_key is not None:
            query += " and (project_key is null or project_key = ?)"
            params.append(project_key)
        rows = self.conn.execute(
            query + " order by updated_at desc, seq desc limit cast(? as integer)", (*params, limit)
        ).fetchall()
        return [row_to_memory(row) for row in rows]

    def code_memories(
        self, namespaces: list[str], *, project_key: str, text: str, limit: int
    ) -> list[MemoryRecord]:
        """Live ``code_memory`` records of these namespaces that belong to the project (its
        project key, or the key named in the content), holding ``text`` (ASCII case-insensitive,
        in the title, content or triggers) when given; last changed first."""
        if not namespaces:
            return []
        marks = ",".join("?" * len(namespaces))
        query = (
            f"select {_COLUMNS} from memory_records where namespace in ({marks})"
            " and deleted_at is null and kind = 'code_memory'"
            " and (project_key = ? or content like ? escape '!')"
        )
        params: list[Any] = [*namespaces, project_key, _like(project_key)]
        if text:
            query += (
                " and (title like ? escape '!' or content like ? escape '!' or triggers like ? escape '!')"
            )
            params += [_like(text)] * 3
        rows = self.conn.execute(
            query + " order by updated_at desc, seq desc limit cast(? as integer)", (*params, limit)
        ).fetchall()
        return [row_to_memory(row) for row in rows]
