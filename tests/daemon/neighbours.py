"""Records whose words match a query and records that only its vector is near: a search
that asks for more hits than it shows must keep the second kind out of its page."""

from __future__ import annotations

from state.memories import NewMemory
from state.store import Store

QUERY = "tea"
# Twelve records hold the query's word; forty share only character trigrams with it, which the
# hashing vectors see and BM25 does not.
MATCHES = [f"note {n}: we drank tea at the harbour" for n in range(12)]
NEIGHBOURS = [f"entry {n}: the teal steam teapots team" for n in range(40)]


def write_matches_and_neighbours(store: Store, namespace: str, kind: str = "decision") -> None:
    with store.transaction():
        for text in MATCHES + NEIGHBOURS:
            store.memories.create(NewMemory(namespace=namespace, kind=kind, content=text, source="test"))


def only_matches(contents: list[str]) -> bool:
    return all(f" {QUERY} " in content for content in contents)
