"""One hybrid search over namespaces of every dialect (``GET /api/agent/search``): the hits
of the store's index as public memories with their score and detail URL, in the namespaces
the caller may read (daemon/runtime/access.py); and one memory's detail."""

from __future__ import annotations

import asyncio
from typing import Any

from daemon.runtime import access
from daemon.runtime.access import can_read_namespace, public_memory, readable_memory, resolve_workspace
from state.errors import Forbidden
from state.identities import IdentityRecord
from state.search import PREPARED_QUERY_VECTORS
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

    @property
    def prepares_query_vectors(self) -> bool:
        """Whether a request's query vectors are made before its handler runs: when the
        embedder blocks (a model, an embedding server). Not for the hashing embedder, whose
        query vector reads the index's word counts and costs ~0.1 ms where the search runs;
        then an endpoint's search texts are not even read (a suite install's facts would be)."""
        return not self.store.search.embeds_queries_inline

    async def prepare_query_vectors(self, texts: list[str]) -> None:
        """The query vectors of ``texts`` made in a worker thread, for this request's
        searches to read (state/search.py, PREPARED_QUERY_VECTORS): a model's query
        embedding, or an embedding server's answer (up to its 2 s query timeout), then never
        holds up other requests on the event loop."""
        index = self.store.search
        wanted = list(dict.fromkeys(texts))  # each text once
        vectors = await asyncio.to_thread(lambda: [index.query_vector(text) for text in wanted])
        prepared = PREPARED_QUERY_VECTORS.get()
        if prepared is None:
            prepared = {}
            PREPARED_QUERY_VECTORS.set(prepared)
        prepared.update(zip(wanted, vectors, strict=True))

    def detail(self, identity: IdentityRecord, memory_id: str) -> dict[str, Any]:
        """amp.memory-detail.v1 of a memory the caller may read (NotFound otherwise)."""
        memory = readable_memory(self.store, identity, memory_id)
        return {"schema": "amp.memory-detail.v1", "memory": access.memory_detail(memory)}

    def readable_namespaces(self, identity: IdentityRecord, namespaces: list[str]) -> list[str]:
        """``namespaces`` (the caller's workspace if none), each the caller's to read, or
        Forbidden naming the first that is not."""
        namespaces = namespaces or [resolve_workspace(self.store, identity, None)["id"]]
        refused = [n for n in namespaces if not can_read_namespace(identity, n)]
        if refused:
            raise Forbidden(f"no access to namespace {refused[0]}")
        return namespaces

    async def everywhere(
        self, identity: IdentityRecord, query: str, asked: list[str], limit: int, base_url: str
    ) -> dict[str, Any]:
        """amp.memory-search.v1 over the namespaces ``asked`` (readable_namespaces), read
        apart from the event loop where the store can (Store.read)."""

        def read() -> dict[str, Any]:
            namespaces = self.readable_namespaces(identity, asked)
            items = search_namespaces(self.store, query, namespaces, limit, base_url)
            return {
                "schema": "amp.memory-search.v1",
                "query": query,
                "namespaces": namespaces,
                "items": items,
            }

        return await self.store.read(read)
