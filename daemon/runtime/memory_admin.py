"""The person's actions on any memory (the TUI's memory browser): search with filters,
history, a diff between two versions, revert to a version (as a new version), redact a
version, delete. Owner only; every change is a new immutable version."""

from __future__ import annotations

import difflib
from typing import Any

from daemon.runtime.access import dialect_of, public_memory
from daemon.runtime.changes import ContextChanges
from state.browse_records import BrowseRecords
from state.errors import InvalidRequest, NotFound
from state.identities import IdentityRecord
from state.memories import MemoryRecord, MemoryVersionSummary
from state.redaction import purge_wal
from state.store import Store


class MemoryAdmin:
    def __init__(self, store: Store, changes: ContextChanges) -> None:
        self.store = store
        self.changes = changes
        self.records = BrowseRecords(store.conn)

    def _live(self, memory_id: str) -> MemoryRecord:
        memory = self.store.memories.get(memory_id)
        if memory["deleted_at"]:
            raise NotFound(f"memory {memory_id} was deleted")
        return memory

    def search(self, query: str | None, filters: dict[str, str | None], limit: int) -> dict[str, Any]:
        """Hybrid search (or newest first without a query) with the browser's filters."""
        if query:
            namespace = filters.get("namespace")
            namespaces = [namespace] if namespace else self.records.live_namespaces()
            # More than the page, to filter; ranked as the page would be (state/search.py).
            hits = self.store.search.search(query, namespaces, limit=limit * 4, page=limit)
            records = self.store.memories.by_seqs([h.seq for h in hits])
            allowed = self.records.matching_seqs(filters)
            memories = [records[h.seq] for h in hits if h.seq in records and h.seq in allowed][:limit]
        else:
            memories = [self.store.memories.get(i) for i in self.records.newest_ids(filters, limit)]
        names: dict[str | None, str] = {
            i["id"]: i["name"]
            for i in [*self.store.identities.agents(), *filter(None, [self.store.identities.owner()])]
        }
        return {
            "schema": "memorycloud.memories.v1",
            "query": query,
            "items": [{**public_memory(m), "written_by_name": names.get(m["identity_id"])} for m in memories],
        }

    def history(self, memory_id: str) -> dict[str, Any]:
        memory = self.store.memories.get(memory_id)
        return {
            "schema": "memorycloud.memory-history.v1",
            "memory": public_memory(memory),
            "dialect": dialect_of(memory["namespace"]),
            "deleted_at": memory["deleted_at"],
            "versions": self.store.memories.versions(memory_id),
        }

    def _version(self, memory_id: str, number: int) -> MemoryVersionSummary:
        for version in self.store.memories.versions(memory_id):
            if version["version"] == number:
                return version
        raise NotFound(f"memory {memory_id} has no version {number}")

    def diff(self, memory_id: str, old: int, new: int) -> dict[str, Any]:
        before, after = self._version(memory_id, old), self._version(memory_id, new)
        lines = difflib.unified_diff(
            (before["content"] or "").splitlines(keepends=True),
            (after["content"] or "").splitlines(keepends=True),
            fromfile=f"v{old}",
            tofile=f"v{new}",
        )
        return {
            "schema": "memorycloud.memory-diff.v1",
            "memory_id": memory_id,
            "from": old,
            "to": new,
            "redacted": [v["version"] for v in (before, after) if v["redacted_at"]],
            "diff": "".join(lines),
        }

    def revert(self, owner: IdentityRecord, memory_id: str, number: int) -> dict[str, Any]:
        memory = self._live(memory_id)
        version = self._version(memory_id, number)
        if version["content"] is None:
            raise InvalidRequest(f"version {number} has no content (redacted or a deletion)")
        with self.store.transaction():
            updated = self.store.memories.update(
                memory_id, content=version["content"], title=version["title"], identity_id=owner["id"]
            )
        self.changes.changed(memory["namespace"], memory["project_key"])
        return public_memory(updated)

    def redact(self, memory_id: str, number: int) -> dict[str, Any]:
        version = self._version(memory_id, number)
        with self.store.transaction():
            self.store.memories.redact_version(version["id"])
        purge_wal(self.store.conn)  # no old page image of the content stays in the WAL file
        memory = self.store.memories.get(memory_id)
        self.changes.changed(memory["namespace"], memory["project_key"])
        return self.history(memory_id)

    def delete(self, owner: IdentityRecord, memory_id: str) -> dict[str, Any]:
        memory = self._live(memory_id)
        with self.store.transaction():
            self.store.memories.delete(memory_id, identity_id=owner["id"])
        self.changes.changed(memory["namespace"], memory["project_key"])
        return {"schema": "memorycloud.memory-deleted.v1", "id": memory_id}
