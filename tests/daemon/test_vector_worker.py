"""Vectors off the write path (daemon/vector_worker.py): with an embedder that blocks (a model,
a server) a daemon write stores the record and its words and leaves the vector to the worker,
whose embeddings run in a thread, never on the event loop; the hashing embedder embeds inside
the write; a failing embedder is not hammered; nothing pending is lost at shutdown or when a
record changes meanwhile."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

import pytest

from daemon import keys
from daemon.app import create_app
from state import embedders
from state.config import Settings
from state.doctor import check_indexes
from state.embedders import serialize
from state.memories import NewMemory
from state.paths import Paths
from state.search import SearchIndex
from state.store import Store


def write(store: Store, content: str, namespace: str = "ns") -> dict:
    with store.transaction():
        return store.memories.create(
            NewMemory(namespace=namespace, kind="note", content=content, source="test")
        )


def has_vector(store: Store, seq: int) -> bool:
    return store.conn.execute("select count(*) from memory_vec where rowid = ?", (seq,)).fetchone()[0] == 1


async def settled(store: Store, timeout: float = 5.0) -> None:
    """Until the worker has made every pending vector."""
    for _ in range(int(timeout / 0.01)):
        if not store.search.pending_vectors:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"vectors still pending: {sorted(store.search.pending_vectors)}")


class ThreadedEmbedder(embedders.HashingEmbedder):
    """The hashing vectors, as a model or an embedding server would be run: not inline."""

    runs_inline = False
    threads: set[int] = set()

    def embed(self, text: str) -> list[float]:
        ThreadedEmbedder.threads.add(threading.get_ident())
        return super().embed(text)


class FailingEmbedder(embedders.HashingEmbedder):
    """An embedding server that refuses connections until told otherwise."""

    runs_inline = False
    failing = True
    calls = 0

    def embed(self, text: str) -> list[float]:
        FailingEmbedder.calls += 1
        if FailingEmbedder.failing:
            raise ConnectionError("embedding server refused the connection")
        return super().embed(text)


@pytest.fixture
async def daemon_app(aiohttp_client, paths: Paths, request) -> AsyncIterator:
    app = create_app(Settings(embedder=getattr(request, "param", "hashing")), paths)
    await aiohttp_client(app)
    yield app


@pytest.fixture
def daemon_store(daemon_app) -> Store:
    return daemon_app[keys.STORE]


@pytest.fixture(autouse=True)
def test_embedders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(embedders._FACTORIES, "threaded", ThreadedEmbedder)
    monkeypatch.setitem(embedders._FACTORIES, "failing", FailingEmbedder)
    ThreadedEmbedder.threads = set()
    FailingEmbedder.failing, FailingEmbedder.calls = True, 0


async def test_the_hashing_embedder_makes_the_vector_inside_the_write(daemon_store: Store):
    store = daemon_store
    assert not store.search.defer_vectors
    memory = write(store, "the lighthouse keeper logs the weather every night")
    assert has_vector(store, memory["seq"]) and not store.search.pending_vectors


@pytest.mark.parametrize("daemon_app", ["threaded"], indirect=True)
async def test_a_write_leaves_a_blocking_embedders_vector_to_the_worker(daemon_store: Store):
    store = daemon_store
    memory = write(store, "the lighthouse keeper logs the weather every night")
    # The write itself stored no vector: it is pending until the loop runs the worker.
    assert memory["seq"] in store.search.pending_vectors and not has_vector(store, memory["seq"])
    await settled(store)
    assert has_vector(store, memory["seq"])
    assert all(report.ok for report in check_indexes(store.conn).values())
    # Then found by its vector (a misspelt query: words find nothing).
    hits = store.search.search("lighthuose keeper wheather", ["ns"])
    assert [h.seq for h in hits] == [memory["seq"]] and hits[0].vector_rank == 1


@pytest.mark.parametrize("daemon_app", ["threaded"], indirect=True)
async def test_an_embedder_that_is_not_cheap_runs_off_the_event_loop(daemon_store: Store):
    store = daemon_store
    loop_thread = threading.get_ident()
    ThreadedEmbedder.threads.clear()
    seqs = [write(store, f"harbor pilot {n} checks the tides")["seq"] for n in range(5)]
    # A search meanwhile ranks by words; it does not embed the pending records on the loop.
    assert [h.seq for h in store.search.search("harbor pilot", ["ns"])]
    assert set(seqs) <= store.search.pending_vectors
    await settled(store)
    assert all(has_vector(store, seq) for seq in seqs)
    assert ThreadedEmbedder.threads and loop_thread not in ThreadedEmbedder.threads


@pytest.mark.parametrize("daemon_app", ["failing"], indirect=True)
async def test_a_failing_embedder_is_retried_later_not_at_every_write(daemon_app):
    store = daemon_app[keys.STORE]
    first = write(store, "ferries run at dawn")
    await asyncio.sleep(0.05)
    calls = FailingEmbedder.calls
    assert calls >= 1 and first["seq"] in store.search.pending_vectors
    for n in range(5):
        write(store, f"ferry {n} runs late")
        await asyncio.sleep(0.01)
    assert FailingEmbedder.calls == calls  # waiting for RETRY_SECONDS or the job
    FailingEmbedder.failing = False
    board = daemon_app[keys.JOBS]
    await board.run(*daemon_app[keys.SCHEDULER].get_job("backfill_vectors").args)
    assert board.states["backfill_vectors"].last_result == "ok: 6 vectors added"
    assert all(report.ok for report in check_indexes(store.conn).values())


async def test_vectors_pending_at_shutdown_are_made_before_the_store_closes(aiohttp_client, paths: Paths):
    app = create_app(Settings(embedder="threaded"), paths)
    client = await aiohttp_client(app)
    store = app[keys.STORE]
    seqs = [write(store, f"a note about the night shift {n}")["seq"] for n in range(20)]
    assert set(seqs) <= store.search.pending_vectors
    await client.close()  # the app's cleanup: the worker stops, then the store closes
    reopened = Store.open(paths.database, Settings(embedder="threaded"))
    try:
        assert not reopened.search.pending_vectors
        assert all(report.ok for report in check_indexes(reopened.conn).values())
    finally:
        reopened.close()


def test_a_record_changed_while_its_vector_was_made_gets_the_vector_of_its_new_text(store: Store):
    search: SearchIndex = store.search
    search.defer_vectors = True
    memory = write(store, "the bakery opens at seven")
    texts = search.pending_texts(10)
    embedded = search.embed_texts(texts)  # as the worker's thread would, meanwhile:
    with store.transaction():
        store.memories.update(memory["id"], content="the bakery opens at nine on sundays")
    assert search.store_vectors(embedded) == 0 and memory["seq"] in search.pending_vectors
    assert search.backfill() == 1
    stored = store.conn.execute(
        "select embedding from memory_vec where rowid = ?", (memory["seq"],)
    ).fetchone()[0]
    assert stored == serialize(search.embedder.embed("the bakery opens at nine on sundays"))


def test_a_record_deleted_while_its_vector_was_made_gets_none(store: Store):
    search = store.search
    search.defer_vectors = True
    memory = write(store, "the ferry timetable changes in winter")
    embedded = search.embed_texts(search.pending_texts(10))
    with store.transaction():
        store.memories.delete(memory["id"])
    assert search.store_vectors(embedded) == 0
    assert not search.pending_vectors and not has_vector(store, memory["seq"])
