"""Memory records and their immutable versions, kept in step with the search index.

Methods here run inside the caller's transaction (``with transaction(conn)``), so a domain
write such as "store a memory delta" is one atomic unit: delta row, record, version, index.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypedDict, cast

from state.db import Connection
from state.errors import Conflict, NotFound
from state.ids import new_id, now_iso
from state.json_text import compact, loads
from state.redaction import scrub_copies
from state.search import SearchIndex, record_text
from state.turn_context import ChainFields


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class NewMemory:
    """What a writer supplies for a new memory record."""

    namespace: str
    kind: str
    content: str
    source: str
    title: str = ""
    project_key: str | None = None
    path: str | None = None
    importance: int = 3
    triggers: list[str] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    identity_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


_COLUMNS = (
    "seq, id, namespace, project_key, path, kind, title, content, importance, triggers,"
    " provenance, source, identity_id, content_sha256, version, created_at, updated_at, deleted_at,"
    " metadata"
)


_NAMES = tuple(name.strip() for name in _COLUMNS.split(","))


class MemoryRecord(TypedDict):
    """One row of memory_records, its JSON columns decoded (what every read returns).

    A TypedDict rather than a dataclass: the type checker knows each field a caller reads,
    and at run time a record stays the plain dict that every consumer reads by key and that
    the wire answers are built from, so nothing is converted on the way (a context pack or a
    brief reads ~30-60 records a request)."""

    seq: int
    id: str
    namespace: str
    project_key: str | None
    path: str | None
    kind: str
    title: str
    content: str
    importance: int
    triggers: list[str]
    provenance: dict[str, Any]
    source: str
    identity_id: str | None
    content_sha256: str
    version: int
    created_at: str
    updated_at: str
    deleted_at: str | None
    metadata: dict[str, Any]


def _decoded(text: str) -> Any:
    # Most records have no triggers or metadata: a context pack or a brief decodes ~60 of
    # these per request, and json.loads of "[]" costs as much as of a short list.
    if text == "[]":
        return []
    if text == "{}":
        return {}
    return loads(text)


def _stored_as_given(new: NewMemory) -> bool:
    """Whether SQLite stores each column of ``new`` unchanged (no type affinity converts
    it: text columns get str or None, importance an int), so the inserted values are the
    row."""
    return (
        type(new.importance) is int
        and all(isinstance(v, str) for v in (new.namespace, new.kind, new.title, new.content, new.source))
        and all(v is None or isinstance(v, str) for v in (new.project_key, new.path, new.identity_id))
    )


def row_to_memory(row: Any) -> MemoryRecord:
    """A record row (a Row, or a tuple of the ``_COLUMNS``) as a plain dict with JSON columns
    decoded."""
    memory = dict(zip(_NAMES, row, strict=True)) if type(row) is tuple else dict(row)
    memory["triggers"] = _decoded(memory["triggers"])
    memory["provenance"] = _decoded(memory["provenance"])
    memory["metadata"] = _decoded(memory["metadata"])
    return cast(MemoryRecord, memory)


class MemoryVersionSummary(TypedDict):
    """Some columns of a memory_versions row: a version as a memory's history lists it."""

    id: str
    memory_id: str
    version: int
    operation: str  # created | updated | deleted | reverted
    title: str
    content: str | None  # None once redacted (and for a delete)
    content_sha256: str
    importance: int
    identity_id: str | None
    created_at: str
    redacted_at: str | None


class MemoryVersionRecord(MemoryVersionSummary):
    """A row of memory_versions (the history's columns, and those m0007 added)."""

    path: str | None
    size_bytes: int | None  # of the content in UTF-8, kept by a redaction; None for a delete


def row_to_version(row: Any) -> MemoryVersionRecord:
    """A memory_versions row (``select *``) as a plain dict."""
    return cast(MemoryVersionRecord, dict(row))


class _Version(NamedTuple):
    """One row of memory_versions, in its columns' order (after its id; before size_bytes)."""

    memory_id: str
    version: int
    operation: str  # created | updated | deleted
    title: str
    content: str | None
    content_sha256: str
    importance: int
    identity_id: str | None
    created_at: str
    path: str | None


class MemoryRepository:
    """Create, read, update and delete memory records; every change appends a version."""

    def __init__(self, conn: Connection, index: SearchIndex) -> None:
        self.conn = conn
        self.index = index

    def create(self, new: NewMemory) -> MemoryRecord:
        """Insert a record and its first version, and index it."""
        now = now_iso()
        memory_id = new_id("mem_")
        digest = sha256_text(new.content)
        triggers = compact(new.triggers)
        provenance = compact(new.provenance)
        metadata = compact(new.metadata)
        cursor = self.conn.execute(
            "insert into memory_records (id, namespace, project_key, path, kind, title, content,"
            " importance, triggers, provenance, source, identity_id, content_sha256, version,"
            " created_at, updated_at, metadata) values (?,?,?,?,?,?,?,?,?,?,?,?,?,1,?,?,?) returning seq",
            (
                memory_id,
                new.namespace,
                new.project_key,
                new.path,
                new.kind,
                new.title,
                new.content,
                new.importance,
                triggers,
                provenance,
                new.source,
                new.identity_id,
                digest,
                now,
                now,
                metadata,
            ),
        )
        seq = cursor.fetchone()[0]
        self._add_version(
            _Version(
                memory_id,
                1,
                "created",
                new.title,
                new.content,
                digest,
                new.importance,
                new.identity_id,
                now,
                new.path,
            )
        )
        as_given = _stored_as_given(new)
        chain = ChainFields.of(new.namespace, new.provenance, new.kind, new.content) if as_given else None
        self.index.add(seq, new.namespace, record_text(new.title, new.content, new.triggers), chain)
        if not as_given:
            return self.get(memory_id)
        # The row as a read would return it, without reading it back (one query less per
        # write): the values are what was inserted, the JSON columns decoded afresh.
        return {
            "seq": seq,
            "id": memory_id,
            "namespace": new.namespace,
            "project_key": new.project_key,
            "path": new.path,
            "kind": new.kind,
            "title": new.title,
            "content": new.content,
            "importance": new.importance,
            "triggers": _decoded(triggers),
            "provenance": _decoded(provenance),
            "source": new.source,
            "identity_id": new.identity_id,
            "content_sha256": digest,
            "version": 1,
            "created_at": now,
            "updated_at": now,
            "deleted_at": None,
            "metadata": _decoded(metadata),
        }

    def _add_version(self, version: _Version) -> None:
        size = len(version.content.encode("utf-8")) if version.content is not None else None
        self.conn.execute(
            "insert into memory_versions (id, memory_id, version, operation, title, content,"
            " content_sha256, importance, identity_id, created_at, path, size_bytes)"
            " values (?,?,?,?,?,?,?,?,?,?,?,?)",
            (new_id("memver_"), *version, size),
        )

    def _tuples(self, sql: str, params: Any) -> Any:
        """A cursor of plain tuples: dict(zip()) of a tuple is ~5x faster than dict() of a
        Row, and a brief or a context pack turns ~30 records into dicts."""
        cursor = self.conn.cursor()
        cursor.row_factory = None
        return cursor.execute(sql, params)

    def find(self, memory_id: str) -> MemoryRecord | None:
        row = self._tuples(f"select {_COLUMNS} from memory_records where id = ?", (memory_id,)).fetchone()
        return row_to_memory(row) if row else None

    def get(self, memory_id: str) -> MemoryRecord:
        memory = self.find(memory_id)
        if memory is None:
            raise NotFound(f"memory {memory_id} not found")
        return memory

    def by_seqs(self, seqs: list[int]) -> dict[int, MemoryRecord]:
        if not seqs:
            return {}
        marks = ",".join("?" * len(seqs))
        rows = self._tuples(f"select {_COLUMNS} from memory_records where seq in ({marks})", seqs).fetchall()
        return {row[0]: row_to_memory(row) for row in rows}

    def update(
        self,
        memory_id: str,
        *,
        content: str,
        title: str | None = None,
        importance: int | None = None,
        identity_id: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> MemoryRecord:
        """Replace the content (and optionally title/importance) as a new version."""
        current = self.get(memory_id)
        if current["deleted_at"]:
            raise NotFound(f"memory {memory_id} was deleted")
        title = current["title"] if title is None else title
        importance = current["importance"] if importance is None else importance
        version = current["version"] + 1
        digest = sha256_text(content)
        now = now_iso()
        merged = {**current["metadata"], **(metadata or {})}
        self.conn.execute(
            "update memory_records set content = ?, title = ?, importance = ?,"
            " content_sha256 = ?, version = ?, updated_at = ?, metadata = ? where id = ?",
            (
                content,
                title,
                importance,
                digest,
                version,
                now,
                compact(merged),
                memory_id,
            ),
        )
        self._add_version(
            _Version(
                memory_id,
                version,
                "updated",
                title,
                content,
                digest,
                importance,
                identity_id,
                now,
                current["path"],
            )
        )
        self.index.replace(
            current["seq"], current["namespace"], record_text(title, content, current["triggers"])
        )
        return self.get(memory_id)

    def delete(self, memory_id: str, *, identity_id: str | None = None) -> MemoryRecord:
        """Soft-delete: the record leaves search and packs; its history stays."""
        current = self.get(memory_id)
        if current["deleted_at"]:
            return current
        now = now_iso()
        version = current["version"] + 1
        self.conn.execute(
            "update memory_records set deleted_at = ?, version = ?, updated_at = ? where id = ?",
            (now, version, now, memory_id),
        )
        self._add_version(
            _Version(
                memory_id,
                version,
                "deleted",
                current["title"],
                None,
                current["content_sha256"],
                current["importance"],
                identity_id,
                now,
                current["path"],
            )
        )
        self.index.remove(current["seq"])
        return self.get(memory_id)

    def redact_version(self, version_id: str) -> MemoryVersionRecord:
        """Remove a version's content for good, keeping its metadata. If it is the memory's
        current content, the memory's content goes too (and leaves the search index)."""
        row = self.conn.execute("select * from memory_versions where id = ?", (version_id,)).fetchone()
        if row is None:
            raise NotFound(f"memory version {version_id} not found")
        if row["redacted_at"]:
            raise Conflict(f"memory version {version_id} is already redacted")
        now = now_iso()
        self.conn.execute(
            "update memory_versions set content = null, redacted_at = ? where id = ?", (now, version_id)
        )
        memory = self.get(row["memory_id"])
        retitled = scrub_copies(self.conn, memory, row_to_version(row))
        current = memory["version"] == row["version"] and not memory["deleted_at"]
        if current:
            self.conn.execute(
                "update memory_records set content = '', updated_at = ? where id = ?", (now, memory["id"])
            )
            self.index.remove(memory["seq"])
        elif retitled and not memory["deleted_at"]:
            memory = self.get(memory["id"])
            self.index.replace(
                memory["seq"],
                memory["namespace"],
                record_text(memory["title"], memory["content"], memory["triggers"]),
            )
        self.index.forget_deleted()
        return row_to_version(
            self.conn.execute("select * from memory_versions where id = ?", (version_id,)).fetchone()
        )

    def versions(self, memory_id: str) -> list[MemoryVersionSummary]:
        self.get(memory_id)
        rows = self.conn.execute(
            "select id, memory_id, version, operation, title, content, content_sha256,"
            " importance, identity_id, created_at, redacted_at from memory_versions"
            " where memory_id = ? order by version",
            (memory_id,),
        ).fetchall()
        return [cast(MemoryVersionSummary, dict(row)) for row in rows]

    def top_for_context(
        self,
        namespace: str,
        project_key: str | None,
        limit: int,
        sources: tuple[str, ...],
    ) -> list[MemoryRecord]:
        """The memories a context pack summarises: this project's and workspace-wide ones
        from the given sources, most important first, then newest. Bounded by ``limit`` so
        building a pack costs the same at 100 or 100k memories."""
        marks = ",".join("?" * len(sources))
        rows = self._tuples(
            f"select {_COLUMNS} from memory_records where namespace = ? and deleted_at is null"
            f" and (project_key is null or project_key = ?) and source in ({marks})"
            " order by importance desc, seq desc limit cast(? as integer)",
            (namespace, project_key, *sources, limit),
        ).fetchall()
        return [row_to_memory(row) for row in rows]

    def last_write_by_identity(self) -> dict[str | None, str]:
        """Each writing identity's newest record's creation time (deleted records count:
        they were written)."""
        return {
            row[0]: row[1]
            for row in self.conn.execute(
                "select identity_id, max(created_at) from memory_records group by identity_id"
            )
        }

    def count(self, namespace: str | None = None) -> int:
        if namespace is None:
            return self.conn.execute(
                "select count(*) from memory_records where deleted_at is null"
            ).fetchone()[0]
        return self.conn.execute(
            "select count(*) from memory_records where namespace = ? and deleted_at is null",
            (namespace,),
        ).fetchone()[0]
