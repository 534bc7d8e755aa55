"""The person's memory browser's reads (daemon/runtime/memory_admin.py): live records of any
namespace, narrowed by the browser's filters. Read only; the service builds it over the
store's connection."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from state.db import Connection

# The browser's filter names and the columns they narrow.
FILTER_COLUMNS = (
    ("namespace", "namespace"),
    ("project_key", "project_key"),
    ("kind", "kind"),
    ("identity_id", "agent"),
)


def _where(filters: Mapping[str, str | None]) -> tuple[str, list[Any]]:
    """The live records the filters given (non-empty) let through, as SQL and parameters."""
    clauses, params = ["deleted_at is null"], []
    for column, key in FILTER_COLUMNS:
        if filters.get(key):
            clauses.append(f"{column} = ?")
            params.append(filters[key])
    return " and ".join(clauses), params


class BrowseRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def live_namespaces(self) -> list[str]:
        """Every namespace that holds a live (not deleted) record."""
        return [
            r[0]
            for r in self.conn.execute(
                "select distinct namespace from memory_records where deleted_at is null"
            )
        ]

    def matching_seqs(self, filters: Mapping[str, str | None]) -> set[int]:
        """The seqs of every live record the filters let through."""
        where, params = _where(filters)
        return {r[0] for r in self.conn.execute(f"select seq from memory_records where {where}", params)}

    def newest_ids(self, filters: Mapping[str, str | None], limit: int) -> list[str]:
        """The ids of the ``limit`` newest live records the filters let through."""
        where, params = _where(filters)
        rows = self.conn.execute(
            f"select id from memory_records where {where} order by seq desc limit cast(? as integer)",
            (*params, limit),
        ).fetchall()
        return [r[0] for r in rows]
