"""What each namespace of the one store is called: AMP workspaces, Memory Stores, the
agent-memory1.0 user/scope namespaces that hold memory, and suite collections.

Read only; the TUI shows these names instead of raw ids (daemon/runtime/namespaces.py).
"""

from __future__ import annotations

from typing import TypedDict

from state.db import Connection

# mem1 namespaces are ``mem1:<user>:<scope>``; ';' is the character after ':', so this range
# walks the namespace index instead of the whole table.
MEM1_RANGE = ("mem1:", "mem1;")


class NamedWorkspace(TypedDict):
    """Some columns of a workspaces row."""

    id: str
    name: str
    is_default: bool


class NamedMemoryStore(TypedDict):
    """Some columns of a memory_stores row."""

    id: str
    name: str
    status: str  # active | archived


class NamedSuite(TypedDict):
    """Some columns of a suites row."""

    slug: str
    title: str


class NamespaceRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def workspaces(self) -> list[NamedWorkspace]:
        """Every AMP workspace: id, name, whether it is the default one."""
        rows = self.conn.execute("select id, name, is_default from workspaces order by created_at, id")
        return [{"id": r[0], "name": r[1], "is_default": bool(r[2])} for r in rows]

    def memory_stores(self) -> list[NamedMemoryStore]:
        """Every Memory Store, archived ones too (their memories stay searchable)."""
        rows = self.conn.execute("select id, name, status from memory_stores order by created_at, id")
        return [{"id": r[0], "name": r[1], "status": r[2]} for r in rows]

    def mem1_namespaces(self) -> list[str]:
        """The agent-memory1.0 namespaces that hold at least one memory record."""
        rows = self.conn.execute(
            "select distinct namespace from memory_records where namespace >= ? and namespace < ?"
            " order by namespace",
            MEM1_RANGE,
        )
        return [r[0] for r in rows]

    def suites(self) -> list[NamedSuite]:
        """Every suite (its collection is the namespace ``suite:<slug>``): slug and title."""
        rows = self.conn.execute("select slug, title from suites order by created_at, slug")
        return [{"slug": r[0], "title": r[1]} for r in rows]
