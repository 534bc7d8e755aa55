"""Rows of the Memory Stores dialect (seed 001): the stores, and the reads of their memories
and versions that the memory repository has no general form for (pages by id, a path
already taken). Plain data access; the dialect's rules live in daemon/runtime/memory_stores.py,
which builds this over the store's connection. A store's memories are the records whose
namespace is the store's id."""

from __future__ import annotations

import json
from typing import Any, TypedDict, cast

from state.db import Connection
from state.json_text import loads
from state.memories import MemoryVersionRecord, row_to_version


class MemoryStoreRecord(TypedDict):
    """A row of memory_stores, its metadata decoded from JSON."""

    id: str
    name: str
    description: str
    metadata: dict[str, Any]
    status: str  # active | archived
    archived_at: str | None
    created_by: str | None
    created_at: str
    updated_at: str


def _store(row: Any) -> MemoryStoreRecord:
    store = dict(row)
    store["metadata"] = loads(store["metadata"])
    return cast(MemoryStoreRecord, store)


class MemoryStoreRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # -- stores -----------------------------------------------------------------------------

    def get(self, store_id: str) -> MemoryStoreRecord | None:
        """One store's row, or None."""
        row = self.conn.execute("select * from memory_stores where id = ?", (store_id,)).fetchone()
        return _store(row) if row is not None else None

    def stats(self, store_id: str) -> tuple[int, int]:
        """(live memories, their content's bytes in UTF-8) of a store."""
        count, size = self.conn.execute(
            "select count(*), coalesce(sum(length(cast(content as blob))), 0) from memory_records"
            " where namespace = ? and deleted_at is null",
            (store_id,),
        ).fetchone()
        return count, size

    def insert(
        self,
        store_id: str,
        *,
        name: str,
        description: str,
        metadata: dict[str, Any],
        created_by: str,
        created_at: str,
    ) -> None:
        """A new store (updated when created)."""
        self.conn.execute(
            "insert into memory_stores (id, name, description, metadata, created_by, created_at,"
            " updated_at) values (?,?,?,?,?,?,?)",
            (
                store_id,
                name,
                description,
                json.dumps(metadata, ensure_ascii=False),
                created_by,
                created_at,
                created_at,
            ),
        )

    def after(self, store_id: str, limit: int) -> list[MemoryStoreRecord]:
        """Up to ``limit`` stores whose id sorts after ``store_id``, by id."""
        rows = self.conn.execute(
            "select * from memory_stores where id > ? order by id limit cast(? as integer)", (store_id, limit)
        ).fetchall()
        return [_store(r) for r in rows]

    def update(
        self, store_id: str, *, name: str, description: str, metadata: dict[str, Any], updated_at: str
    ) -> None:
        """Replace a store's name, description and metadata."""
        self.conn.execute(
            "update memory_stores set name = ?, description = ?, metadata = ?, updated_at = ? where id = ?",
            (name, description, json.dumps(metadata, ensure_ascii=False), updated_at, store_id),
        )

    def archive(self, store_id: str, archived_at: str) -> None:
        """Archive a store (readable, not writable)."""
        self.conn.execute(
            "update memory_stores set status = 'archived', archived_at = ?, updated_at = ? where id = ?",
            (archived_at, archived_at, store_id),
        )

    def record_seqs(self, store_id: str) -> list[int]:
        """The seqs of every record of the store, deleted ones too (to leave the index)."""
        return [
            r[0] for r in self.conn.execute("select seq from memory_records where namespace = ?", (store_id,))
        ]

    def delete(self, store_id: str) -> None:
        """Delete a store and every record of it (their versions go with them)."""
        self.conn.execute("delete from memory_records where namespace = ?", (store_id,))
        self.conn.execute("delete from memory_stores where id = ?", (store_id,))

    # -- memories and versions --------------------------------------------------------------

    def path_taken(self, store_id: str, path: str) -> bool:
        """Whether a live memory of the store has this path."""
        return (
            self.conn.execute(
                "select 1 from memory_records where namespace = ? and path = ? and deleted_at is null",
                (store_id, path),
            ).fetchone()
            is not None
        )

    def memory_ids(self, store_id: str, after: str, limit: int, path_prefix: str | None) -> list[str]:
        """Up to ``limit`` ids of the store's live memories after ``after``, by id; only
        those whose path starts with ``path_prefix``, if given."""
        query = "select id from memory_records where namespace = ? and deleted_at is null and id > ?"
        params: list[Any] = [store_id, after]
        if path_prefix:
            query += " and substr(path, 1, ?) = ?"
            params += [len(path_prefix), path_prefix]
        return [
            r[0] for r in self.conn.execute(query + " order by id limit cast(? as integer)", (*params, limit))
        ]

    def versions(
        self, store_id: str, after: str, limit: int, memory_id: str | None
    ) -> list[MemoryVersionRecord]:
        """Up to ``limit`` versions of the store's memories (of one, if ``memory_id``) whose id
        sorts after ``after``, by id."""
        query = (
            "select v.* from memory_versions v join memory_records r on r.id = v.memory_id"
            " where r.namespace = ? and v.id > ?"
        )
        params: list[Any] = [store_id, after]
        if memory_id:
            query, params = query + " and v.memory_id = ?", [*params, memory_id]
        rows = self.conn.execute(
            query + " order by v.id limit cast(? as integer)", (*params, limit)
        ).fetchall()
        return [row_to_version(r) for r in rows]

    def version(self, store_id: str, version_id: str) -> MemoryVersionRecord | None:
        """One version of a memory of the store, or None."""
        row = self.conn.execute(
            "select v.* from memory_versions v join memory_records r on r.id = v.memory_id"
            " where v.id = ? and r.namespace = ?",
            (version_id, store_id),
        ).fetchone()
        return row_to_version(row) if row is not None else None
