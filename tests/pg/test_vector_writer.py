"""Vectors made after the write on PostgreSQL (state/pg/vector_writer.py): a record's vector is
made from its committed text, on the writer's own connection, and no record is left without
one or given a stale one (records not committed yet, held by a write, deleted, marked again
while their vector was made, or left by a stopped process)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from state.memories import NewMemory
from state.pg.store import PgStore
from state.search import record_text


@pytest.fixture
def store(pg_url: str) -> Iterator[PgStore]:
    """A store whose writes leave their vectors to the writer, as in the daemon."""
    opened = PgStore.open(pg_url)
    opened.search.defer_vectors = True
    try:
        yield opened
    finally:
        opened.close()


def _create(store: PgStore, content: str) -> dict[str, Any]:
    with store.transaction():
        return store.memories.create(
            NewMemory(namespace="wsp_a", kind="fact", content=content, source="test")
        )


def _vector(pg_url: str, seq: int) -> str | None:
    with psycopg.connect(pg_url) as conn:
        row = conn.execute("select embedding::text from memory_vectors where seq = %s", (seq,)).fetchone()
    return row[0] if row else None


def _expected(store: PgStore, content: str) -> str:
    vector = store.search.vector_text(record_text("", content, []))
    assert vector is not None
    return vector


def test_a_write_leaves_its_vector_to_the_writer_which_makes_it_once_committed(
    store: PgStore, pg_url: str
) -> None:
    woken: list[int] = []
    store.search.on_pending = lambda: woken.append(1)
    with store.transaction():
        memory = store.memories.create(
            NewMemory(namespace="wsp_a", kind="fact", content="pgvector keeps the vectors", source="test")
        )
        seq = memory["seq"]
        assert store.search.pending_vectors == {seq} and woken == [1]
        # Not committed: the writer's connection cannot see it yet, and keeps it for later.
        assert store.search.make_vectors(10) == (0, True)
    assert _vector(pg_url, seq) is None
    assert store.search.make_vectors(10) == (1, False)
    assert store.search.pending_vectors == set()
    assert _vector(pg_url, seq) == _expected(store, "pgvector keeps the vectors")
    # Found by its vector alone (misspellings no word matches).
    (hit,) = store.search.search("pgvectr kepz vectorz", ["wsp_a"])
    assert (hit.seq, hit.bm25_rank, hit.vector_rank) == (seq, None, 1)


def test_the_vector_is_of_the_committed_text_not_the_text_first_marked(store: PgStore, pg_url: str) -> None:
    memory = _create(store, "the first text about sailing boats")
    with store.transaction():
        store.memories.update(memory["id"], content="the second text about mountain huts")
    assert store.search.make_vectors(10) == (1, False)
    assert _vector(pg_url, memory["seq"]) == _expected(store, "the second text about mountain huts")


def test_a_record_a_write_holds_stays_pending_until_the_write_ends(store: PgStore, pg_url: str) -> None:
    memory = _create(store, "a record another write holds")
    with psycopg.connect(pg_url) as other:  # a write of that record, in progress
        other.execute("select 1 from memory_records where seq = %s for update", (memory["seq"],))
        assert store.search.make_vectors(10) == (0, True)
        assert store.search.pending_vectors == {memory["seq"]}
    assert store.search.make_vectors(10) == (1, False)
    assert _vector(pg_url, memory["seq"]) is not None


def test_a_deleted_record_gets_no_vector_and_leaves_the_set(store: PgStore, pg_url: str) -> None:
    memory = _create(store, "a record deleted before its vector was made")
    with store.transaction():
        store.memories.delete(memory["id"])
    assert store.search.pending_vectors == set()  # the delete took its mark
    store.search.writer.mark(memory["seq"])  # say another process had marked it
    assert store.search.make_vectors(10) == (0, False)
    assert store.search.pending_vectors == set() and _vector(pg_url, memory["seq"]) is None


def test_a_record_marked_again_while_its_vector_is_made_keeps_its_mark(store: PgStore) -> None:
    memory = _create(store, "a record updated while its vector was made")
    writer = store.search.writer
    assert writer is not None
    embed = writer._embed

    def embed_and_mark_again(text: str) -> str | None:
        writer.mark(memory["seq"])  # an update's write, on the event loop, meanwhile
        return embed(text)

    writer._embed = embed_and_mark_again
    assert store.search.make_vectors(10) == (1, False)
    assert store.search.pending_vectors == {memory["seq"]}  # made again, from the newer text
    writer._embed = embed
    assert store.search.make_vectors(10) == (1, False)
    assert store.search.pending_vectors == set()


def test_records_a_stopped_process_left_without_a_vector_are_found(store: PgStore, pg_url: str) -> None:
    first = _create(store, "written just before the process was killed")
    second = _create(store, "also written just before")
    store.close()  # its marks go with it
    reopened = PgStore.open(pg_url)
    try:
        reopened.search.defer_vectors = True
        assert reopened.search.find_missing_vectors() == 2
        assert reopened.search.pending_vectors == {first["seq"], second["seq"]}
        assert reopened.search.make_vectors(10) == (2, False)
        assert reopened.search.find_missing_vectors() == 0
    finally:
        reopened.close()
    assert _vector(pg_url, first["seq"]) == _expected(store, "written just before the process was killed")


def test_outside_the_daemon_each_write_embeds_at_once(pg_url: str) -> None:
    opened = PgStore.open(pg_url)  # the CLI's store, migrate-store's
    try:
        memory = _create(opened, "embedded inside its own write")
        assert opened.search.pending_vectors == set()
    finally:
        opened.close()
    assert _vector(pg_url, memory["seq"]) is not None


def test_a_text_changed_while_it_was_embedded_is_not_stored(store: PgStore, pg_url: str) -> None:
    memory = _create(store, "the text as it was read")
    writer = store.search.writer
    assert writer is not None
    embed = writer._embed
    changed: list[bool] = []

    def embed_while_it_changes(text: str) -> str | None:
        if not changed:  # no lock is held while embedding: another write goes through
            changed.append(True)
            with store.transaction():
                store.memories.update(memory["id"], content="the text as it is now")
        return embed(text)

    writer._embed = embed_while_it_changes
    assert store.search.make_vectors(10) == (0, True)
    assert _vector(pg_url, memory["seq"]) is None
    assert store.search.make_vectors(10) == (1, False)
    assert _vector(pg_url, memory["seq"]) == _expected(store, "the text as it is now")
