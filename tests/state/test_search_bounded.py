"""BM25 on a large store scores a bounded set (state/search.py MAX_RANKED_MATCHES): every
record holding a rare query term, and the newest records holding only common ones. These
tests shrink the budgets (a store of thousands would be slow to fill) except one, which fills
past the shipped threshold to show that the bound applies there and not below it."""

import pytest

from state import search as search_module
from state.memories import NewMemory
from state.search import SearchIndex, informative_terms, split_rare_terms
from state.store import Store
from state.tokenize import fts_match, tokens


def _fill(store: Store, namespace: str, texts: list[str]) -> list[int]:
    with store.transaction():
        return [
            store.memories.create(NewMemory(namespace=namespace, kind="fact", content=text, source="test"))[
                "seq"
            ]
            for text in texts
        ]


@pytest.fixture
def bounded(store: Store, monkeypatch) -> list[str]:
    """Small budgets, BM25 alone, and a log of the queries that took the bounded path."""
    monkeypatch.setattr(search_module, "MAX_RANKED_MATCHES", 20)
    monkeypatch.setattr(search_module, "NEWEST_COMMON_MATCHES", 10)
    monkeypatch.setattr(search_module, "RARE_TERMS_BUDGET", 10)
    store.search.vector_weight = 0.0
    calls: list[str] = []
    original = SearchIndex._bm25_bounded

    def spy(self, rare, common, namespaces, limit):
        calls.append(" ".join(rare + common))
        return original(self, rare, common, namespaces, limit)

    monkeypatch.setattr(SearchIndex, "_bm25_bounded", spy)
    return calls


def _exact_scores(store: Store, terms: list[str], seqs: list[int]) -> list[float]:
    """FTS5's bm25() of each record under the whole OR-query."""
    return [
        store.conn.execute(
            "select bm25(memory_fts) from memory_fts where memory_fts match ? and rowid = ?",
            (fts_match(terms), seq),
        ).fetchone()[0]
        for seq in seqs
    ]


def test_split_rare_terms_takes_the_rarest_within_the_budget():
    frequencies = {"alpha": 40, "zebra": 3, "typo": 0, "beta": 8}
    rare, common = split_rare_terms(["alpha", "zebra", "typo", "beta"], frequencies, 11)
    assert rare == ["zebra", "typo", "beta"] and common == ["alpha"]  # query order kept
    assert split_rare_terms(["alpha", "beta"], frequencies, 5) == ([], ["alpha", "beta"])


def test_informative_terms_keeps_the_rarest_held_ones_in_query_order():
    frequencies = {"alpha": 40, "zebra": 3, "typo": 0, "beta": 8, "gamma": 3}
    terms = ["alpha", "zebra", "typo", "beta", "zebra", "gamma"]
    assert informative_terms(terms, frequencies, 4) == terms  # 4 held: not cut, the typo stays
    # Ties (zebra, gamma) go to the earlier in the query; a repeated term stays repeated.
    assert informative_terms(terms, frequencies, 3) == ["zebra", "beta", "zebra", "gamma"]
    assert informative_terms(terms, frequencies, 1) == ["zebra", "zebra"]


def test_a_long_query_on_a_bounded_store_is_ranked_by_its_rarest_terms(store, bounded, monkeypatch):
    rare = _fill(store, "wsp_a", ["zebra quokka narwhal met the alpha team"])[0]
    _fill(store, "wsp_a", [f"alpha beta gamma delta report {i}" for i in range(60)])
    query = "alpha beta gamma delta report zebra quokka narwhal"
    terms = store.search._bm25_terms(query)
    assert len(set(terms)) == 8
    # Four kept: the three rare terms and the first of the least common others (beta: 60
    # records; alpha is in 61), in query order; the common part is bounded as before.
    monkeypatch.setattr(search_module, "MAX_BOUNDED_TERMS", 4)
    kept = tokens("beta zebra quokka narwhal")
    scored = store.search._bm25_ranked(terms, ["wsp_a"], 10)
    assert bounded == [" ".join(tokens("zebra quokka narwhal beta"))]
    assert scored[0][0] == rare
    # Each record's score is the cut query's exact BM25 (and so its order).
    assert [-score for _, score in scored] == pytest.approx(
        _exact_scores(store, kept, [s for s, _ in scored])
    )
    # Three kept: only rare terms, held by few records, ranked whole by the cut query.
    monkeypatch.setattr(search_module, "MAX_BOUNDED_TERMS", 3)
    scored = store.search._bm25_ranked(terms, ["wsp_a"], 10)
    assert [seq for seq, _ in scored] == [rare] and len(bounded) == 1
    assert [-scored[0][1]] == pytest.approx(_exact_scores(store, tokens("zebra quokka narwhal"), [rare]))
    assert store.search.search(query, ["wsp_a"], limit=3)[0].seq == rare
    # A query of at most MAX_BOUNDED_TERMS held terms is ranked by all of them.
    store.search._bm25_ranked(store.search._bm25_terms("alpha beta zebra"), ["wsp_a"], 10)
    assert bounded[-1] == " ".join(tokens("zebra alpha beta"))


def test_an_old_record_with_a_rare_term_is_found_where_common_terms_are_bounded(store, bounded):
    old = _fill(store, "wsp_a", ["zebra crossing near the alpha office"])[0]
    _fill(store, "wsp_a", [f"alpha beta report number {i}" for i in range(60)])
    hits = store.search.search("alpha zebra", ["wsp_a"], limit=5)
    assert bounded, "the bounded path must be taken at this store size"
    assert hits[0].seq == old
    # The rare term alone finds it too, and the page is still filled by common matches.
    assert store.search.search("zebra alpha beta", ["wsp_a"], limit=5)[0].seq == old


def test_a_query_of_only_common_terms_answers_with_the_newest_matches(store, bounded):
    seqs = _fill(store, "wsp_a", [f"alpha beta report number {i}" for i in range(60)])
    hits = store.search.search("alpha beta", ["wsp_a"], limit=8)
    assert bounded and len(hits) == 8
    assert {h.seq for h in hits} <= set(seqs[-search_module.NEWEST_COMMON_MATCHES :])


def test_bounded_results_are_ordered_by_the_whole_query_score(store, bounded):
    both, rare_only = _fill(store, "wsp_a", ["zebra alpha", "zebra solo"])
    _fill(store, "wsp_a", [f"alpha report {i}" for i in range(25)] + [f"filler note {i}" for i in range(35)])
    terms = ["alpha", "zebra"]  # zebra rare (2 records), alpha common (26 of 62)
    scored = store.search._bm25_ranked(terms, ["wsp_a"], 12)
    seqs = [seq for seq, _ in scored]
    assert bounded and len(seqs) == 12  # the rare term's 2 and the newest 10 of the others
    # The common term counts in the rare records' scores: "zebra alpha" outranks the newer
    # "zebra solo", and all merge in the order of the whole query's scores.
    assert seqs[:2] == [both, rare_only]
    scores = _exact_scores(store, terms, seqs)
    assert scores == sorted(scores)  # bm25() is lower for a better match
    assert [-score for _, score in scored] == pytest.approx(scores)  # each with its score


def test_the_bound_keeps_to_the_namespace(store, bounded):
    mine = _fill(store, "wsp_quiet", [f"alpha beta quiet {i}" for i in range(5)])
    _fill(store, "wsp_busy", [f"alpha beta busy {i}" for i in range(80)])  # newer, elsewhere
    hits = store.search.search("alpha beta", ["wsp_quiet"], limit=10)
    assert bounded and sorted(h.seq for h in hits) == mine


def test_a_small_store_ranks_every_match_with_the_shipped_budgets(store, monkeypatch):
    """A store no larger than MAX_RANKED_MATCHES is ranked whole, however many terms a query
    has (MADial-Bench's stores: ~170 records, dialogue-long queries): results unchanged."""
    words = [f"word{i}" for i in range(40)]
    _fill(store, "wsp_a", [" ".join(words[i:] + words[:i]) + f" x{i}" for i in range(30)])
    called = []
    monkeypatch.setattr(SearchIndex, "_bm25_bounded", lambda *a: called.append(a) or [])
    terms = store.search._bm25_terms(" ".join(words))
    frequencies, _ = store.search.terms(terms)
    assert sum(frequencies.values()) > search_module.MAX_RANKED_MATCHES  # 40 terms x 30
    assert store.search._bm25_ranked(terms, ["wsp_a"], 10) == store.search._bm25(
        fts_match(terms), ["wsp_a"], 10
    )
    assert not called


def test_past_the_shipped_threshold_the_bound_applies_and_rare_terms_still_find(store):
    count = search_module.MAX_RANKED_MATCHES + 100
    rare = _fill(store, "wsp_a", ["the payroll export lost a column"])[0]
    _fill(store, "wsp_a", [f"export job note {i}" for i in range(count)])
    store.search.vector_weight = 0.0
    terms = store.search._bm25_terms("payroll export job")
    frequencies, total = store.search.terms(terms)
    assert min(sum(frequencies.values()), total) > search_module.MAX_RANKED_MATCHES
    assert split_rare_terms(terms, frequencies, search_module.RARE_TERMS_BUDGET)[0] == tokens("payroll")
    assert store.search.search("payroll export job", ["wsp_a"], limit=5)[0].seq == rare
    hits = store.search.search("export job", ["wsp_a"], limit=5)
    assert len(hits) == 5 and rare not in {h.seq for h in hits}


def _queries_with_ties(store: Store) -> list[list[str]]:
    """A bounded store whose common-terms part and rare-terms parts both rank, with equal
    scores among identical texts (ties go to the newer record)."""
    _fill(store, "wsp_a", ["zebra alpha", "zebra solo", "quokka alpha beta", "quokka"])
    _fill(store, "wsp_a", [f"alpha report {i % 7}" for i in range(40)] + ["alpha beta"] * 6)
    _fill(store, "wsp_b", [f"alpha beta elsewhere {i}" for i in range(30)])
    return [["alpha", "zebra"], ["alpha", "beta", "quokka"], ["beta", "zebra", "alpha", "report"]]


def test_the_common_part_ranked_on_the_side_connection_gives_the_same_ranking(store, bounded, monkeypatch):
    queries = _queries_with_ties(store)
    alone = [store.search._bm25_ranked(terms, ["wsp_a"], limit) for terms in queries for limit in (3, 12)]
    store.open_apart_pools(1, False)
    side = store.search.side_reads
    assert side is not None
    beside: list[str] = []
    rows = side.rows
    monkeypatch.setattr(side, "rows", lambda sql, params: beside.append(sql) or rows(sql, params))
    together = [store.search._bm25_ranked(terms, ["wsp_a"], limit) for terms in queries for limit in (3, 12)]
    assert len(beside) == len(together)  # each query's common part ran there
    assert together == alone
    store.close()
    assert store.search.side_reads is None


def test_an_uncommitted_write_is_ranked_on_the_request_connection(store, bounded):
    queries = _queries_with_ties(store)
    store.open_apart_pools(1, False)
    with store.transaction():
        newest = _fill(store, "wsp_a", ["okapi alpha beta", "alpha beta"])
        # The side connection cannot see these records yet: the one statement here does, the
        # rare term's record and the newest common one.
        ranked = [seq for seq, _ in store.search._bm25_ranked(["okapi", *queries[0]], ["wsp_a"], 12)]
        assert ranked[0] == newest[0] and newest[1] in ranked
    store.close()


def test_without_apart_pools_a_store_reads_on_its_one_connection(store):
    store.open_apart_pools(0, False)
    assert store.search.side_reads is None


def test_sqlite_counts_no_allocations_so_threads_do_not_queue_on_its_mutex():
    """state/db.py turns SQLite's memory statistics off in sqlean's SQLite: with them on, the
    side connection's full-text query waited on the same mutex as the request connection's."""
    import ctypes

    from state.db import connect, sqlite_module

    module = sqlite_module()
    if module.__name__ != "sqlean":
        pytest.skip("only sqlean's own SQLite is configured")
    conn = connect(":memory:")
    conn.execute("create virtual table t using fts5(x)")
    conn.execute("insert into t values ('alpha beta gamma')")
    library = ctypes.CDLL(module._sqlite3.__file__)
    library.sqlite3_memory_used.restype = ctypes.c_int64
    assert library.sqlite3_memory_used() == 0
    conn.close()


def test_a_rare_term_no_record_holds_is_left_out_with_the_same_ranking(store, bounded, monkeypatch):
    """ "zzyzx" is held by no record: it matches nothing and adds nothing to a score, so the
    ranking without it is the one with it; "alpha beta zzyzx" then has no rare term and is
    one statement (nothing for the side connection), "alpha zebra zzyzx" still ranks its
    common part beside."""
    _queries_with_ties(store)
    queries = [["alpha", "beta", "zzyzx"], ["alpha", "zebra", "zzyzx"]]
    with_typo = []
    for terms in queries:  # the three parts, the typo among the rare terms (as before)
        frequencies, _ = store.search.terms(terms)
        rare, common = split_rare_terms(terms, frequencies, search_module.RARE_TERMS_BUDGET)
        assert "zzyzx" in rare
        with_typo.append(store.search._bm25_bounded(rare, common, ["wsp_a"], 12))
    store.open_apart_pools(1, False)
    side = store.search.side_reads
    beside: list[int] = []
    rows = side.rows
    for index, terms in enumerate(queries):
        monkeypatch.setattr(side, "rows", lambda sql, params, i=index: beside.append(i) or rows(sql, params))
        assert store.search._bm25_ranked(terms, ["wsp_a"], 12) == with_typo[index]
    assert bounded[-2:] == ["alpha beta", "zebra alpha"]  # rare, then common terms: no zzyzx
    assert beside == [1]
    store.close()
