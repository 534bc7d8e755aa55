"""The KNN scan of a large namespace: coarse codes first, then the exact cosine of the nearest
(state/search.py EXACT_SCAN_MAX_CHUNKS, state/embedders.py coarse_code)."""

import json

import pytest

from state import embedders, search
from state.config import Settings
from state.embedders import COARSE_TOP, HashingEmbedder, coarse_bits, coarse_code, coarse_slots, serialize
from state.index_builds import VECTORS, read_builds, vector_identity
from state.memories import NewMemory
from state.rebuild import rebuild_now
from state.search import record_text
from state.store import Store

TARGET = "The deploy script needs the staging database URL from the vault."
OTHERS = [
    "Bart在圣诞节晚会上跳舞，感觉非常开心。",
    "We decided to keep SQLite in WAL mode for crash safety.",
    "Runtime Context Pack is the startup summary for every agent session.",
]


def _fill(store: Store, texts: list[str], namespace: str = "wsp_a") -> None:
    with store.transaction():
        for text in texts:
            store.memories.create(NewMemory(namespace=namespace, kind="fact", content=text, source="test"))


def _filler(n: int) -> str:
    animals = ["otter", "heron", "lynx", "badger", "falcon", "walrus", "bison", "gecko"]
    places = ["harbor", "orchard", "canyon", "meadow", "glacier", "delta", "quarry"]
    return f"note {n}: the {animals[n % 8]} crossed the {places[n % 7]} at dawn, day {n // 56}"


def _ones(code: bytes) -> int:
    return int.from_bytes(code, "little").bit_count()


def _hamming(a: bytes, b: bytes) -> int:
    return (int.from_bytes(a, "little") ^ int.from_bytes(b, "little")).bit_count()


class CoarseCalls:
    """Counts the query codes search makes (one per KNN scan that takes the coarse pass)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, *args, **kwargs):
        self.count += 1
        return coarse_code(*args, **kwargs)


def test_coarse_codes_rank_documents_by_the_slots_they_share_with_the_query():
    embedder = HashingEmbedder(1024)
    vectors = {text: embedder.embed(text) for text in [TARGET, *OTHERS, _filler(3) * 4]}
    codes = {text: coarse_code(serialize(v), v.nonzero) for text, v in vectors.items()}
    for text, vector in vectors.items():
        code = codes[text]
        assert len(code) * 8 == coarse_bits(1024) and _ones(code) <= COARSE_TOP
        assert code == coarse_code(serialize(vector))  # the same without the slot hint
    # Long or short, documents' codes weigh about the same (the padding), so Hamming distance
    # counts shared slots rather than preferring the documents that fill few.
    assert max(map(_ones, codes.values())) - min(map(_ones, codes.values())) <= 8
    for words, meant in [
        ("staging database vault", TARGET),
        ("sqlite WAL crash", OTHERS[1]),
        ("startup summary for an agent", OTHERS[2]),
    ]:
        query = coarse_code(serialize(embedder.embed(words)), document=False)
        assert int.from_bytes(query, "little") >> (2 * coarse_slots(1024)) == 0  # a query's code: no padding
        assert min(codes, key=lambda text: _hamming(query, codes[text])) == meant


def test_a_large_namespace_finds_a_misspelt_query_through_the_coarse_codes(store, monkeypatch):
    _fill(store, [_filler(n) for n in range(400)] + [TARGET] + OTHERS)
    exact = store.search.search("stagingg databse", ["wsp_a"], limit=3)
    calls = CoarseCalls()
    monkeypatch.setattr(search, "coarse_code", calls)
    monkeypatch.setattr(search, "EXACT_SCAN_MAX_CHUNKS", 0)  # this namespace counts as large
    hits = store.search.search("stagingg databse", ["wsp_a"], limit=3)
    assert calls.count == 1  # the coarse pass ran: 32 candidates of 404 records
    assert hits[0].bm25_rank is None and hits[0].vector_rank == 1
    assert store.memories.by_seqs([hits[0].seq])[hits[0].seq]["content"] == TARGET
    assert hits[0].seq == exact[0].seq
    # Vectors alone too; and the other namespace's records stay out.
    _fill(store, ["The deploy script for staging lives elsewhere."], namespace="wsp_b")
    store.search.bm25_weight = 0.0
    hits = store.search.search("deploy staging database", ["wsp_a"], limit=3)
    assert store.memories.by_seqs([hits[0].seq])[hits[0].seq]["content"] == TARGET
    assert {r["namespace"] for r in store.memories.by_seqs([h.seq for h in hits]).values()} == {"wsp_a"}


def test_small_namespaces_and_dense_embedders_keep_the_exact_scan(store, monkeypatch):
    _fill(store, [TARGET, *OTHERS])

    def no_coarse(*args, **kwargs):
        raise AssertionError("the coarse pass ran where the exact scan is wanted")

    monkeypatch.setattr(search, "coarse_code", no_coarse)
    hits = store.search.search("stagingg databse", ["wsp_a"], limit=3)  # one chunk: exact
    assert store.memories.by_seqs([hits[0].seq])[hits[0].seq]["content"] == TARGET
    monkeypatch.setattr(search, "EXACT_SCAN_MAX_CHUNKS", 0)
    monkeypatch.setattr(HashingEmbedder, "coarse_scan", False)  # as for any other embedder
    hits = store.search.search("stagingg databse", ["wsp_a"], limit=3)
    assert store.memories.by_seqs([hits[0].seq])[hits[0].seq]["content"] == TARGET


def test_a_store_whose_vectors_have_no_codes_rebuilds_them(paths, monkeypatch):
    """A table of the earlier layout (int8 vectors, no coarse codes) is rebuilt in place,
    like any change of embedder: search ranks by words meanwhile, then codes are there."""
    first = Store.open(paths.database, Settings())
    _fill(first, [TARGET, *OTHERS])
    rows = first.conn.execute("select rowid, namespace, embedding from memory_vec").fetchall()
    with first.transaction():  # what the previous release made
        first.conn.execute("drop table memory_vec")
        first.conn.execute(
            "create virtual table memory_vec using vec0(namespace text partition key,"
            " embedding int8[1024] distance_metric=cosine)"
        )
        for row in rows:
            first.conn.execute(
                "insert into memory_vec (rowid, namespace, embedding) values (?, ?, vec_int8(?))", tuple(row)
            )
        first.conn.execute(
            "update index_builds set built_with = 'hashing-v3:int8-cosine:1024' where name = 'memory_vec'"
        )
    first.close()
    store = Store.open(paths.database, Settings())
    try:
        assert read_builds(store.conn)[VECTORS].target == vector_identity(store.embedder)
        assert store.search.search("stagingg databse", ["wsp_a"]) == []  # words alone meanwhile
        rebuild_now(store, force=False)
        stored = dict(store.conn.execute("select rowid, coarse from memory_vec").fetchall())
        texts = store.conn.execute("select seq, title, content, triggers from memory_records").fetchall()
        assert len(stored) == len(texts) == 4
        for seq, title, content, triggers in texts:
            vector = store.embedder.embed(record_text(title, content, json.loads(triggers)))
            assert stored[seq] == coarse_code(serialize(vector))  # as a fresh write makes it
        monkeypatch.setattr(search, "EXACT_SCAN_MAX_CHUNKS", 0)
        hits = store.search.search("stagingg databse", ["wsp_a"], limit=3)
        assert store.memories.by_seqs([hits[0].seq])[hits[0].seq]["content"] == TARGET
    finally:
        store.close()


@pytest.mark.parametrize("dimension", [16, 64, 384, 1024])
def test_codes_fit_any_dimension(dimension):
    vector = HashingEmbedder(dimension).embed(TARGET + " " + " ".join(OTHERS))
    code = coarse_code(serialize(vector))
    assert len(code) * 8 == coarse_bits(dimension) and coarse_bits(dimension) % 64 == 0
    assert 0 < _ones(code) <= embedders.COARSE_TOP
