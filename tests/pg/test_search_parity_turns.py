"""Search on PostgreSQL ranks conversation turns as the SQLite engine does, with both of the
SQLite engine's ranking inputs for turns (issue #18: "the same ranking inputs ... the same
fusion"):

* **turn context**: a turn's full-text row also holds the two turns before it, each at a
  fifth of the weight (state/turn_context.py);
* **reply lift**: a question turn passes a share of its BM25 score to the turn after it
  (state/search.py ANSWER_SHARE, the setting ``reply_lift``).

The same conversations go through each engine's own Store (``memories.create``: the path a
write takes in the daemon): bench/data/conversations' companion conversations as turns with a
session id, and its assistant chats as turns without one (kind ``message``, or kind ``fact``
with a speaker: the loose chains), with notes between them and a summary per session (never
a turn). The questions are the datasets' own, whose gold answers are turns.

The tolerance, as tests/pg/test_search_parity.py states it: BM25 and BM25 with the reply
lift give the same records in the same order with the same scores (relative difference under
1e-6; equal scores may come in another order); fused with the vectors, at least 95 % of each
top 10 is shared on average and at least 90 % of the questions have the very same top 10; the
recall@10 of the gold turns differs by at most 0.01. Each test also checks that the data
exercises the input it holds the engines to (records found only through their context,
rankings the lift changes), so that an engine without it fails.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from state.config import Settings
from state.memories import NewMemory
from state.search import record_text
from state.store import Store
from state.turn_context import CONTEXT_WEIGHT
from tests.conftest import new_database
from tests.pg.conftest import assert_counts_kept

DATA = Path(__file__).resolve().parents[2] / "bench" / "data" / "conversations"
WITH_SESSIONS = "companion-conversations.json"
WITHOUT_SESSIONS = "assistant-chats.json"
NOTES_EVERY = 10  # a note (no turn) after every tenth turn of a conversation without sessions


@dataclass(frozen=True)
class Write:
    """One record to store: its place in the data is its key on both engines."""

    namespace: str
    kind: str
    content: str
    session: str | None
    turn: str | None  # "conversation/turn id" of a turn, for the questions' gold


@dataclass
class Engines:
    """The same writes on both engines: each engine's store and key -> seq, seq -> key."""

    sqlite: Store
    pg: Store
    seqs: dict[str, list[int]] = field(default_factory=dict)

    def keys(self, engine: str) -> dict[int, int]:
        return {seq: key for key, seq in enumerate(self.seqs[engine])}


def _writes() -> list[Write]:
    """The conversations as records, in the order a client would store them."""
    writes: list[Write] = []
    data = json.loads((DATA / WITH_SESSIONS).read_text(encoding="utf-8"))
    for conv in data["conversations"]:
        namespace = f"conv/{conv['id']}"
        for session in conv["sessions"]:
            sid = f"{conv['id']}/{session['id']}"
            for turn in session["turns"]:
                text = f"{turn['speaker']}: {turn['text']}"
                writes.append(Write(namespace, "message", text, sid, f"{conv['id']}/{turn['id']}"))
            # A session's summary belongs to it but is no turn (never context, never a reply).
            summary = f"Summary of {' and '.join(conv['speakers'])} on {session['date']}."
            writes.append(Write(namespace, "summary", summary, sid, None))
    data = json.loads((DATA / WITHOUT_SESSIONS).read_text(encoding="utf-8"))
    for number, conv in enumerate(data["conversations"]):
        namespace = f"conv/{conv['id']}"
        # Without session ids: kind "message", or any kind when the text starts with a speaker.
        kind = "message" if number % 2 == 0 else "fact"
        turns = [turn for session in conv["sessions"] for turn in session["turns"]]
        for index, turn in enumerate(turns, 1):
            text = f"{turn['speaker']}: {turn['text']}"
            writes.append(Write(namespace, kind, text, None, f"{conv['id']}/{turn['id']}"))
            if index % NOTES_EVERY == 0:
                writes.append(
                    Write(namespace, kind, f"Note: item {index} of the chat, kept for later", None, None)
                )
    return writes


def _questions() -> list[tuple[str, str, list[str]]]:
    """(namespace, question, gold turns as "conversation/turn id")."""
    found = []
    for name in (WITH_SESSIONS, WITHOUT_SESSIONS):
        data = json.loads((DATA / name).read_text(encoding="utf-8"))
        for q in data["questions"]:
            gold = [f"{q['conversation']}/{turn}" for turn in q["gold"]]
            found.append((f"conv/{q['conversation']}", q["question"], gold))
    return found


def _store(writes: list[Write], store: Store) -> list[int]:
    """Each write through the store's own repository; the seqs, in order."""
    with store.transaction():
        return [
            store.memories.create(
                NewMemory(
                    namespace=w.namespace,
                    kind=w.kind,
                    content=w.content,
                    source="test",
                    provenance={"session_id": w.session} if w.session else {},
                )
            )["seq"]
            for w in writes
        ]


def _open_both(sqlite_path: Path, url: str) -> Engines:
    from state.pg.store import PgStore

    return Engines(Store.open(sqlite_path, Settings()), PgStore.open(url, Settings()))


@pytest.fixture(scope="module")
def conversations(
    pg_server: Any, pg_template: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engines]:
    """Every conversation on both engines (read only: the tests here do not write)."""
    writes = _writes()
    with new_database(pg_server, pg_template) as url:
        engines = _open_both(tmp_path_factory.mktemp("turns") / "turns.db", url)
        try:
            engines.seqs = {"sqlite": _store(writes, engines.sqlite), "pg": _store(writes, engines.pg)}
            yield engines
        finally:
            engines.sqlite.close()
            engines.pg.close()


@pytest.fixture
def words_only(conversations: Engines) -> Iterator[Engines]:
    """Both engines ranking by words (and the lift) alone, for this test."""
    for store in (conversations.sqlite, conversations.pg):
        store.search.vector_weight = 0.0
    try:
        yield conversations
    finally:
        for store in (conversations.sqlite, conversations.pg):
            store.search.vector_weight = 1.0


# -- what the engines hold ---------------------------------------------------------------------


def _fts_rows(store: Store) -> dict[int, tuple[str, str, str]]:
    """seq -> (own tokens, the turn before's, the one before that) of the SQLite engine."""
    return {
        row[0]: tuple(row[1:])
        for row in store.conn.execute("select rowid, tokens, before1, before2 from memory_fts")
    }


def _weighted(columns: tuple[str, ...]) -> tuple[dict[str, float], int]:
    """What FTS5's bm25() reads of a row: each token's frequency (own tokens 1, context tokens
    CONTEXT_WEIGHT) and the row's length in tokens, over all its columns."""
    counts: Counter[str] = Counter()
    length = 0
    for number, column in enumerate(columns):
        tokens = column.split()
        length += len(tokens)
        for token in tokens:
            counts[token] += 1.0 if number == 0 else CONTEXT_WEIGHT
    return dict(counts), length


def _assert_rows_alike(engines: Engines) -> int:
    """PostgreSQL holds each record's row as the SQLite engine's FTS5 row ranks it; the
    number of rows with context."""
    pg_key, sqlite_key = engines.keys("pg"), engines.keys("sqlite")
    sqlite = {sqlite_key[seq]: _weighted(columns) for seq, columns in _fts_rows(engines.sqlite).items()}
    pg = {
        pg_key[seq]: (freqs, length)
        for seq, freqs, length in engines.pg.conn.raw.execute(
            "select seq, freqs, doc_length from memory_search"
        )
    }
    assert pg.keys() == sqlite.keys()
    for key, (freqs, length) in sqlite.items():
        assert pg[key][1] == length, key
        assert pg[key][0] == pytest.approx(freqs, rel=1e-9), key
    assert_counts_kept(engines.pg.conn.raw)
    return sum(1 for seq, columns in _fts_rows(engines.sqlite).items() if any(columns[1:]))


def test_turn_rows_hold_the_turns_before_them_as_on_sqlite(conversations):
    with_context = _assert_rows_alike(conversations)
    assert with_context > 900  # nearly every turn has a turn before it
    # A note among turns of kind "fact" ("Note: ...", a label) is no turn's context, nor
    # has one; among kind "message" every record is a turn.
    rows = _fts_rows(conversations.sqlite)
    notes = conversations.sqlite.conn.execute(
        "select seq, kind from memory_records where content like 'Note: item %'"
    ).fetchall()
    assert {kind for _, kind in notes} == {"fact", "message"}
    fact_notes = {rows[seq][0] for seq, kind in notes if kind == "fact"}
    assert all(rows[seq][1:] == ("", "") for seq, kind in notes if kind == "fact")
    facts = [
        row[0]
        for row in conversations.sqlite.conn.execute("select seq from memory_records where kind = 'fact'")
    ]
    assert not any(column in fact_notes for seq in facts for column in rows[seq][1:])
    assert any(rows[seq][1] for seq, kind in notes if kind == "message")


# -- rankings -----------------------------------------------------------------------------------


def _same_ranking(ours: list[tuple[int, float]], theirs: list[tuple[int, float]], question: str) -> None:
    """The same records (as keys) in the same order with the same scores, up to the order of
    equal scores."""
    assert len(ours) == len(theirs), question
    if [k for k, _ in ours] != [k for k, _ in theirs]:
        by_score = lambda ranked: sorted((round(score, 9), key) for key, score in ranked)  # noqa: E731
        assert by_score(ours) == by_score(theirs), question
    for (_, a), (_, b) in zip(ours, theirs, strict=True):
        assert b == pytest.approx(a, rel=1e-6), question


def _as_keys(ranked: list[tuple[int, float]], keys: dict[int, int]) -> list[tuple[int, float]]:
    return [(keys[seq], score) for seq, score in ranked]


def test_bm25_over_turns_and_their_context_gives_the_same_scores(conversations):
    sqlite, pg = conversations.sqlite.search, conversations.pg.search
    sqlite_keys, pg_keys = conversations.keys("sqlite"), conversations.keys("pg")
    own = {seq: set(columns[0].split()) for seq, columns in _fts_rows(conversations.sqlite).items()}
    through_context = 0
    for namespace, question, _ in _questions():
        terms = sqlite._bm25_terms(question)
        assert pg.bm25_terms(question) == terms
        ours = sqlite._bm25_ranked(terms, [namespace], 50)
        theirs = pg.bm25(terms, [namespace], 50)
        _same_ranking(_as_keys(ours, sqlite_keys), _as_keys(theirs, pg_keys), question)
        # A top-10 record that holds none of the words itself is there by its context.
        through_context += any(not own[seq] & set(terms) for seq, _ in ours[:10])
    assert through_context > 100


def test_the_reply_lift_gives_the_same_scores(conversations):
    sqlite, pg = conversations.sqlite.search, conversations.pg.search
    sqlite_keys, pg_keys = conversations.keys("sqlite"), conversations.keys("pg")
    lifted = 0
    for namespace, question, _ in _questions():
        terms = sqlite._bm25_terms(question)
        scored = sqlite._bm25_ranked(terms, [namespace], 50)
        ours = sqlite._with_answers(scored)
        theirs = pg.with_answers(pg.bm25(terms, [namespace], 50))
        _same_ranking(_as_keys(ours, sqlite_keys), _as_keys(theirs, pg_keys), question)
        lifted += ours != scored
    assert lifted > 100  # most questions meet a question turn among their matches


def test_words_and_lift_rank_every_question_alike(words_only):
    """The search itself, vectors off: the same records in the same order."""
    sqlite_keys, pg_keys = words_only.keys("sqlite"), words_only.keys("pg")
    differ = []
    for namespace, question, _ in _questions():
        ours = [
            sqlite_keys[hit.seq] for hit in words_only.sqlite.search.search(question, [namespace], limit=10)
        ]
        theirs = [pg_keys[hit.seq] for hit in words_only.pg.search.search(question, [namespace], limit=10)]
        if ours != theirs:
            differ.append(question)
    # Only where equal scores meet at the page's edge may the order differ.
    assert len(differ) <= 0.02 * len(_questions()), differ


def _recall(engine: str, engines: Engines, writes: list[Write]) -> tuple[float, list[list[int]]]:
    """Mean recall@10 of the gold turns over the questions, and each question's top 10 (keys)."""
    store = engines.sqlite if engine == "sqlite" else engines.pg
    keys = engines.keys(engine)
    turn_of = {key: w.turn for key, w in enumerate(writes)}
    total = 0.0
    tops = []
    for namespace, question, gold in _questions():
        top = [keys[hit.seq] for hit in store.search.search(question, [namespace], limit=10)]
        tops.append(top)
        total += len(set(gold) & {turn_of[key] for key in top}) / len(gold)
    return total / len(_questions()), tops


def test_hybrid_search_of_turns_agrees_within_the_stated_tolerance(conversations):
    writes = _writes()
    ours_recall, ours = _recall("sqlite", conversations, writes)
    theirs_recall, theirs = _recall("pg", conversations, writes)
    shared = [len(set(a) & set(b)) / max(len(a), len(b)) for a, b in zip(ours, theirs, strict=True) if a or b]
    assert sum(shared) / len(shared) >= 0.95
    assert sum(a == b for a, b in zip(ours, theirs, strict=True)) >= 0.9 * len(shared)
    assert abs(ours_recall - theirs_recall) <= 0.01, (ours_recall, theirs_recall)


# -- the inputs on PostgreSQL alone ------------------------------------------------------------


def _pg_store(url: str) -> Store:
    from state.pg.store import PgStore

    return PgStore.open(url, Settings())


def _say(store: Store, lines: list[str], *, session: str | None = "s1", kind: str = "message") -> list[int]:
    return _store([Write("wsp_chat", kind, line, session, None) for line in lines], store)


def _words(store: Store, query: str) -> list[int]:
    store.search.vector_weight = 0.0
    return [hit.seq for hit in store.search.search(query, ["wsp_chat"], limit=10)]


def test_a_turn_is_found_on_postgresql_by_the_question_before_it(pg_url):
    store = _pg_store(pg_url)
    try:
        asked, answer, _ = _say(
            store,
            [
                "Jonah: When is the bread festival exactly?",
                "Maya: Saturday the 29th, at Navy Pier.",
                "Jonah: Perfect, I will bring the sourdough starter.",
            ],
        )
        assert _words(store, "bread festival")[:2] == [asked, answer]
    finally:
        store.close()


def test_the_reply_to_a_question_is_lifted_on_postgresql(pg_url):
    """tests/state/test_search_answers.py's case: "Churro." shares no word with the query."""
    store = _pg_store(pg_url)
    try:
        filler = _say(store, [f"Maya: name tag {i}" for i in range(3)], session="s0")
        asked, reply, cute = _say(
            store, ["Lena: What name did you give the puppy you adopted?", "Tomás: Churro.", "Lena: Cute!"]
        )
        query = "What is the name of the adopted puppy?"
        assert _words(store, query) == [asked, reply, *filler, cute]
        store.search.reply_lift = 0.0  # the setting turned off: the reply falls below the filler
        assert _words(store, query).index(reply) > max(_words(store, query).index(f) for f in filler)
    finally:
        store.close()


# -- writes that change a turn's neighbours ------------------------------------------------------


def _edit(store: Store, seqs: list[int]) -> None:
    """The same edits on either engine: a turn updated, one deleted, one redacted, one taken
    out of the index and put back (an out-of-order write), one written into an old session."""
    records = store.memories.by_seqs(seqs)
    with store.transaction():
        store.memories.update(records[seqs[3]]["id"], content="Maya: at the lakefront, bring a blanket")
        store.memories.delete(records[seqs[6]]["id"])
        version = store.memories.versions(records[seqs[9]]["id"])[-1]
        store.memories.redact_version(version["id"])
        store.search.remove(seqs[12])
        again = records[seqs[12]]
        store.search.add(
            seqs[12], again["namespace"], record_text(again["title"], again["content"], again["triggers"])
        )
    first = records[seqs[0]]
    session = first["provenance"].get("session_id")
    _store(
        [Write(first["namespace"], first["kind"], "Jonah: One more thing about the lake?", session, None)],
        store,
    )


def test_context_follows_updates_deletions_and_redactions_alike(pg_url, tmp_path):
    writes = [w for w in _writes() if w.namespace in ("conv/maya-jonah", "conv/user-nairobi")]
    engines = _open_both(tmp_path / "edits.db", pg_url)
    try:
        engines.seqs = {"sqlite": _store(writes, engines.sqlite), "pg": _store(writes, engines.pg)}
        for engine in ("sqlite", "pg"):
            store = engines.sqlite if engine == "sqlite" else engines.pg
            turns = [seq for seq, w in zip(engines.seqs[engine], writes, strict=True) if w.turn]
            _edit(store, turns)
            nairobi = [
                seq
                for seq, w in zip(engines.seqs[engine], writes, strict=True)
                if w.namespace == "conv/user-nairobi"
            ]
            _edit(store, nairobi[:20])  # a loose chain: its notes ("Note: ...") are no turn's context
        # The records the edits wrote, in the same order on both.
        for engine in ("sqlite", "pg"):
            store = engines.sqlite if engine == "sqlite" else engines.pg
            known = set(engines.seqs[engine])
            rows = store.conn.execute("select seq from memory_records order by seq").fetchall()
            engines.seqs[engine] += [row[0] for row in rows if row[0] not in known]
        _assert_rows_alike(engines)
    finally:
        engines.sqlite.close()
        engines.pg.close()


# -- a database indexed before migration m0004 -----------------------------------------------------


def _as_before_m0004(raw: Any) -> None:
    """Put the index back as the releases before migration m0004 left it: each row its own
    tokens only, no ``own`` or ``context_pending``, the counts of those rows, m0004 not applied."""
    from state.pg.search import IndexRow

    with raw.transaction():
        for seq, own in raw.execute("select seq, own from memory_search").fetchall():
            row = IndexRow.of(own)
            raw.execute(
                "update memory_search set tokens = array_to_tsvector(%s::text[]), freqs = %s::jsonb,"
                " doc_length = %s where seq = %s",
                (row.terms, json.dumps(row.freqs), row.length, seq),
            )
        raw.execute("alter table memory_search drop column own, drop column context_pending")
        raw.execute("delete from schema_migrations where version = 4")
        raw.execute("delete from search_terms")
        raw.execute(
            "insert into search_terms (term, docs) select lexeme, count(*) from memory_search,"
            " unnest(tsvector_to_array(tokens)) lexeme group by lexeme"
        )
        raw.execute(
            "update search_totals set (docs, tokens) = (select count(*), coalesce(sum(doc_length), 0)"
            " from memory_search)"
        )


def _rows(raw: Any) -> dict[int, tuple[Any, ...]]:
    return {
        seq: (freqs, length, sorted(tokens))
        for seq, freqs, length, tokens in raw.execute(
            "select seq, freqs, doc_length, tsvector_to_array(tokens) from memory_search"
        )
    }


def test_turns_indexed_before_the_migration_get_their_context_when_it_opens(pg_url, monkeypatch):
    import state.pg.search as pg_search

    monkeypatch.setattr(pg_search, "FILL_BATCH", 50)  # several batches
    writes = [w for w in _writes() if w.namespace in ("conv/maya-jonah", "conv/user-nairobi")]
    store = _pg_store(pg_url)
    try:
        _store(writes, store)
        made = _rows(store.conn.raw)
        _as_before_m0004(store.conn.raw)
        assert _rows(store.conn.raw) != made  # no context any more
    finally:
        store.close()
    store = _pg_store(pg_url)  # migrates, and gives the turns their context
    try:
        raw = store.conn.raw
        assert _rows(raw).keys() == made.keys()
        for seq, (freqs, length, tokens) in _rows(raw).items():
            assert (length, tokens) == made[seq][1:], seq
            assert freqs == pytest.approx(made[seq][0], rel=1e-9), seq
        assert raw.execute("select count(*) from memory_search where context_pending").fetchone()[0] == 0
        assert_counts_kept(store.conn.raw)
        assert store.search.fill_context() == 0  # once
    finally:
        store.close()
