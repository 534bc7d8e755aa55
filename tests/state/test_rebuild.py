"""The search index's rebuild after a tokenizer or embedder change (state/rebuild.py):
planned at open, copied in batches with a persisted cursor, resumable, answering meanwhile,
right after writes of every kind during it, swapped at the end, nothing lost.

Stores "made by tokenizer 1" are made here with this code and version 1 as the current
tokenizer (the frozen state/tokenize_v1.py); tests/fixtures/prev_release_store.db is one made
by the previous release itself."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from state import (
    embedders,
    index_builds,
    tokenize,
    tokenize_v1,
    tokenize_v2,
    tokenize_v4,
    tokenize_v5,
    tokenize_v6,
    tokenize_v7,
    turn_context,
)
from state.config import Settings
from state.doctor import check_indexes, rebuild_indexes
from state.index_builds import (
    FTS,
    FTS_NEXT,
    VECTORS,
    read_builds,
    table_exists,
    trash_tables,
    wanted_tokenizer,
)
from state.memories import NewMemory
from state.rebuild import rebuild_now, status, step
from state.redaction import purge_wal
from state.store import Store
from tests.conftest import seed_database

FIXTURE = Path(__file__).parent.parent / "fixtures" / "prev_release_store.db"
# The same memories written by the release before tokenizer 3 (commit 7f3ab18: tokenizer 2,
# hashing-v3 vectors with the coarse codes, at 16 dimensions).
FIXTURE_V2 = Path(__file__).parent.parent / "fixtures" / "prev_release_store_v2.db"
# The same memories and a conversation stored one delta per turn with time stamps, written by
# the last release with tokenizer 3 (commit c8f26da), whose turns got no context.
FIXTURE_V3 = Path(__file__).parent.parent / "fixtures" / "prev_release_store_v3.db"
# The same again with three AMP deltas whose texts start with a label ("Decision: ..."), written
# by the last release with tokenizer 8 (commit ca1618f), which took them for a speaker's turns.
FIXTURE_V8 = Path(__file__).parent.parent / "fixtures" / "prev_release_store_v8.db"
CURRENT = wanted_tokenizer()  # the tokenizer this code indexes with
CYRILLIC = "Встреча перенесена на пятницу"  # tokenizer 1 keeps no word of it


def _text(n: int) -> str:
    body = CYRILLIC if n % 4 == 0 else "the lighthouse keeper logs the weather"
    return f"{body} ref{n:03d}"


class PreviousHashing(embedders.HashingEmbedder):
    """The hashing embedder under the previous release's name (its features changed with
    the tokenizer, so its vectors are rebuilt too)."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.name = "hashing-v2"


@pytest.fixture
def v1_store(paths, migrated_database, monkeypatch):
    """A store indexed by tokenizer 1 and hashing-v2 with 40 records (every 4th in
    Russian), closed."""
    seed_database(paths, migrated_database)
    with monkeypatch.context() as patch:
        patch.setattr(index_builds, "current_tokenizer", lambda: (1, tokenize_v1))
        patch.setitem(embedders._FACTORIES, "hashing", PreviousHashing)
        store = Store.open(paths.database, Settings())
        with store.transaction():
            for n in range(40):
                store.memories.create(
                    NewMemory(namespace="wsp_a", kind="fact", content=_text(n), source="test")
                )
        assert read_builds(store.conn)[FTS].built_with == "tokenizer-1"
        store.close()
    return paths.database


def _found(store: Store, query: str, namespace: str = "wsp_a") -> list[str]:
    hits = store.search.search(query, [namespace], limit=50)
    records = store.memories.by_seqs([h.seq for h in hits])
    return [records[h.seq]["content"] for h in hits]


def _words(store: Store, query: str, namespace: str = "wsp_a") -> list[str]:
    """What BM25 alone finds (the vectors find near misses too, by design)."""
    weight, store.search.vector_weight = store.search.vector_weight, 0.0
    try:
        return _found(store, query, namespace)
    finally:
        store.search.vector_weight = weight


def _fts_rows(store: Store, table: str = FTS) -> dict[int, str]:
    return dict(store.conn.execute(f"select rowid, tokens from {table}").fetchall())


def test_open_only_records_the_rebuild(v1_store):
    store = Store.open(v1_store, Settings())
    try:
        fts = read_builds(store.conn)[FTS]
        assert (fts.built_with, fts.target, fts.cursor, fts.done) == ("tokenizer-1", CURRENT, 0, 0)
        assert _fts_rows(store, FTS_NEXT) == {}  # nothing copied at open
        assert len(_fts_rows(store)) == 40
        assert status(store.conn)["text"].startswith(
            f"search index: rebuilding for tokenizer {tokenize.TOKENIZER_VERSION} — 0 of 40 records (0 %), started "
        )
        vectors = read_builds(store.conn)[VECTORS]
        assert (vectors.built_with, vectors.target) == (
            "hashing-v2:int8-cosine+coarse2:1024",
            "hashing-v3:int8-cosine+coarse2:1024",
        )
    finally:
        store.close()


def test_batches_advance_the_cursor_and_answer_from_the_old_index_meanwhile(v1_store):
    store = Store.open(v1_store, Settings())
    try:
        seqs = sorted(_fts_rows(store))
        for batch in range(1, 4):
            assert step(store, max_records=10, budget_seconds=60) == "fts"
            fts = read_builds(store.conn)[FTS]
            assert (fts.cursor, fts.done) == (seqs[batch * 10 - 1], batch * 10)
            assert sorted(_fts_rows(store, FTS_NEXT)) == seqs[: batch * 10]
            # The old table answers, queried with tokenizer 1's terms; Russian stays unfound.
            assert len(_found(store, "lighthouse")) == 30
            assert _found(store, "пятницу") == []
        assert status(store.conn)["percent"] == 75
        assert step(store, max_records=10, budget_seconds=60) == "fts"  # the last ten
        assert read_builds(store.conn)[FTS].rebuilding  # a full batch: one more to be sure
        assert step(store, max_records=10, budget_seconds=60) == "fts"  # finds none: swaps
        fts = read_builds(store.conn)[FTS]
        assert (fts.built_with, fts.target, fts.done) == (CURRENT, None, 40)
        assert not table_exists(store.conn, FTS_NEXT)
        assert _fts_rows(store) == {
            seq: tokenize.index_text(text)
            for seq, text in store.conn.execute("select seq, content from memory_records")
        }
        assert len(_found(store, "пятницу")) == 10
        assert trash_tables(store.conn)  # the old table's data, for the next batches
        while step(store, max_records=10, budget_seconds=60) is not None:
            pass
        assert trash_tables(store.conn) == []
        assert status(store.conn)["text"] == "search index: current"
    finally:
        store.close()


def test_an_interrupted_batch_leaves_nothing_and_the_rebuild_resumes_after_a_reopen(v1_store, monkeypatch):
    store = Store.open(v1_store, Settings())
    for _ in range(2):
        step(store, max_records=10, budget_seconds=60)
    calls = []

    def dies_midway(text: str) -> str:  # the process "dies" in the middle of a batch
        calls.append(text)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return tokenize.index_text(text)

    monkeypatch.setattr(tokenize, "index_text", dies_midway)
    with pytest.raises(KeyboardInterrupt):
        step(store, max_records=10, budget_seconds=60)
    monkeypatch.undo()
    fts = read_builds(store.conn)[FTS]
    assert (fts.done, len(_fts_rows(store, FTS_NEXT))) == (20, 20)  # the batch left nothing
    store.close()
    reopened = Store.open(v1_store, Settings())
    try:
        fts = read_builds(reopened.conn)[FTS]
        assert (fts.target, fts.done) == (CURRENT, 20)  # continued, not started again
        rebuild_now(reopened, force=False)
        assert read_builds(reopened.conn)[FTS].done == 40
        assert all(report.ok for report in check_indexes(reopened.conn).values())
    finally:
        reopened.close()


def test_writes_of_every_kind_during_the_rebuild_end_up_right(v1_store):
    store = Store.open(v1_store, Settings())
    try:
        step(store, max_records=20, budget_seconds=60)  # copied: ref000-ref019
        ids = {
            r["content"].split()[-1]: r["id"]
            for r in map(dict, store.conn.execute("select id, content from memory_records"))
        }
        with store.transaction():
            created = store.memories.create(
                NewMemory(namespace="wsp_a", kind="fact", content="Новая запись о маяке", source="test")
            )
            store.memories.update(ids["ref003"], content="copied already, now about tides ref003")
            store.memories.update(ids["ref030"], content="not copied yet, now about ferries ref030")
            store.memories.delete(ids["ref005"])
            store.memories.delete(ids["ref035"])
        for memory_id in (ids["ref007"], ids["ref037"]):
            current = store.memories.versions(memory_id)[-1]
            with store.transaction():
                store.memories.redact_version(current["id"])
        # Meanwhile: the old table is current for every write.
        assert _found(store, "tides") == ["copied already, now about tides ref003"]
        assert _words(store, "ref005") == [] and _words(store, "ref037") == []
        rebuild_now(store, force=False)
        assert all(report.ok for report in check_indexes(store.conn).values())
        assert _found(store, "маяке") == ["Новая запись о маяке"]
        assert _found(store, "ferries") == ["not copied yet, now about ferries ref030"]
        assert _words(store, "tides") == ["copied already, now about tides ref003"]
        assert not [text for text in _words(store, "lighthouse") if "ref003" in text or "ref030" in text]
        for gone in ("ref005", "ref035", "ref007", "ref037"):
            assert _words(store, gone) == [], gone
        assert created["seq"] in _fts_rows(store)
    finally:
        store.close()


def test_nothing_is_lost(v1_store):
    store = Store.open(v1_store, Settings())
    try:
        before = [
            store.conn.execute(f"select count(*) from {t}").fetchone()[0]
            for t in ("memory_records", "memory_versions")
        ]
        rebuild_now(store, force=False)
        after = [
            store.conn.execute(f"select count(*) from {t}").fetchone()[0]
            for t in ("memory_records", "memory_versions")
        ]
        assert before == after
        for n in range(40):
            assert _found(store, f"ref{n:03d}")[0] == _text(n)
    finally:
        store.close()


def test_vectors_are_rebuilt_in_place_and_rank_only_when_complete(paths):
    first = Store.open(paths.database, Settings(dimension=64))
    with first.transaction():
        for n in range(30):
            first.memories.create(NewMemory(namespace="wsp_a", kind="fact", content=_text(n), source="test"))
    first.close()
    store = Store.open(paths.database, Settings(dimension=32))
    try:
        vectors = read_builds(store.conn)[VECTORS]
        assert (vectors.built_with, vectors.target) == (
            "hashing-v3:int8-cosine+coarse2:64",
            "hashing-v3:int8-cosine+coarse2:32",
        )
        step(store, max_records=10, budget_seconds=60)
        assert store.conn.execute("select count(*) from memory_vec").fetchone()[0] == 10
        store.search.vector_mode = "rerank"
        hits = store.search.search("lighthouse keeper", ["wsp_a"])
        assert hits and all(hit.vector_rank is None for hit in hits)  # words alone meanwhile
        assert "search ranks by words until then" in status(store.conn)["text"]
        with store.transaction():  # below and above the cursor
            store.memories.create(
                NewMemory(
                    namespace="wsp_a", kind="fact", content="a new note on harbor pilots", source="test"
                )
            )
        rebuild_now(store, force=False)
        assert all(report.ok for report in check_indexes(store.conn).values())
        assert read_builds(store.conn)[VECTORS].built_with == "hashing-v3:int8-cosine+coarse2:32"
        store.search.vector_mode = "rerank"  # the default consults vectors only when words find too few
        assert any(hit.vector_rank for hit in store.search.search("lighthouse keeper", ["wsp_a"]))
    finally:
        store.close()


def test_a_change_of_mind_during_a_rebuild_starts_it_again(paths):
    first = Store.open(paths.database, Settings(dimension=64))
    with first.transaction():
        for n in range(30):
            first.memories.create(NewMemory(namespace="wsp_a", kind="fact", content=_text(n), source="test"))
    first.close()
    second = Store.open(paths.database, Settings(dimension=32))
    step(second, max_records=10, budget_seconds=60)
    second.close()
    third = Store.open(paths.database, Settings(dimension=16))
    try:
        vectors = read_builds(third.conn)[VECTORS]
        assert (vectors.target, vectors.done) == ("hashing-v3:int8-cosine+coarse2:16", 0)
        rebuild_now(third, force=False)
        assert all(report.ok for report in check_indexes(third.conn).values())
    finally:
        third.close()


def test_a_redaction_during_the_trash_teardown_drops_the_old_text_at_once(v1_store):
    store = Store.open(v1_store, Settings())
    try:
        while read_builds(store.conn)[FTS].rebuilding:
            step(store, max_records=100, budget_seconds=60)
        assert trash_tables(store.conn, FTS)
        memory_id = store.conn.execute("select id from memory_records limit 1").fetchone()[0]
        with store.transaction():
            store.memories.redact_version(store.memories.versions(memory_id)[-1]["id"])
        assert trash_tables(store.conn, FTS) == []
    finally:
        store.close()


def test_doctor_repair_runs_the_same_rebuild_to_the_end(v1_store):
    store = Store.open(v1_store, Settings())
    try:
        step(store, max_records=10, budget_seconds=60)
        repaired = rebuild_indexes(store)
        assert repaired == {"fts": 40, "vectors": 40, "live_records": 40}
        builds = read_builds(store.conn)
        assert builds[FTS].built_with == CURRENT and not builds[FTS].rebuilding
        assert trash_tables(store.conn) == [] and not table_exists(store.conn, FTS_NEXT)
        assert all(report.ok for report in check_indexes(store.conn).values())
    finally:
        store.close()


def test_a_store_made_by_the_previous_release(paths):
    shutil.copyfile(FIXTURE, paths.database)
    store = Store.open(paths.database, Settings())
    try:
        builds = read_builds(store.conn)
        assert (builds[FTS].built_with, builds[FTS].target) == ("tokenizer-1", CURRENT)
        assert builds[VECTORS].built_with == "hashing-v2:int8-cosine:16"
        assert builds[VECTORS].target == "hashing-v3:int8-cosine+coarse2:1024"
        records = store.conn.execute("select count(*) from memory_records").fetchone()[0]
        live = {
            re.search(r"ref\d{3}", content).group(): (namespace, content)
            for namespace, content in store.conn.execute(
                "select namespace, content from memory_records where deleted_at is null"
            )
        }
        everywhere = sorted({namespace for namespace, _ in live.values()})
        # Meanwhile the old index answers, by tokenizer 1's terms.
        assert _found(store, "ref042", live["ref042"][0]) == [live["ref042"][1]]
        russian = [ref for ref, row in live.items() if "пятниц" in row[1]]
        assert russian and _found(store, "пятницу", live[russian[0]][0]) == []
        # The catalog's index is tiny: rebuilt at open.
        assert [s["slug"] for s in store.suites.catalog("ferries", 10)] == ["harbor-guide"]
        rebuild_now(store, force=False)
        assert store.conn.execute("select count(*) from memory_records").fetchone()[0] == records
        assert all(report.ok for report in check_indexes(store.conn).values())
        for ref, (namespace, content) in live.items():
            assert _found(store, ref, namespace)[0] == content, ref
        for ref in russian:
            assert live[ref][1] in _found(store, "пятницу", live[ref][0])
        assert _found(store, "revised", live["ref007"][0]) == [live["ref007"][1]]
        assert _words(store, "obsolete", live["ref007"][0]) == []
        assert "ref013" not in live
        assert not any(_words(store, "ref013", namespace) for namespace in everywhere)
    finally:
        store.close()


def test_a_redaction_during_the_rebuild_leaves_no_bytes_in_either_table(v1_store):
    marker = b"zqxwvkredactmarker"  # both tokenizers keep it whole (digits: no stemming)
    store = Store.open(v1_store, Settings())
    try:
        with store.transaction():
            secrets = [
                store.memories.create(
                    NewMemory(
                        namespace="wsp_a",
                        kind="fact",
                        source="test",
                        content=f"the vault password is zqxwvkredactmarker{n}",
                    )
                )["id"]
                for n in (1, 2)
            ]
        while (fts := read_builds(store.conn)[FTS]).rebuilding and fts.done < 41:
            step(store, max_records=41, budget_seconds=60)  # the first secret is copied
        database = Path(store.conn.execute("pragma database_list").fetchone()[2])

        def file_bytes() -> bytes:
            wal = Path(f"{database}-wal")
            return database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")

        def redact(memory_id: str) -> bytes:
            with store.transaction():
                store.memories.redact_version(store.memories.versions(memory_id)[-1]["id"])
            purge_wal(store.conn)
            return file_bytes()

        assert marker + b"1" in file_bytes() and marker + b"2" in file_bytes()
        assert marker + b"1" not in redact(secrets[0])  # in the old table and the new one
        while read_builds(store.conn)[FTS].rebuilding:
            step(store, max_records=100, budget_seconds=60)
        assert trash_tables(store.conn, FTS)  # the old table's text, waiting to be deleted
        assert marker not in redact(secrets[1])
    finally:
        store.close()


def test_a_failing_embedder_holds_the_vectors_rebuild_and_loses_nothing(paths, monkeypatch):
    first = Store.open(paths.database, Settings(dimension=64))
    with first.transaction():
        for n in range(12):
            first.memories.create(NewMemory(namespace="wsp_a", kind="fact", content=_text(n), source="test"))
    first.close()
    store = Store.open(paths.database, Settings(dimension=32))
    try:
        step(store, max_records=5, budget_seconds=60)
        embed = store.embedder.embed

        def down(text: str) -> list[float]:  # a model server that stopped answering
            raise ConnectionError("embedding server refused the connection")

        monkeypatch.setattr(store.embedder, "embed", down)
        with pytest.raises(ConnectionError):
            step(store, max_records=5, budget_seconds=60)
        vectors = read_builds(store.conn)[VECTORS]
        assert (vectors.done, store.conn.execute("select count(*) from memory_vec").fetchone()[0]) == (
            5,
            5,
        )  # the failed batch left nothing; the words still answer
        assert len(_words(store, "lighthouse")) == 9
        monkeypatch.setattr(store.embedder, "embed", embed)
        rebuild_now(store, force=False)
        assert all(report.ok for report in check_indexes(store.conn).values())
    finally:
        store.close()


def test_a_store_indexed_by_tokenizer_2_rebuilds_its_words_and_keeps_its_vectors(
    paths, migrated_database, monkeypatch
):
    seed_database(paths, migrated_database)
    with monkeypatch.context() as patch:
        patch.setattr(index_builds, "current_tokenizer", lambda: (2, tokenize_v2))
        store = Store.open(paths.database, Settings())
        with store.transaction():
            for n in range(30):
                store.memories.create(
                    NewMemory(
                        namespace="wsp_a",
                        kind="fact",
                        source="test",
                        content=f"Caroline went to the support group ref{n:03d}",
                    )
                )
        assert read_builds(store.conn)[FTS].built_with == "tokenizer-2"
        store.close()
    store = Store.open(paths.database, Settings())
    try:
        builds = read_builds(store.conn)
        assert (builds[FTS].built_with, builds[FTS].target) == ("tokenizer-2", CURRENT)
        assert builds[VECTORS].target is None  # tokenizer 3 left the embedder's tokens alone
        # Meanwhile the old index answers by version 2's terms: "went" is not "go" there.
        assert len(_words(store, "went")) == 30 and _words(store, "go") == []
        rebuild_now(store, force=False)
        assert len(_words(store, "go")) == 30 and len(_words(store, "ref007")) == 1
        assert all(report.ok for report in check_indexes(store.conn).values())
    finally:
        store.close()


def test_a_store_made_by_the_release_with_tokenizer_2(paths):
    shutil.copyfile(FIXTURE_V2, paths.database)
    store = Store.open(paths.database, Settings(dimension=16))
    try:
        builds = read_builds(store.conn)
        assert (builds[FTS].built_with, builds[FTS].target) == ("tokenizer-2", CURRENT)
        assert (builds[VECTORS].built_with, builds[VECTORS].target) == (
            "hashing-v3:int8-cosine+coarse2:16",
            None,
        )  # its vectors are kept
        live = {
            re.search(r"ref\d{3}", content).group(): (namespace, content)
            for namespace, content in store.conn.execute(
                "select namespace, content from memory_records where deleted_at is null"
            )
        }
        assert _words(store, "ref042", live["ref042"][0]) == [live["ref042"][1]]  # meanwhile
        rebuild_now(store, force=False)
        assert read_builds(store.conn)[FTS].built_with == CURRENT
        assert all(report.ok for report in check_indexes(store.conn).values())
        for ref, (namespace, content) in live.items():
            assert _words(store, ref, namespace) == [content], ref
        shared = [ref for ref, row in live.items() if "shared a photo" in row[1]]
        # Tokenizer 3's lemmas now reach the old memories: "share a picture" meets "shared a photo".
        assert shared and live[shared[0]][1] in _words(store, "pictures", live[shared[0]][0])
    finally:
        store.close()


def test_a_store_made_by_the_release_with_tokenizer_3_gives_its_stamped_turns_context(paths):
    """Tokenizer 3's tokens are 4's: the old index answers meanwhile with the same terms, and
    the rebuild gives the turns stored as "[time] speaker: text" the turns before them."""
    shutil.copyfile(FIXTURE_V3, paths.database)
    store = Store.open(paths.database, Settings(dimension=16))
    try:
        builds = read_builds(store.conn)
        assert (builds[FTS].built_with, builds[FTS].target) == ("tokenizer-3", CURRENT)
        assert builds[VECTORS].target is None
        turns = store.conn.execute(
            "select seq, namespace, content from memory_records where kind = 'observation' order by seq"
        ).fetchall()
        assert [row[2].split("] ")[1].split(":")[0] for row in turns] == ["Jonah", "Maya", "Jonah"]
        (ask, ask_ns, question), (reply, _, answer), _ = turns

        def context(seq: int) -> tuple[str, str]:
            row = store.conn.execute(
                "select before1, before2 from memory_fts where rowid = ?", (seq,)
            ).fetchone()
            return tuple(row)

        assert context(reply) == ("", "")  # tokenizer 3 left it without
        assert _words(store, "navy pier", ask_ns) == [answer]  # the old index answers meanwhile
        rebuild_now(store, force=False)
        assert read_builds(store.conn)[FTS].built_with == CURRENT
        own = store.conn.execute("select tokens from memory_fts where rowid = ?", (ask,)).fetchone()[0]
        assert context(reply)[0] == own
        # The reply is found by the words of the question it answers.
        assert answer in _words(store, "bread festival", ask_ns)[:2]
        assert all(report.ok for report in check_indexes(store.conn).values())
    finally:
        store.close()


def test_a_store_made_by_the_release_with_tokenizer_8_takes_the_context_from_its_labelled_notes(paths):
    """Tokenizer 8's tokens are 9's: the old index answers meanwhile with the same terms, and
    the rebuild empties the context columns of the notes that start with a label
    ("Decision: ...", no session id), while the stamped turns keep theirs."""
    shutil.copyfile(FIXTURE_V8, paths.database)
    store = Store.open(paths.database, Settings(dimension=16))
    try:
        builds = read_builds(store.conn)
        assert (builds[FTS].built_with, builds[FTS].target) == ("tokenizer-8", CURRENT)
        assert builds[VECTORS].target is None  # the vectors did not change

        def rows(kind: str) -> list[tuple[int, str, str, str, str]]:
            return store.conn.execute(
                "select r.seq, r.content, f.tokens, f.before1, f.before2 from memory_records r"
                " join memory_fts f on f.rowid = r.seq where r.kind = ? order by r.seq",
                (kind,),
            ).fetchall()

        notes = rows("decision")
        assert [row[1].split(":")[0] for row in notes] == ["Decision"] * 3
        namespace = store.memories.by_seqs([notes[0][0]])[notes[0][0]]["namespace"]
        # Tokenizer 8 gave the third note the words of the two before it.
        assert notes[2][3:] == (notes[1][2], notes[0][2])
        assert "billing" in notes[1][1]
        assert _words(store, "billing export", namespace) == [notes[1][1], notes[2][1]]  # meanwhile
        rebuild_now(store, force=False)
        assert read_builds(store.conn)[FTS].built_with == CURRENT
        assert [row[3:] for row in rows("decision")] == [("", "")] * 3
        assert _words(store, "billing export", namespace) == [notes[1][1]]
        turns = rows("observation")
        assert turns[2][3:] == (turns[1][2], turns[0][2])  # a speaker's turns keep their context
        assert all(report.ok for report in check_indexes(store.conn).values())
    finally:
        store.close()


def test_a_store_indexed_by_tokenizer_4_rebuilds_to_fold_letters(paths, migrated_database, monkeypatch):
    """Tokenizer 5 folds the letters no decomposition strips (state/tokenize.py LETTER_FOLDS).
    A store indexed by 4 keeps answering with 4's terms (state/tokenize_v4.py) while it
    rebuilds; then "Lodz" finds what was written as "Łódź"."""
    seed_database(paths, migrated_database)
    with monkeypatch.context() as patch:
        patch.setattr(index_builds, "current_tokenizer", lambda: (4, tokenize_v4))
        store = Store.open(paths.database, Settings(dimension=16))
        with store.transaction():
            for text in ("Spotkanie w Łodzi, Łukasz wie", "Søren flytter til København", "A plain note"):
                store.memories.create(NewMemory(namespace="wsp_a", kind="fact", content=text, source="test"))
        assert read_builds(store.conn)[FTS].built_with == "tokenizer-4"
        store.close()
    store = Store.open(paths.database, Settings(dimension=16))
    try:
        assert read_builds(store.conn)[FTS].target == CURRENT
        assert "łodzi" in " ".join(_fts_rows(store).values())  # the old index, as 4 wrote it
        assert _words(store, "Łodzi") == ["Spotkanie w Łodzi, Łukasz wie"]  # answers meanwhile
        with store.transaction():  # a write meanwhile goes into the old index in 4's tokens
            ferry = store.memories.create(
                NewMemory(namespace="wsp_a", kind="fact", content="Ærø ferry", source="test")
            )
        assert _words(store, "Ærø") == ["Ærø ferry"]
        assert _fts_rows(store)[ferry["seq"]].split()[0] == "ærø"  # 4's token, not 5's "aero"
        rebuild_now(store, force=False)
        assert read_builds(store.conn)[FTS].built_with == CURRENT
        assert _words(store, "lodzi lukasz") == ["Spotkanie w Łodzi, Łukasz wie"]
        assert _words(store, "Soren Kobenhavn") == ["Søren flytter til København"]
        assert _words(store, "aero") == ["Ærø ferry"]
        assert all(report.ok for report in check_indexes(store.conn).values())
    finally:
        store.close()


def test_a_store_indexed_by_tokenizer_5_rebuilds_to_meet_spellings(paths, migrated_database, monkeypatch):
    """Tokenizer 6 meets spellings that differ by keyboard or habit (state/tokenize.py
    ``spelling``). A store indexed by 5 keeps answering with 5's terms (state/tokenize_v5.py)
    while it rebuilds; then "פגישה" finds what was written as "הפגישה" (the meeting) and
    "کتاب" (Persian keyboard) what was written as "الكتاب", "会议" what was written "會議"."""
    seed_database(paths, migrated_database)
    with monkeypatch.context() as patch:
        patch.setattr(index_builds, "current_tokenizer", lambda: (5, tokenize_v5))
        store = Store.open(paths.database, Settings(dimension=16))
        with store.transaction():
            for text in ("הפגישה נדחתה לשבוע הבא", "قرأت الكتاب أمس", "團隊會議改到週五", "A plain note"):
                store.memories.create(NewMemory(namespace="wsp_a", kind="fact", content=text, source="test"))
        assert read_builds(store.conn)[FTS].built_with == "tokenizer-5"
        store.close()
    store = Store.open(paths.database, Settings(dimension=16))
    try:
        assert read_builds(store.conn)[FTS].target == CURRENT
        assert "פגישה" not in " ".join(_fts_rows(store).values()).split()  # the old index, as 5 wrote it
        assert _words(store, "הפגישה") == ["הפגישה נדחתה לשבוע הבא"]  # answers meanwhile
        assert _words(store, "פגישה") == []  # not yet: 5 has no prefixes stripped
        with store.transaction():  # a write meanwhile goes into the old index in 5's tokens
            late = store.memories.create(
                NewMemory(namespace="wsp_a", kind="fact", content="בירושלים יורד שלג", source="test")
            )
        assert _fts_rows(store)[late["seq"]].split()[0] == "בירושלים"
        assert "ירושלים" not in _fts_rows(store)[late["seq"]].split()
        rebuild_now(store, force=False)
        assert read_builds(store.conn)[FTS].built_with == CURRENT
        assert _words(store, "פגישה") == ["הפגישה נדחתה לשבוע הבא"]
        assert _words(store, "ירושלים") == ["בירושלים יורד שלג"]
        assert _words(store, "کتاب") == ["قرأت الكتاب أمس"]
        assert _words(store, "会议") == ["團隊會議改到週五"]
        assert all(report.ok for report in check_indexes(store.conn).values())
    finally:
        store.close()


def test_a_store_indexed_by_tokenizer_6_rebuilds_to_stem_its_languages(paths, migrated_database, monkeypatch):
    """Tokenizer 7 stems a German, Polish, ... text in its own language (state/languages.py).
    A store indexed by 6 keeps answering with 6's terms (state/tokenize_v6.py) while it
    rebuilds, and a write meanwhile goes in 6's tokens; then "Besprechung" finds what was
    written "Besprechungen", and "spotkanie" what was written "Spotkania"."""
    seed_database(paths, migrated_database)
    german = "Die Besprechungen mit den Kunden wurden auf Freitag verschoben."
    polish = "Spotkania z klientami przeniesiono na piątek, bo serwer nie działa."
    with monkeypatch.context() as patch:
        patch.setattr(index_builds, "current_tokenizer", lambda: (6, tokenize_v6))
        store = Store.open(paths.database, Settings(dimension=16))
        with store.transaction():
            for text in (german, polish, "A plain note about the customers"):
                store.memories.create(NewMemory(namespace="wsp_a", kind="fact", content=text, source="test"))
        assert read_builds(store.conn)[FTS].built_with == "tokenizer-6"
        store.close()
    store = Store.open(paths.database, Settings(dimension=16))
    try:
        assert read_builds(store.conn)[FTS].target == CURRENT
        assert "·de" not in " ".join(_fts_rows(store).values()).split()  # the old index, as 6 wrote it
        assert _words(store, "Besprechungen") == [german]  # answers meanwhile
        assert _words(store, "Besprechung") == []  # not yet: 6 stems German as English
        with store.transaction():  # a write meanwhile goes into the old index in 6's tokens
            late = store.memories.create(
                NewMemory(
                    namespace="wsp_a", kind="fact", content="Die Rechnungen sind noch offen.", source="test"
                )
            )
        assert _fts_rows(store)[late["seq"]].split()[1] == "rechnungen"
        rebuild_now(store, force=False)
        assert read_builds(store.conn)[FTS].built_with == CURRENT
        assert _words(store, "Besprechung Kunde") == [german]
        assert _words(store, "spotkanie klient") == [polish]
        assert _words(store, "Rechnung") == ["Die Rechnungen sind noch offen."]
        assert _words(store, "customer") == ["A plain note about the customers"]  # English as before
        assert all(report.ok for report in check_indexes(store.conn).values())
    finally:
        store.close()


def test_a_store_indexed_by_tokenizer_7_rebuilds_to_stem_its_new_languages(
    paths, migrated_database, monkeypatch
):
    """Tokenizer 8 tells Lithuanian, Serbian, Nepali, ... as well (state/languages.py). A store
    indexed by 7 answers with 7's terms meanwhile (a Serbian text stemmed as Polish, the
    Cyrillic one as Russian); then "kupci" finds the Cyrillic "купцима", and "susitikimas"
    the Lithuanian "Susitikimai"; tokenizer 7's German as before."""
    seed_database(paths, migrated_database)
    lithuanian = "Susitikimai su klientais buvo atidėti iki penktadienio, nes serveris neveikia."
    serbian = "Састанци са купцима су одложени за петак јер сервер не ради."
    german = "Die Besprechungen mit den Kunden wurden auf Freitag verschoben."
    with monkeypatch.context() as patch:
        patch.setattr(index_builds, "current_tokenizer", lambda: (7, tokenize_v7))
        store = Store.open(paths.database, Settings(dimension=16))
        with store.transaction():
            for text in (lithuanian, serbian, german):
                store.memories.create(NewMemory(namespace="wsp_a", kind="fact", content=text, source="test"))
        assert read_builds(store.conn)[FTS].built_with == "tokenizer-7"
        store.close()
    store = Store.open(paths.database, Settings(dimension=16))
    try:
        assert read_builds(store.conn)[FTS].target == CURRENT
        assert _words(store, "купцима") == [serbian]  # answers meanwhile
        assert _words(store, "kupci") == []  # not yet: 7 stems it as Russian
        rebuild_now(store, force=False)
        assert read_builds(store.conn)[FTS].built_with == CURRENT
        assert _words(store, "kupci") == [serbian]
        assert _words(store, "susitikimas klientas") == [lithuanian]
        assert _words(store, "Besprechung Kunde") == [german]
        assert all(report.ok for report in check_indexes(store.conn).values())
    finally:
        store.close()


def test_a_store_indexed_by_tokenizer_9_rebuilds_to_take_the_context_from_its_headed_documents(
    paths, migrated_database, monkeypatch
):
    """Tokenizer 10 knows a header's label ("Title: ...") for no speaker. A store indexed by 9
    (its labels patched back in) gave each such document the words of the two before it; it
    answers with them meanwhile (the same tokens), and the rebuild takes them away."""
    seed_database(paths, migrated_database)
    documents = [
        "Title: Runbook. Restart the worker, then check the queue depth.",
        "Title: Billing. The billing export runs every Friday night after the backup.",
        "Title: Onboarding. New hires get a laptop and a VPN account on day one.",
    ]
    with monkeypatch.context() as patch:
        patch.setattr(index_builds, "current_tokenizer", lambda: (9, tokenize))
        patch.setattr(turn_context, "NOTE_LABELS", turn_context.NOTE_LABELS - turn_context.HEADER_LABELS)
        store = Store.open(paths.database, Settings(dimension=16))
        with store.transaction():
            for text in documents:
                store.memories.create(
                    NewMemory(namespace="wsp_a", kind="document", content=text, source="test")
                )
        assert read_builds(store.conn)[FTS].built_with == "tokenizer-9"
        store.close()
    store = Store.open(paths.database, Settings(dimension=16))
    try:
        assert read_builds(store.conn)[FTS].target == CURRENT
        assert _words(store, "billing export") == documents[1:]  # 9's context, meanwhile
        rebuild_now(store, force=False)
        assert read_builds(store.conn)[FTS].built_with == CURRENT
        assert _words(store, "billing export") == [documents[1]]
        contexts = store.conn.execute("select before1, before2 from memory_fts").fetchall()
        assert [tuple(row) for row in contexts] == [("", "")] * 3
        assert all(report.ok for report in check_indexes(store.conn).values())
    finally:
        store.close()
