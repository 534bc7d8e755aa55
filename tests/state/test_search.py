"""Hybrid search over the real store: Chinese, English, namespaces, deletes, rebuilds."""

import time

import pytest

from state.config import Settings
from state.memories import NewMemory
from state.rebuild import rebuild_now
from state.store import Store
from state.tokenize import fts_match, index_text, query_terms, tokens

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
            ids.append(
                store.memories.create(
                    NewMemory(namespace=namespace, kind="fact", content=text, source="test")
                )["id"]
            )
    return ids


def _search(store: Store, query: str, namespace: str) -> list[str]:
    hits = store.search.search(query, [namespace], limit=5)
    records = store.memories.by_seqs([h.seq for h in hits])
    return [records[h.seq]["content"] for h in hits]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("圣诞晚会", MEMORIES[0]),
        ("小狗", MEMORIES[1]),
        ("deploying to staging", MEMORIES[2]),
        ("decision about WAL", MEMORIES[3]),
        ("startup summaries", MEMORIES[4]),
    ],
)
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
    assert fts_match(query_terms("   ")) is None


def test_tokens_split_chinese_into_bigrams_and_fold_english():
    assert "圣诞" in tokens("圣诞节") and "诞节" in tokens("圣诞节")
    assert tokens("memories")[0] == tokens("memory")[0]
    assert tokens("decided")[0] == tokens("decide")[0]
    assert "the" not in tokens("the cat", for_query=True)


def _vectors_built_with(store: Store) -> str:
    return store.conn.execute("select built_with from index_builds where name = 'memory_vec'").fetchone()[0]


def test_vector_index_is_rebuilt_when_the_embedder_changes(paths):
    first = Store.open(paths.database, Settings(dimension=256))
    _fill(first, "wsp_a", MEMORIES)
    first.close()
    second = Store.open(paths.database, Settings(dimension=64))
    try:
        # Opening records the rebuild (tests/state/test_rebuild.py has it in the background).
        assert second.search.builds()["memory_vec"].target == "hashing-v3:int8-cosine+coarse2:64"
        rebuild_now(second, force=False)
        assert _vectors_built_with(second) == "hashing-v3:int8-cosine+coarse2:64"
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


@pytest.mark.parametrize("mode", ["rerank", "fallback", "always"])
def test_vectors_rescue_a_query_bm25_cannot_match(store, mode):
    """A misspelt query shares no token: the trigram vectors still find it, in every mode."""
    _fill(store, "wsp_a", MEMORIES)
    store.search.vector_mode = mode
    hits = store.search.search("stagingg databse", ["wsp_a"], limit=3)
    assert hits and hits[0].bm25_rank is None and hits[0].vector_rank == 1
    assert store.memories.by_seqs([hits[0].seq])[hits[0].seq]["content"] == MEMORIES[2]


def test_fallback_mode_skips_vectors_when_bm25_fills_the_page(store):
    _fill(store, "wsp_a", MEMORIES)
    store.search.vector_mode = "fallback"
    hits = store.search.search("WAL", ["wsp_a"], limit=1)
    assert hits[0].bm25_rank == 1 and hits[0].vector_rank is None


def test_vectors_that_fill_in_rank_after_every_record_the_words_found():
    """When the words find fewer records than the page, the vectors' scan fills in after
    them: a record only the vectors found (a hashing collision can be the first neighbour)
    ranks as if it followed BM25's last hit. Without ``fill`` (``rerank``, ``always``) the two
    rankings count alike, and a record both found is fused as always."""
    from state.search import fuse

    filled = fuse([3, 4], [9, 4, 8], 1.0, 1.0, 10, fill=True)
    assert [h.seq for h in filled] == [4, 3, 9, 8]  # 4: both; 9 and 8 after the words' hits
    assert [(h.bm25_rank, h.vector_rank) for h in filled] == [(2, 2), (1, None), (None, 1), (None, 3)]
    assert filled[1].score > filled[2].score > filled[3].score  # scores follow the order
    fused = fuse([3, 4], [9, 4, 8], 1.0, 1.0, 10)
    assert [h.seq for h in fused] == [4, 9, 3, 8]  # 9 ties with 3 and is newer
    assert fuse([], [3, 4], 1.0, 1.0, 10, fill=True) == fuse([], [3, 4], 1.0, 1.0, 10)  # a misspelt query


def test_a_word_found_in_one_record_ranks_it_before_the_vectors_fill(store):
    """ "kupci" is found by words in one Serbian text (tokenizer 8); the page asks for more, so
    the vectors' scan fills in, and its first neighbour, an unrelated newer Nepali text that
    a hashing collision brings up, comes after it, not before."""
    _fill(
        store,
        "wsp_a",
        [
            "Састанци са купцима су одложени за петак јер сервер не ради.",
            "Susitikimai su klientais buvo atidėti iki penktadienio, nes serveris neveikia.",
            "ग्राहकहरूसँगको बैठक शुक्रबारसम्म सारिएको छ किनभने सर्भरले काम गरेको छैन।",
        ],
    )
    hits = store.search.search("kupci", ["wsp_a"], limit=5)
    assert hits[0].bm25_rank == 1
    assert store.memories.by_seqs([hits[0].seq])[hits[0].seq]["content"].startswith("Састанци")
    assert all(h.bm25_rank is None for h in hits[1:])


def test_defaults_rerank_cjk_queries_and_fall_back_to_vectors_for_others(store):
    assert (Settings().vector_mode, Settings().embedder) == ("auto", "hashing")
    assert store.search.vector_mode == "auto" and store.embedder.dimension == Settings().dimension
    _fill(store, "wsp_a", MEMORIES)
    hits = store.search.search("WAL", ["wsp_a"], limit=1)
    assert hits[0].bm25_rank == 1 and hits[0].vector_rank is None  # words alone
    hits = store.search.search("圣诞节晚会", ["wsp_a"], limit=1)
    assert hits[0].bm25_rank == 1 and hits[0].vector_rank == 1  # reranked by the vectors
    store.search.vector_mode = "rerank"  # fuses both rankings on every query
    hits = store.search.search("WAL", ["wsp_a"], limit=1)
    assert hits[0].bm25_rank == 1 and hits[0].vector_rank == 1


def test_rerank_mode_scores_bm25_candidates_without_a_vector_scan(store, monkeypatch):
    _fill(
        store,
        "wsp_a",
        [
            f"deploy note {i} about the {word} service"
            for i, word in enumerate(["billing", "search", "login"] * 5)
        ],
    )

    def no_scan(*args, **kwargs):
        raise AssertionError("rerank mode scanned the vectors although BM25 filled the page")

    monkeypatch.setattr(store.search, "_knn", no_scan)
    store.search.vector_mode = "rerank"
    hits = store.search.search("deploy billing", ["wsp_a"], limit=5)
    assert len(hits) == 5 and all(h.bm25_rank and h.vector_rank for h in hits)
    contents = store.memories.by_seqs([h.seq for h in hits])
    assert all("billing" in contents[h.seq]["content"] for h in hits)


def test_vector_only_search_scans_the_namespace(store):
    _fill(store, "wsp_a", MEMORIES)
    _fill(store, "wsp_b", ["The deploy script for staging lives elsewhere."])
    store.search.bm25_weight = 0.0
    hits = store.search.search("deploy staging database", ["wsp_a"], limit=3)
    assert hits[0].bm25_rank is None and hits[0].vector_rank == 1
    assert store.memories.by_seqs([hits[0].seq])[hits[0].seq]["content"] == MEMORIES[2]


def test_chinese_single_characters_reach_bm25(store):
    """画画 and 绘画 share only 画: BM25 matches it, because queries keep CJK characters."""
    _fill(store, "wsp_a", ["Lisa在绘画课上画了一幅大熊猫。", "Bart去动物园看企鹅。"])
    store.search.vector_weight = 0.0
    hits = store.search.search("我喜欢画画", ["wsp_a"], limit=2)
    assert len(hits) == 1 and hits[0].bm25_rank == 1
    assert "画" in tokens("画画", for_query=True) and "的" not in tokens("我的", for_query=True)


def test_characters_most_records_hold_are_left_out_of_the_bm25_query(store):
    _fill(store, "wsp_a", [f"开心的一天 {i}" for i in range(120)] + ["学校运动会"])
    terms = store.search._bm25_terms("开心运动")
    assert "开" not in terms and "心" not in terms  # in 120 of 121 records
    assert {"运", "动", "开心", "运动"} <= set(terms)
    assert store.search.search("开心运动", ["wsp_a"], limit=1)[0].bm25_rank == 1


def test_a_long_query_keeps_its_last_terms():
    words = [f"w{i}" for i in range(300)]
    assert query_terms(" ".join(words), max_terms=256) == words[-256:]
    assert sorted(fts_match(query_terms("alpha beta alpha")).split(" OR ")) == ['"alpha"', '"beta"']


def test_query_weights_follow_the_index(store):
    """The hashing embedder weights query words by IDF and drops words no record holds."""
    from state.embedders import HashingEmbedder

    _fill(
        store,
        "wsp_a",
        [
            "deploy the billing service",
            "deploy the login service",
            "deploy the search service",
            "rotate the billing keys",
        ],
    )
    deploy, billing, zebra = (tokens(word)[0] for word in ("deploy", "billing", "zebra"))
    frequencies, total = store.search.terms([deploy, billing, zebra])
    assert frequencies == {deploy: 3, billing: 2, zebra: 0} and total == 4
    embedder = HashingEmbedder(4096)
    vector = embedder.embed_query("deploy billing zebra", store.search.terms)
    weight = {word: abs(vector[_slot(word)]) for word in (deploy, billing, zebra)}
    assert weight[billing] > weight[deploy] > 0 and weight[zebra] == 0.0
    # An unseen word is kept as trigrams, so a typo still meets the stored word.
    typo = embedder.embed_query("billling", store.search.terms)
    stored = embedder.embed("rotate the billing keys")
    assert sum(a * b for a, b in zip(typo, stored, strict=True)) > 0.3


def _slot(feature: str) -> int:
    from state.embedders import _slot as slot

    return slot(feature, 4096)[0]


def test_cached_frequencies_follow_writes_here_and_elsewhere(store, paths):
    """Words that index unchanged (no suffix folding) keep the assertions readable."""
    _fill(store, "wsp_a", ["beacon keepers"])
    assert store.search.terms(["beacon"]) == ({"beacon": 1}, 1)
    ids = _fill(store, "wsp_a", ["beacon weather", "harbor pilots"])
    assert store.search.terms(["beacon", "harbor"]) == ({"beacon": 2, "harbor": 1}, 3)
    with store.transaction():
        store.memories.delete(ids[0])
    assert store.search.terms(["beacon"]) == ({"beacon": 1}, 2)
    other = Store.open(paths.database)  # another connection, e.g. the CLI beside the daemon
    try:
        _fill(other, "wsp_a", ["beacon lamps"])
    finally:
        other.close()
    assert store.search.terms(["beacon"]) == ({"beacon": 2}, 3)
    with pytest.raises(RuntimeError):  # a rolled-back write leaves no trace either
        with store.transaction():
            _fill(store, "wsp_a", ["beacon fog"])
            raise RuntimeError
    assert store.search.terms(["beacon"]) == ({"beacon": 2}, 3)


def test_a_namespace_crowded_out_by_another_still_finds_its_memory(store):
    _fill(store, "wsp_busy", [f"deploy note {i}" for i in range(300)])
    _fill(store, "wsp_quiet", ["deploy the quiet service on Fridays"])
    assert _search(store, "deploy", "wsp_quiet") == ["deploy the quiet service on Fridays"]


def test_rebuilt_vectors_equal_freshly_inserted_ones(paths):
    from state.embedders import serialize
    from state.search import record_text

    first = Store.open(paths.database, Settings(dimension=128))
    with first.transaction():
        memory = first.memories.create(
            NewMemory(
                namespace="wsp_a",
                kind="fact",
                title="WAL",
                content="keep WAL on",
                source="test",
                triggers=["sqlite 配置"],
            )
        )
    first.close()
    second = Store.open(paths.database, Settings(dimension=64))  # forces a rebuild
    try:
        rebuild_now(second, force=False)
        stored = second.conn.execute(
            "select embedding from memory_vec where rowid = ?", (memory["seq"],)
        ).fetchone()[0]
        expected = serialize(second.embedder.embed(record_text("WAL", "keep WAL on", ["sqlite 配置"])))
        assert stored == expected
    finally:
        second.close()


# -- optional embedders ------------------------------------------------------------------


class EmbeddingServer:
    """A tiny OpenAI-compatible ``POST /v1/embeddings`` on loopback, in its own thread and
    event loop (the store calls it synchronously). Its "model" is the hashing embedder."""

    def __init__(self, dimension: int = 48) -> None:
        import asyncio
        import threading

        from aiohttp import web

        from state.embedders import HashingEmbedder

        self.model = HashingEmbedder(dimension)
        self.requests: list[tuple[str | None, dict]] = []
        self.failing = False
        self.delay = 0.0  # seconds before it answers (a model server that hangs)

        async def embeddings(request: web.Request) -> web.Response:
            body = await request.json()
            self.requests.append((request.headers.get("Authorization"), body))
            await asyncio.sleep(self.delay)
            if self.failing:
                return web.json_response({"error": {"message": "model is loading"}}, status=503)
            vector = [2.0 * x for x in self.model.embed(body["input"])]  # not unit length
            return web.json_response(
                {
                    "object": "list",
                    "model": body["model"],
                    "data": [{"object": "embedding", "index": 0, "embedding": vector}],
                }
            )

        app = web.Application()
        app.router.add_post("/v1/embeddings", embeddings)
        self.loop = asyncio.new_event_loop()
        # A handler still sleeping (delay) is cancelled at close, not waited for: closing took
        # the rest of a 5 s delay.
        self.runner = web.AppRunner(app, shutdown_timeout=0.2)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def close(self) -> None:
        import asyncio

        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture
def embedding_server():
    server = EmbeddingServer()
    yield server
    server.close()


def test_an_openai_compatible_endpoint_embeds_and_is_searched(paths, embedding_server, monkeypatch):
    monkeypatch.setenv("MEMORYCLOUD_EMBEDDER_API_KEY", "sk-local-test")
    settings = Settings(
        embedder=f"openai:tiny-embed@{embedding_server.url}", dimension=7, vector_mode="always"
    )
    store = Store.open(paths.database, settings)
    try:
        # The dimension is the endpoint's, not the setting's; the key goes as a bearer token.
        assert (
            _vectors_built_with(store) == f"openai:tiny-embed@{embedding_server.url}:int8-cosine+coarse2:48"
        )
        assert embedding_server.requests[0] == (
            "Bearer sk-local-test",
            {"model": "tiny-embed", "input": "dimension"},
        )
        _fill(store, "wsp_a", MEMORIES)
        assert store.conn.execute("select count(*) from memory_vec").fetchone()[0] == len(MEMORIES)
        store.search.bm25_weight = 0.0
        hits = store.search.search("stagingg databse", ["wsp_a"], limit=1)
        assert store.memories.by_seqs([hits[0].seq])[hits[0].seq]["content"] == MEMORIES[2]
        stored = store.conn.execute("select vec_length(embedding) from memory_vec").fetchone()[0]
        assert stored == 48
    finally:
        store.close()


def test_a_failing_endpoint_costs_no_write_and_search_falls_back_to_words(paths, embedding_server):
    settings = Settings(embedder=f"openai:tiny-embed@{embedding_server.url}")
    store = Store.open(paths.database, settings)
    try:
        embedding_server.failing = True
        _fill(store, "wsp_a", MEMORIES)
        assert (
            store.search.pending_vectors
            and not store.conn.execute("select count(*) from memory_vec").fetchone()[0]
        )
        assert _search(store, "WAL mode", "wsp_a")[0] == MEMORIES[3]
        embedding_server.failing = False
        assert store.search.backfill() == len(MEMORIES)
        assert _search(store, "WAL mode", "wsp_a")[0] == MEMORIES[3]
    finally:
        store.close()


def test_a_hanging_endpoint_holds_a_search_for_the_query_timeout_once_then_words_rank_alone(
    paths, embedding_server, monkeypatch
):
    from state import embedders

    monkeypatch.setattr(embedders, "QUERY_TIMEOUT_SECONDS", 0.5)
    settings = Settings(embedder=f"openai:tiny-embed@{embedding_server.url}", vector_mode="always")
    store = Store.open(paths.database, settings)
    try:
        _fill(store, "wsp_a", MEMORIES)
        embedding_server.delay = 5.0  # longer than a query may wait, shorter than a record's
        asked = len(embedding_server.requests)
        started = time.monotonic()
        assert _search(store, "WAL mode", "wsp_a")[0] == MEMORIES[3]  # by its words
        assert time.monotonic() - started < 4.0  # the query's own timeout, not the endpoint's
        assert len(embedding_server.requests) == asked + 1
        # The next searches do not ask the endpoint again while the pause lasts.
        assert _search(store, "WAL mode", "wsp_a")[0] == MEMORIES[3]
        assert len(embedding_server.requests) == asked + 1
        monkeypatch.setattr(embedders, "QUERY_PAUSE_SECONDS", 0.0)
        embedding_server.delay = 0.0
        store.search.embedder._queries_paused_until = 0.0
        _search(store, "WAL mode", "wsp_a")
        assert len(embedding_server.requests) == asked + 2  # asked again after the pause
    finally:
        store.close()


def test_an_endpoint_down_at_start_uses_the_dimension_setting(paths):
    server = EmbeddingServer()
    url = server.url
    server.close()  # nothing listens there now
    settings = Settings(embedder=f"openai:tiny-embed@{url}", dimension=16)
    first = Store.open(paths.database, settings)
    try:
        assert first.embedder.dimension == 16
        _fill(first, "wsp_a", MEMORIES[:2])  # kept, vectors pending
        assert _search(first, "小狗", "wsp_a") == [MEMORIES[1]]
    finally:
        first.close()


def test_changing_the_endpoint_model_rebuilds_the_vectors(paths, embedding_server):
    first = Store.open(paths.database, Settings(embedder=f"openai:one@{embedding_server.url}"))
    _fill(first, "wsp_a", MEMORIES)
    first.close()
    second = Store.open(paths.database, Settings(embedder=f"openai:two@{embedding_server.url}"))
    try:
        rebuild_now(second, force=False)
        assert _vectors_built_with(second).startswith("openai:two@")
        assert [body["model"] for _, body in embedding_server.requests[-len(MEMORIES) :]] == ["two"] * len(
            MEMORIES
        )
    finally:
        second.close()


def test_malformed_optional_embedder_names_are_config_errors(paths):
    from state.embedders import make_embedder
    from state.errors import ConfigError

    with pytest.raises(ConfigError, match="needs a model"):
        make_embedder("openai:", 8)
    with pytest.raises(ConfigError, match="needs a model"):
        make_embedder("openai:@http://127.0.0.1:9/v1", 8)


def test_sentence_transformers_without_the_extra_says_how_to_install(paths):
    from state.embedders import make_embedder
    from state.errors import ConfigError

    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        with pytest.raises(ConfigError, match=r"memorycloud-companion\[sentence-transformers\]"):
            make_embedder("sentence-transformers:all-MiniLM-L6-v2", 384)
    else:
        pytest.skip("the extra is installed here")


def test_a_title_that_starts_the_content_is_indexed_once(store):
    """A delta's or mem1 message's title is its content's start: its words count once."""
    with store.transaction():
        echo = store.memories.create(
            NewMemory(
                namespace="wsp_a",
                kind="fact",
                source="test",
                title="Deploys need the vault",
                content="Deploys need the vault token",
            )
        )
        titled = store.memories.create(
            NewMemory(
                namespace="wsp_a",
                kind="fact",
                source="test",
                title="Staging",
                content="Deploys need the vault token",
            )
        )
    rows = dict(store.conn.execute("select rowid, tokens from memory_fts").fetchall())
    assert rows[echo["seq"]] == index_text("Deploys need the vault token")
    assert rows[titled["seq"]] == index_text("Staging\nDeploys need the vault token")
