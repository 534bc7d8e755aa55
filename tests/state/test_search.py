"""Hybrid search over the real store: Chinese, English, namespaces, deletes, rebuilds."""

import pytest

from state.config import Settings
from state.memories import NewMemory
from state.store import Store
from state.tokenize import fts_query, tokens

MEMORIES = [
    "Bart在圣诞节晚会上跳舞，感觉非常开心。",
    "Lisa的小狗生病了，她很担心。",
    "The deploy script needs the staging database URL from the vault.",
    "We decided to keep SQLite in WAL mode for crash safety.",
    "Runtime Context Pack is the startup summary for every agent session.",
]


def _fill(store: Store, namespace: str, texts: list[str]) -> list[str]:
    ids = []
    with store.transaction():
        for text in texts:
            ids.append(store.memories.create(
                NewMemory(namespace=namespace, kind="fact", content=text, source="test"))["id"])
    return ids


def _search(store: Store, query: str, namespace: str) -> list[str]:
    hits = store.search.search(query, [namespace], limit=5)
    records = store.memories.by_seqs([h.seq for h in hits])
    return [records[h.seq]["content"] for h in hits]


@pytest.mark.parametrize("query, expected", [
    ("圣诞晚会", MEMORIES[0]),
    ("小狗", MEMORIES[1]),
    ("deploying to staging", MEMORIES[2]),
    ("decision about WAL", MEMORIES[3]),
    ("startup summaries", MEMORIES[4]),
])
def test_finds_chinese_and_english(store, query, expected):
    _fill(store, "wsp_a", MEMORIES)
    assert _search(store, query, "wsp_a")[0] == expected


def test_namespaces_are_isolated(store):
    _fill(store, "wsp_a", MEMORIES[:2])
    _fill(store, "wsp_b", MEMORIES[2:])
    assert _search(store, "圣诞晚会", "wsp_b") == [] or MEMORIES[0] not in _search(store, "圣诞晚会", "wsp_b")
    assert MEMORIES[0] in _search(store, "圣诞晚会", "wsp_a")


def test_deleted_and_updated_memories_leave_the_index(store):
    ids = _fill(store, "wsp_a", MEMORIES)
    with store.transaction():
        store.memories.delete(ids[0])
        store.memories.update(ids[2], content="The release checklist lives in docs/release.md")
    assert MEMORIES[0] not in _search(store, "圣诞晚会", "wsp_a")
    assert _search(store, "release checklist", "wsp_a")[0].startswith("The release checklist")
    assert MEMORIES[2] not in _search(store, "staging vault", "wsp_a")
    versions = store.memories.versions(ids[2])
    assert [v["operation"] for v in versions] == ["created", "updated"]
    assert versions[0]["content"] == MEMORIES[2]


def test_query_syntax_cannot_inject_fts_operators(store):
    _fill(store, "wsp_a", MEMORIES)
    for query in ['"unbalanced', "NEAR(a b)", "* OR", "title:x", "-- ; drop table"]:
        store.search.search(query, ["wsp_a"])  # must not raise
    assert fts_query("   ") is None


def test_tokens_split_chinese_into_bigrams_and_fold_english():
    assert "圣诞" in tokens("圣诞节") and "诞节" in tokens("圣诞节")
    assert tokens("memories")[0] == tokens("memory")[0]
    assert tokens("decided")[0] == tokens("decide")[0]
    assert "the" not in tokens("the cat", for_query=True)


def test_vector_index_is_rebuilt_when_the_embedder_changes(paths):
    first = Store.open(paths.database, Settings(dimension=256))
    _fill(first, "wsp_a", MEMORIES)
    first.close()
    second = Store.open(paths.database, Settings(dimension=64))
    try:
        meta = second.conn.execute("select embedder, dimension from vector_index_meta").fetchone()
        assert tuple(meta) == ("hashing-v2:l2", 64)
        rows = second.conn.execute("select count(*) from memory_vec").fetchone()[0]
        assert rows == len(MEMORIES)
        second.search.bm25_weight = 0.0  # vectors alone must still find it
        assert _search(second, "Christmas party 圣诞节晚会", "wsp_a")[0] == MEMORIES[0]
    finally:
        second.close()


def test_unknown_embedder_is_a_clear_config_error(paths):
    from state.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown embedder"):
        Store.open(paths.database, Settings(embedder="nope"))


def test_vectors_rescue_a_query_bm25_cannot_match(store):
    """Fallback mode: a misspelt query shares no token, the trigram vectors still find it."""
    _fill(store, "wsp_a", MEMORIES)
    assert store.search.vector_mode == "fallback"
    hits = store.search.search("stagingg databse", ["wsp_a"], limit=3)
    assert hits and hits[0].bm25_rank is None and hits[0].vector_rank == 1
    assert store.memories.by_seqs([hits[0].seq])[hits[0].seq]["content"] == MEMORIES[2]


def test_fallback_mode_skips_vectors_when_bm25_fills_the_page(store):
    _fill(store, "wsp_a", MEMORIES)
    hits = store.search.search("WAL", ["wsp_a"], limit=1)
    assert hits[0].bm25_rank == 1 and hits[0].vector_rank is None


def test_a_namespace_crowded_out_by_another_still_finds_its_memory(store):
    _fill(store, "wsp_busy", [f"deploy note {i}" for i in range(300)])
    _fill(store, "wsp_quiet", ["deploy the quiet service on Fridays"])
    assert _search(store, "deploy", "wsp_quiet") == ["deploy the quiet service on Fridays"]


def test_rebuilt_vectors_equal_freshly_inserted_ones(paths):
    from state.embedders import serialize
    from state.search import record_text

    first = Store.open(paths.database, Settings(dimension=128))
    with first.transaction():
        memory = first.memories.create(NewMemory(namespace="wsp_a", kind="fact", title="WAL",
                                                 content="keep WAL on", source="test",
                                                 triggers=["sqlite 配置"]))
    first.close()
    second = Store.open(paths.database, Settings(dimension=64))  # forces a rebuild
    try:
        stored = second.conn.execute("select embedding from memory_vec where rowid = ?",
                                     (memory["seq"],)).fetchone()[0]
        expected = serialize(second.embedder.embed(record_text("WAL", "keep WAL on", ["sqlite 配置"])))
        assert stored == expected
    finally:
        second.close()
