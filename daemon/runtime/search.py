"""One hybrid search over namespaces of every dialect (``GET /api/agent/search``): the hits
of the store's index as public memories with their score and detail URL, in the namespaces
the caller may read (daemon/runtime/access.py); and one memory's detail."""

from __future__ import annotations

from typing import Any

from daemon.runtime import access
from daemon.runtime.access import can_read_namespace, public_memory, readable_memory, resolve_workspace
from state.errors import Forbidden
from state.store import Store


def search_namespaces(
    store: Store, query: str, namespaces: list[str], limit: int, base_url: str
) -> list[dict[str, Any]]:
    """The best ``limit`` records for ``query`` in ``namespaces``, best first; a hit whose
    record is gone since it was indexed is left out."""
    hits = store.search.search(query, namespaces, limit=limit)
    records = store.memories.by_seqs([h.seq for h in hits])
    return [
        {
            **public_memory(records[h.seq]),
            "score": round(h.score, 6),
            "detail_endpoint": f"{base_url}/api/agent/memories/{records[h.seq]['id']}",
        }
        for h in hits
        if h.seq in records
    ]


class MemorySearch:
    def __init__(self, store: Store) -> None:
        self.store = store

    def detail(self, identity: dict[str, Any], memory_id: str) -> dict[str, Any]:
        """amp.memory-detail.v1 of a memory the caller may read (NotFound otherwise)."""
        memory = readable_memory(self.store, identity, memory_id)
        return {"schema": "amp.memory-detail.v1", "memory": access.memory_detail(memory)}

    def readable_namespaces(self, identity: dict[str, Any], namespaces: list[str]) -> list[str]:
        """``namespaces`` (the caller's workspace if none), each the caller's to read, or
        Forbidden naming the first that is not."""
        namespaces = namespaces or [resolve_workspace(self.store, identity, None)["id"]]
        refused = [n for n in namespaces if not can_read_namespace(identity, n)]
        if refused:
            raise Forbidden(f"no access to namespace {refused[0]}")
        return namespaces

    def everywhere(self, query: str, namespaces: list[str], limit: int, base_url: str) -> dict[str, Any]:
        """amp.memory-search.v1 over namespaces already checked (readable_namespaces)."""
        items = search_namespaces(self.store, query, namespaces, limit, base_url)
        return {"schema": "amp.memory-search.v1", "query": query, "namespaces": namespaces, "items": items}
