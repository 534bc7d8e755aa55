"""Memory Stores (seed 001): store -> memory (by path) -> immutable versions, over the one
memory table (a store is a namespace ``memstore_...``).

Optimistic concurrency: an update may carry the ``content_sha256`` it last read; if the
memory changed since, the answer is 409 and the losing content is kept as a conflict for
the person, never dropped.
"""

from __future__ import annotations

import base64
from typing import Any

from state.errors import Conflict, InvalidRequest, NotFound
from state.identities import IdentityRecord
from state.ids import new_id, now_iso
from state.memories import MemoryRecord, MemoryVersionRecord, NewMemory
from state.memory_store_records import MemoryStoreRecord, MemoryStoreRecords
from state.redaction import purge_wal
from state.store import Store

MAX_CONTENT_BYTES = 100 * 1024


class StoreArchived(Conflict):
    code = "store_archived"


def check_path(path: str) -> str:
    """Relative, no '..', no leading '/', no empty segments (seed 001's path rules)."""
    if not path or not path.strip():
        raise InvalidRequest("path must not be empty", details={"field": "path"})
    if path.startswith("/"):
        raise InvalidRequest(
            f"path must be relative, not start with '/': {path!r}", details={"field": "path"}
        )
    if "\\" in path or "\x00" in path:
        raise InvalidRequest(f"path must use '/' separators only: {path!r}", details={"field": "path"})
    parts = path.split("/")
    if ".." in parts:
        raise InvalidRequest(f"path must not contain '..': {path!r}", details={"field": "path"})
    if any(p in ("", ".") for p in parts):
        raise InvalidRequest(f"path has an empty or '.' segment: {path!r}", details={"field": "path"})
    if len(path) > 1024:
        raise InvalidRequest("path must be at most 1024 characters", details={"field": "path"})
    return path


def check_content(content: str) -> str:
    if not content.strip():
        raise InvalidRequest("content must not be empty", details={"field": "content"})
    size = len(content.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidRequest(
            f"content is {size} bytes; the limit is {MAX_CONTENT_BYTES} (100 KB)",
            details={"field": "content"},
        )
    return content


def encode_cursor(value: str) -> str:
    return base64.urlsafe_b64encode(value.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    try:
        value = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        value = ""
    if not value:
        raise InvalidRequest("cursor is not one this API returned", details={"field": "cursor"})
    return value


def page(rows: list[dict[str, Any]], limit: int, key: str = "id") -> dict[str, Any]:
    more = len(rows) > limit
    rows = rows[:limit]
    return {
        "data": rows,
        "has_more": more,
        "next_cursor": encode_cursor(rows[-1][key]) if more and rows else None,
    }


class MemoryStoreService:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.records = MemoryStoreRecords(store.conn)

    # -- stores -----------------------------------------------------------------------------

    def _public_store(self, row: MemoryStoreRecord) -> dict[str, Any]:
        count, size = self.records.stats(row["id"])
        return {
            "id": row["id"],
            "type": "memory_store",
            "name": row["name"],
            "description": row["description"],
            "metadata": row["metadata"],
            "status": row["status"],
            "archived_at": row["archived_at"],
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
            "entry_count": count,
            "total_size": size,
        }

    def _row(self, store_id: str) -> MemoryStoreRecord:
        row = self.records.get(store_id)
        if row is None:
            raise NotFound(f"memory store {store_id} not found")
        return row

    def create_store(self, identity: IdentityRecord, body: dict[str, Any]) -> dict[str, Any]:
        store_id, now = new_id("memstore_"), now_iso()
        with self.store.transaction():
            self.records.insert(
                store_id,
                name=body["name"].strip(),
                description=body.get("description") or "",
                metadata=body.get("metadata") or {},
                created_by=identity["id"],
                created_at=now,
            )
        return self.get_store(store_id)

    def get_store(self, store_id: str) -> dict[str, Any]:
        return self._public_store(self._row(store_id))

    def list_stores(self, limit: int, cursor: str | None) -> dict[str, Any]:
        after = decode_cursor(cursor) if cursor else ""
        rows = self.records.after(after, limit + 1)
        return page([self._public_store(r) for r in rows], limit)

    def update_store(self, store_id: str, body: dict[str, Any]) -> dict[str, Any]:
        row = self._row(store_id)
        metadata = {**row["metadata"], **(body.get("metadata") or {})}
        with self.store.transaction():
            self.records.update(
                store_id,
                name=(body.get("name") or row["name"]).strip(),
                description=row["description"] if body.get("description") is None else body["description"],
                metadata=metadata,
                updated_at=now_iso(),
            )
        return self.get_store(store_id)

    def archive_store(self, store_id: str) -> dict[str, Any]:
        row = self._row(store_id)
        if row["status"] != "archived":
            now = now_iso()
            with self.store.transaction():
                self.records.archive(store_id, now)
        return self.get_store(store_id)

    def delete_store(self, store_id: str) -> dict[str, Any]:
        """Delete the store with all its memories and their versions."""
        self._row(store_id)
        with self.store.transaction():
            for seq in self.records.record_seqs(store_id):
                self.store.search.remove(seq)
            self.records.delete(store_id)
        return {"id": store_id, "type": "memory_store_deleted"}

    # -- memories ---------------------------------------------------------------------------

    def _writable(self, store_id: str) -> None:
        if self._row(store_id)["status"] == "archived":
            raise StoreArchived(f"memory store {store_id} is archived: it can be read, not written")

    @staticmethod
    def _public_memory(memory: MemoryRecord, *, content: bool) -> dict[str, Any]:
        out = {
            "id": memory["id"],
            "type": "memory",
            "memory_store_id": memory["namespace"],
            "path": memory["path"],
            "content_size_bytes": len(memory["content"].encode("utf-8")),
            "content_sha256": memory["content_sha256"],
            "version": memory["version"],
            "metadata": memory["metadata"],
            "created_at": memory["created_at"],
            "updated_at": memory["updated_at"],
        }
        if content:
            out["content"] = memory["content"]
        return out

    def _memory(self, store_id: str, memory_id: str) -> MemoryRecord:
        self._row(store_id)
        memory = self.store.memories.find(memory_id)
        if memory is None or memory["namespace"] != store_id or memory["deleted_at"]:
            raise NotFound(f"memory {memory_id} not found in store {store_id}")
        return memory

    def create_memory(self, identity: IdentityRecord, store_id: str, body: dict[str, Any]) -> dict[str, Any]:
        self._writable(store_id)
        path, content = check_path(body["path"]), check_content(body["content"])
        if self.records.path_taken(store_id, path):
            raise Conflict(f"a memory with path {path!r} already exists in this store; update it")
        with self.store.transaction():
            memory = self.store.memories.create(
                NewMemory(
                    namespace=store_id,
                    kind="document",
                    path=path,
                    title=path,
                    content=content,
                    source="memory_store",
                    metadata=body.get("metadata") or {},
                    provenance={"dialect": "memory_stores", "agent": identity["name"]},
                    identity_id=identity["id"],
                )
            )
        return self._public_memory(memory, content=True)

    def get_memory(self, store_id: str, memory_id: str) -> dict[str, Any]:
        return self._public_memory(self._memory(store_id, memory_id), content=True)

    def list_memories(
        self, store_id: str, limit: int, cursor: str | None, path_prefix: str | None
    ) -> dict[str, Any]:
        self._row(store_id)
        after = decode_cursor(cursor) if cursor else ""
        ids = self.records.memory_ids(store_id, after, limit + 1, path_prefix)
        return page([self._public_memory(self.store.memories.get(i), content=False) for i in ids], limit)

    def update_memory(
        self, identity: IdentityRecord, store_id: str, memory_id: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        self._writable(store_id)
        memory = self._memory(store_id, memory_id)
        content = check_content(body["content"])
        expected = body.get("content_sha256")
        if expected is not None and expected != memory["content_sha256"]:
            with self.store.transaction():
                conflict = self.store.conflicts.add_conflict(
                    "memory_store_occ",
                    memory_id,
                    memory["path"],
                    {
                        "memory_store_id": store_id,
                        "expected_sha256": expected,
                        "current_sha256": memory["content_sha256"],
                        "current_version": memory["version"],
                        "losing_content": content,
                        "losing_metadata": body.get("metadata") or {},
                        "writer": identity["name"],
                        "reason": "the memory changed since the writer read it",
                    },
                    dedupe=False,
                )
            raise Conflict(
                "content_sha256 does not match the current content: someone else changed it."
                " GET the memory again and retry; your write is kept as a conflict.",
                details={"current_sha256": memory["content_sha256"], "conflict_id": conflict["id"]},
            )
        with self.store.transaction():
            updated = self.store.memories.update(
                memory_id, content=content, identity_id=identity["id"], metadata=body.get("metadata")
            )
        return self._public_memory(updated, content=True)

    def delete_memory(self, identity: IdentityRecord, store_id: str, memory_id: str) -> dict[str, Any]:
        self._writable(store_id)
        self._memory(store_id, memory_id)
        with self.store.transaction():
            self.store.memories.delete(memory_id, identity_id=identity["id"])
        return {"id": memory_id, "type": "memory_deleted"}

    # -- versions ----------------------------------------------------------------------------

    @staticmethod
    def _public_version(row: MemoryVersionRecord, store_id: str, *, content: bool) -> dict[str, Any]:
        out = {
            "id": row["id"],
            "type": "memory_version",
            "memory_store_id": store_id,
            "memory_id": row["memory_id"],
            "path": row["path"],
            "operation": row["operation"],
            "version": row["version"],
            "content_sha256": row["content_sha256"],
            "content_size_bytes": row["size_bytes"],
            "created_at": row["created_at"],
            "redacted": row["redacted_at"] is not None,
            "redacted_at": row["redacted_at"],
        }
        if content:
            out["content"] = row["content"]
        return out

    def list_versions(
        self, store_id: str, limit: int, cursor: str | None, memory_id: str | None
    ) -> dict[str, Any]:
        self._row(store_id)
        after = decode_cursor(cursor) if cursor else ""
        rows = self.records.versions(store_id, after, limit + 1, memory_id)
        return page([self._public_version(r, store_id, content=False) for r in rows], limit)

    def _version(self, store_id: str, version_id: str) -> MemoryVersionRecord:
        self._row(store_id)
        row = self.records.version(store_id, version_id)
        if row is None:
            raise NotFound(f"memory version {version_id} not found in store {store_id}")
        return row

    def get_version(self, store_id: str, version_id: str) -> dict[str, Any]:
        return self._public_version(self._version(store_id, version_id), store_id, content=True)

    def redact_version(self, store_id: str, version_id: str) -> dict[str, Any]:
        self._version(store_id, version_id)
        with self.store.transaction():
            row = self.store.memories.redact_version(version_id)
        purge_wal(self.store.conn)  # no old page image of the content stays in the WAL file
        return self._public_version(row, store_id, content=True)
