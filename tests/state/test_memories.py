"""Memory records: what a write returns is what a read returns."""

from __future__ import annotations

import pytest

from state.errors import InvalidRequest
from state.memories import NewMemory

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines


@pytest.mark.parametrize(
    "new",
    [
        NewMemory(namespace="wsp_a", kind="fact", content="plain", source="test"),
        NewMemory(
            namespace="wsp_a",
            kind="decision",
            title="Größe 记忆",
            content="text\x00with nul",
            source="memory_delta",
            project_key="demo",
            path="/notes/a.md",
            importance=5,
            triggers=["记忆", "user_id"],
            provenance={"agent": "a", "nested": {"n": [1, 2.5]}},
            identity_id=None,
            metadata={"k": "v"},
        ),
        # Values SQLite converts by type affinity: the record comes back as stored.
        NewMemory(namespace="wsp_a", kind="fact", content="affinity", source="test", importance=True),
        NewMemory(namespace="wsp_a", kind="fact", content="affinity", source="test", importance=4.0),
        NewMemory(namespace="wsp_a", kind="fact", content="affinity", source="test", project_key=7),
        NewMemory(
            namespace="wsp_a",
            kind="fact",
            content="tuples",
            source="test",
            triggers=("a", "b"),
            provenance={"t": ("x",)},
        ),
    ],
)
def test_create_returns_the_stored_record(store, new):
    if "\x00" in new.content and getattr(store.conn, "engine", "sqlite") == "postgresql":
        # PostgreSQL's text cannot hold NUL: the write is refused whole, saying why.
        with pytest.raises(InvalidRequest, match="NUL"), store.transaction():
            store.memories.create(new)
        return
    with store.transaction():
        created = store.memories.create(new)
    stored = store.memories.get(created["id"])
    assert created == stored
    assert list(created) == list(stored)
    assert [type(v) for v in created.values()] == [type(v) for v in stored.values()]
    # A copy, not the writer's own objects.
    assert created["triggers"] is not new.triggers and created["provenance"] is not new.provenance
