"""One hybrid search over namespaces of every dialect (``GET /api/agent/search``): the hits
of the store's index as public memories with their score and detail URL. Who may read which
namespace is decided before, by the caller (daemon/runtime/access.py)."""

from __future__ import annotations

from typing import Any

from daemon.runtime.access import public_memory
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
