"""A PostgreSQL store made by the previous release gets its search rows made anew by this
release's tokenizer (state/pg/reindex.py): in batches, resumable, found meanwhile, and in the
end exactly what this code writes. The daemon's job: tests/pg/test_daemon_postgres.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from state import tokenize, tokenize_v4, turn_context
from state.config import Settings
from state.index_builds import FTS, describe_identity, wanted_tokenizer
from state.memories import NewMemory
from state.pg import reindex
from state.rebuild import status
from state.search import record_text
from tests.pg.conftest import assert_counts_kept

pytest.importorskip("psycopg")

OLD_TEXTS = [
    ("pl", "fact", "Spotkanie zespołu w Łodzi przełożone na czwartek", {}),
    ("dk", "fact", "Kontoret i København lukker kl. 16 om fredagen", {}),
    ("chat", "message", "Where is the offsite this year?", {"session_id": "s1"}),
    ("chat", "message", "In Łódź, at the old factory by the river.", {"session_id": "s1"}),
    ("chat", "message", "Then book the train for Thursday morning.", {"session_id": "s1"}),
    ("vi", "fact", "Cuộc họp ở đường Lê Lợi lúc 9 giờ", {}),
]


def _open(url: str) -> Any:
    from state.pg.store import PgStore

    return PgStore.open(url, Settings())


def _write(store: Any, namespace: str, kind: str, text: str, provenance: dict) -> int:
    with store.transaction():
        record = store.memories.create(
            NewMemory(namespace=namespace, kind=kind, content=text, source="test", provenance=provenance)
        )
    return record["seq"]


def _previous_release_store(url: str, monkeypatch: pytest.MonkeyPatch) -> dict[int, str]:
    """A database as the release before this module left it: rows made with tokenizer 4's
    tokens, and no build row (that release wrote none). seq -> text."""
    store = _open(url)
    try:
        with monkeypatch.context() as patch:
            patch.setattr(tokenize, "index_text", tokenize_v4.index_text)
            texts = {_write(store, ns, kind, text, prov): text for ns, kind, text, prov in OLD_TEXTS}
        store.conn.raw.execute("delete from index_builds where name = %s", (FTS,))
    finally:
        store.close()
    return texts


def _found(store: Any, query: str, namespace: str) -> list[int]:
    return [hit.seq for hit in store.search.search(query, [namespace], limit=5)]


def _as_this_code_makes_them(store: Any) -> None:
    """Every row holds this tokenizer's tokens of its record, its context is current (making
    the rows again changes none), and the kept counts equal a recount."""
    raw = store.conn.raw
    rows = raw.execute(
        "select s.own, r.title, r.content, r.triggers from memory_search s join memory_records r on r.seq = s.seq"
    ).fetchall()
    assert rows
    for own, title, content, triggers in rows:
        assert own == tokenize.index_text(record_text(title, content, json.loads(triggers)))
    seqs = [row[0] for row in raw.execute("select seq from memory_search").fetchall()]
    with raw.transaction():
        assert store.search.remake(seqs) == 0
    assert_counts_kept(raw)


def test_a_new_database_is_this_tokenizers_from_the_start(pg_empty_url: str) -> None:
    store = _open(pg_empty_url)
    try:
        assert store.search.reindexing is False
        assert reindex.read_build(store.conn.raw).built_with == wanted_tokenizer()
        assert status(store.conn)["state"] == "current"
        assert reindex.step(store.search) is None
    finally:
        store.close()


def test_rows_of_the_previous_release_are_made_anew_in_batches(
    pg_empty_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _previous_release_store(pg_empty_url, monkeypatch)
    by_text = {text: seq for seq, text in texts.items()}
    store = _open(pg_empty_url)
    try:
        assert store.search.reindexing is True
        rebuilding = status(store.conn)
        assert rebuilding["state"] == "rebuilding" and rebuilding["total"] == len(texts)
        assert rebuilding["reason"] == describe_identity(wanted_tokenizer()), rebuilding
        # Meanwhile: the old rows answer a query with the letters, not yet one without.
        assert by_text[OLD_TEXTS[0][2]] in _found(store, "Łodzi", "pl")
        assert _found(store, "Lodzi", "pl") == []
        # A first batch of two, then the process stops (a kill between batches).
        assert reindex.step(store.search, max_records=2) == "fts"
        assert status(store.conn)["done"] == 2
        assert _found(store, "Lodzi", "pl") == [by_text[OLD_TEXTS[0][2]]]
    finally:
        store.close()
    store = _open(pg_empty_url)
    try:
        assert store.search.reindexing is True
        assert status(store.conn)["done"] == 2  # resumed where it stopped, nothing done twice
        # A write meanwhile gets this code's tokens at once.
        new = _write(store, "dk", "fact", "Ny kantine i Aarhus åbner", {})
        assert _found(store, "Aarhus", "dk") == [new]
        assert reindex.run_to_end(store.search) == len(texts) - 2 + 1  # the new record too
        assert reindex.step(store.search) is None
        assert status(store.conn)["state"] == "current"
        assert reindex.read_build(store.conn.raw).built_with == wanted_tokenizer()
        assert _found(store, "Kobenhavn", "dk") == [by_text[OLD_TEXTS[1][2]]]
        assert _found(store, "duong Le Loi", "vi") == [by_text[OLD_TEXTS[5][2]]]
        # The turn after "Where is the offsite" holds it as context, with this code's tokens.
        answer = by_text[OLD_TEXTS[3][2]]
        assert answer in _found(store, "offsite Lodz", "chat")[:2]
        _as_this_code_makes_them(store)
    finally:
        store.close()
    store = _open(pg_empty_url)  # the next start finds nothing to do
    try:
        assert store.search.reindexing is False
    finally:
        store.close()


def _tokenizer_8_gate(kind: str, start: str | None) -> bool:
    """Which records without a session id tokenizer 8 took for turns: any label too."""
    return kind == turn_context.LOOSE_TURN_KIND or turn_context.SPEAKER.match(start or "") is not None


@pytest.mark.parametrize(
    ("old", "notes"),
    [
        (
            8,  # "Decision: ..." read as a speaker's turn
            [
                "Decision: keep SQLite in WAL mode for crash safety",
                "Decision: the billing export runs every Friday night after the backup",
                "Decision: deploy checklist is run migrations, warm the cache, flip the flag",
            ],
        ),
        (
            9,  # a header's label read as a speaker's
            [
                "Title: Storage. Keep SQLite in WAL mode for crash safety",
                "Title: Billing. The billing export runs every Friday night after the backup",
                "Title: Deploy. Run migrations, warm the cache, flip the flag",
            ],
        ),
    ],
)
def test_notes_that_start_with_a_label_lose_the_context_an_earlier_tokenizer_gave_them(
    pg_empty_url: str, monkeypatch: pytest.MonkeyPatch, old: int, notes: list[str]
) -> None:
    """Three AMP deltas that start with a label (kind decision, no session id) indexed by
    tokenizer 8 ("Decision: ...") or 9 ("Title: ...") held each other's words; the re-index
    makes their rows without."""
    store = _open(pg_empty_url)
    try:
        store.search.vector_weight = 0.0
        with monkeypatch.context() as patch:
            if old == 8:
                patch.setattr(turn_context, "is_loose_turn", _tokenizer_8_gate)
            else:  # 9 did not know a header's labels
                patch.setattr(
                    turn_context, "NOTE_LABELS", turn_context.NOTE_LABELS - turn_context.HEADER_LABELS
                )
            seqs = [_write(store, "notes", "decision", text, {}) for text in notes]
        assert _found(store, "billing export", "notes") == seqs[1:]  # the next note through its context
        with store.conn.raw.transaction():
            store.conn.raw.execute(
                "update index_builds set built_with = %s where name = %s", (f"tokenizer-{old}", FTS)
            )
    finally:
        store.close()
    store = _open(pg_empty_url)
    try:
        store.search.vector_weight = 0.0
        assert store.search.reindexing is True
        assert reindex.run_to_end(store.search) == len(notes)
        assert _found(store, "billing export", "notes") == [seqs[1]]
        _as_this_code_makes_them(store)
    finally:
        store.close()


def test_two_processes_never_make_the_same_batch(pg_empty_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each batch reads the cursor under the write lock: batches of two stores on one database
    (two team-server processes) take turns and leave the rows as one would."""
    texts = _previous_release_store(pg_empty_url, monkeypatch)
    first, second = _open(pg_empty_url), _open(pg_empty_url)
    try:
        while True:
            kinds = [reindex.step(first.search, max_records=1), reindex.step(second.search, max_records=1)]
            if kinds == [None, None]:
                break
        assert reindex.read_build(first.conn.raw).done == len(texts)
        _as_this_code_makes_them(first)
    finally:
        first.close()
        second.close()


def test_vectors_of_another_embedder_are_made_anew(pg_empty_url: str) -> None:
    """A team server started with another dimension: its vector table is made again for it
    (before, no vector could be stored in the old table's dimension), and the vector writer makes
    every record's vector anew; a table of the same dimension written before identities were
    recorded is kept."""
    store = _open(pg_empty_url)
    try:
        seqs = [_write(store, "v", "fact", text, {}) for _, _, text, _ in OLD_TEXTS[:3]]
        raw = store.conn.raw
        assert raw.execute("select count(*) from memory_vectors").fetchone()[0] == 3
        raw.execute("delete from index_builds where name = 'memory_vec'")  # as the previous release
    finally:
        store.close()
    store = _open(pg_empty_url)  # the same dimension: kept, and its identity recorded
    try:
        raw = store.conn.raw
        assert raw.execute("select count(*) from memory_vectors").fetchone()[0] == 3
        assert reindex.read_build(raw, "memory_vec").built_with == reindex.vector_identity(store.embedder)
    finally:
        store.close()
    from state.pg.store import PgStore

    store = PgStore.open(pg_empty_url, Settings(dimension=256))
    try:
        raw = store.conn.raw
        assert raw.execute("select count(*) from memory_vectors").fetchone()[0] == 0
        assert reindex.read_build(raw, "memory_vec").target == reindex.vector_identity(store.embedder)
        assert store.search.reindexing
        assert store.search.find_missing_vectors() == 3
        assert store.search.make_vectors(1) == (1, False)
        refilling = store.index_status()
        assert (refilling["state"], refilling["index"], refilling["done"], refilling["total"]) == (
            "rebuilding",
            "vectors",
            1,
            3,
        ), refilling
        assert "embedder hashing-v3 (256 dimensions)" in refilling["text"]
        assert reindex.step(store.search) is None  # two records still wait for their vector
    finally:
        store.close()
    store = PgStore.open(pg_empty_url, Settings(dimension=256))  # a restart mid-refill keeps it
    try:
        raw = store.conn.raw
        assert raw.execute("select count(*) from memory_vectors").fetchone()[0] == 1
        assert store.search.find_missing_vectors() == 2
        assert store.search.make_vectors(10) == (2, False)
        assert reindex.step(store.search) == "vectors"
        assert not reindex.under_way(raw) and store.index_status()["state"] == "current"
        assert reindex.read_build(raw, "memory_vec").built_with == reindex.vector_identity(store.embedder)
        assert raw.execute("select count(*), min(vector_dims(embedding)) from memory_vectors").fetchone() == (
            3,
            256,
        )
        new = _write(store, "v", "fact", "Ny kantine i Aarhus åbner", {})  # a write with the new vectors
        assert raw.execute("select count(*) from memory_vectors where seq = %s", (new,)).fetchone()[0] == 1
        assert set(_found(store, "Spotkanie zespołu w Łodzi", "v")) >= {seqs[0]}
    finally:
        store.close()


async def test_the_daemons_job_reconnects_after_its_connection_is_lost(
    pg_empty_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """daemon/jobs.py IndexRebuild on PostgreSQL: batches on a connection of the job's own; a
    batch that finds it gone (a failover) fails, and the next run connects anew and finishes."""
    from daemon.jobs import IndexRebuild

    texts = _previous_release_store(pg_empty_url, monkeypatch)
    store = _open(pg_empty_url)
    rebuild = IndexRebuild(store, Settings(rebuild_batch_records=2, rebuild_pause_ms=1))
    try:
        assert await rebuild._batch() == "fts"
        rebuild._apart.conn.close()
        with pytest.raises(Exception, match="closed"):
            await rebuild._batch()
        assert rebuild._apart is None
        assert "batches" in await rebuild.run()
        assert store.search.reindexing is False and status(store.conn)["state"] == "current"
        assert reindex.read_build(store.conn.raw).done == len(texts)
        assert rebuild._apart is None  # closed once done
    finally:
        rebuild.close()
        store.close()


async def test_the_daemons_job_waits_for_the_vector_writer(pg_empty_url: str) -> None:
    """A refill of the vectors is the vector writer's work: the job's runs find it under way
    (and look again at their next run) until every vector is made, then record it done."""
    from daemon.jobs import IndexRebuild
    from state.pg.store import PgStore

    store = _open(pg_empty_url)
    try:
        for namespace, kind, text, provenance in OLD_TEXTS[:2]:
            _write(store, namespace, kind, text, provenance)
    finally:
        store.close()
    store = PgStore.open(pg_empty_url, Settings(dimension=256))
    rebuild = IndexRebuild(store, Settings(rebuild_pause_ms=1))
    try:
        assert "nothing" in await rebuild.run()
        assert store.search.reindexing and store.index_status()["index"] == "vectors"
        store.search.find_missing_vectors()
        store.search.make_vectors(10)
        assert "1 vectors" in await rebuild.run()
        assert not store.search.reindexing and store.index_status()["state"] == "current"
    finally:
        rebuild.close()
        store.close()
