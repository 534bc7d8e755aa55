"""Conversation turns are indexed with the turns before them as weak context
(state/turn_context.py): a turn that only answers the question before it is found by that
question's words, ranks below a turn with the words of its own, and the context follows
every write, update, deletion and redaction, inside one session only."""

from __future__ import annotations

import pytest

from state.doctor import check_indexes
from state.memories import NewMemory
from state.rebuild import rebuild_now
from state.tokenize import index_text
from state.turn_context import ChainFields, chain_of, is_loose_turn

SESSION = [
    ("Jonah", "When is the bread festival exactly?"),
    ("Maya", "Saturday the 29th, at Navy Pier."),
    ("Jonah", "Perfect, I will bring the sourdough starter."),
]


def _turns(store, lines, *, session="s1", namespace="wsp_chat", kind="message"):
    seqs = []
    with store.transaction():
        for speaker, text in lines:
            record = store.memories.create(
                NewMemory(
                    namespace=namespace,
                    kind=kind,
                    content=f"{speaker}: {text}",
                    source="test",
                    provenance={"session_id": session} if session else {},
                )
            )
            seqs.append(record["seq"])
    return seqs


def _row(store, seq):
    return store.conn.execute(
        "select tokens, before1, before2 from memory_fts where rowid = ?", (seq,)
    ).fetchone()


def _words_only(store, query, namespace="wsp_chat"):
    store.search.vector_weight = 0.0
    return [hit.seq for hit in store.search.search(query, [namespace], limit=10)]


def test_a_turn_is_found_by_the_words_of_the_question_it_answers(store):
    asked, answer, _ = _turns(store, SESSION)
    found = _words_only(store, "bread festival")
    assert found[:2] == [asked, answer]  # its own words first, the answer through its context


def test_context_columns_hold_the_tokens_of_the_two_turns_before(store):
    a, b, c, d = _turns(store, [*SESSION, ("Maya", "Great, see you there")])

    def text(i: int) -> str:
        return _row(store, [a, b, c, d][i])["tokens"]

    assert text(1) == index_text(f"{SESSION[1][0]}: {SESSION[1][1]}")
    assert tuple(_row(store, a))[1:] == ("", "")
    assert tuple(_row(store, b))[1:] == (text(0), "")
    assert tuple(_row(store, c))[1:] == (text(1), text(0))
    assert tuple(_row(store, d))[1:] == (text(2), text(1))  # the nearest first, two at most
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_deleting_a_turn_gives_the_turns_after_it_an_earlier_context(store):
    a, b, c = _turns(store, SESSION)
    with store.transaction():
        store.memories.delete(store.memories.by_seqs([b])[b]["id"])
    assert tuple(_row(store, c))[1:] == (_row(store, a)["tokens"], "")
    assert _words_only(store, "navy pier") == []
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_an_updated_turn_shows_its_new_words_to_the_turns_after_it(store):
    a, b, c = _turns(store, SESSION)
    with store.transaction():
        store.memories.update(store.memories.by_seqs([b])[b]["id"], content="Maya: at the lakefront")
    assert "lakefront" in _row(store, c)["before1"] and "navi" not in _row(store, c)["before1"]
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_a_turn_indexed_out_of_order_joins_the_context_of_those_after_it(store):
    """A turn indexed after the turns that follow it (an index repaired record by record):
    their FTS rows are made anew. Out of the index, it is an empty turn to them."""
    a, b, c = _turns(store, SESSION)
    record = store.memories.by_seqs([b])[b]
    with store.transaction():
        store.search.remove(b)
    assert tuple(_row(store, c))[1:] == ("", _row(store, a)["tokens"])
    with store.transaction():
        store.search.add(b, record["namespace"], record["content"])
    assert tuple(_row(store, c))[1:] == (_row(store, b)["tokens"], _row(store, a)["tokens"])
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_a_redacted_turn_leaves_its_neighbours_context_too(store):
    a, b, c = _turns(store, SESSION)
    memory = store.memories.by_seqs([b])[b]
    version = store.memories.versions(memory["id"])[-1]
    with store.transaction():
        store.memories.redact_version(version["id"])
    assert _words_only(store, "navy pier") == []
    for seq in (a, c):
        assert "pier" not in " ".join(_row(store, seq))
    assert tuple(_row(store, c))[1:] == ("", _row(store, a)["tokens"])  # b stays, empty
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_sessions_namespaces_and_plain_records_do_not_mix(store):
    _turns(store, SESSION[:1], session="s1")
    other = _turns(store, [("Maya", "Navy Pier on Saturday")], session="s2")[0]
    plain = _turns(store, [("Note", "the festival tent is blue")], session=None)[0]
    elsewhere = _turns(store, [("Jonah", "the festival moved")], namespace="wsp_other")[0]
    assert tuple(_row(store, other))[1:] == ("", "")  # another session: no context
    assert tuple(_row(store, plain))[1:] == ("", "")  # no session: no context
    assert tuple(_row(store, elsewhere))[1:] == ("", "")  # another namespace: no context


def test_a_session_summary_is_not_a_turn(store):
    a, b = _turns(store, SESSION[:2])
    summary = _turns(store, [("Summary", "Festival on the 29th")], kind="summary")[0]
    later = _turns(store, SESSION[2:])[0]
    assert tuple(_row(store, summary))[1:] == ("", "")
    assert _row(store, later)["before1"] == _row(store, b)["tokens"]  # the summary is skipped


def test_the_rebuild_makes_the_same_context(store):
    _turns(store, SESSION)
    before = {
        row[0]: tuple(row[1:])
        for row in store.conn.execute("select rowid, tokens, before1, before2 from memory_fts")
    }
    rebuild_now(store)
    after = {
        row[0]: tuple(row[1:])
        for row in store.conn.execute("select rowid, tokens, before1, before2 from memory_fts")
    }
    assert before == after


def test_context_is_right_after_a_rebuild_with_writes_on_both_sides_of_its_cursor(
    paths, migrated_database, monkeypatch
):
    """A store of tokenizer 1 (one column) is rebuilt while turns are added, changed and
    deleted before and after the copy's cursor: the new table's context ends up as if it had
    been built at once, and the turn that only answers is found by the question's words."""
    from state import index_builds, tokenize_v1
    from state.config import Settings
    from state.rebuild import step
    from state.store import Store
    from tests.conftest import seed_database

    seed_database(paths, migrated_database)
    with monkeypatch.context() as patch:
        patch.setattr(index_builds, "current_tokenizer", lambda: (1, tokenize_v1))
        old = Store.open(paths.database, Settings())
        _turns(old, [("Jonah", f"small talk number {n}") for n in range(30)])
        old.close()
    store = Store.open(paths.database, Settings())
    try:
        step(store, max_records=10, budget_seconds=60)  # the copy has passed 10 turns
        seqs = [row[0] for row in store.conn.execute("select seq from memory_records order by seq")]
        with store.transaction():
            store.memories.delete(store.memories.by_seqs([seqs[5]])[seqs[5]]["id"])  # behind
            store.memories.delete(store.memories.by_seqs([seqs[20]])[seqs[20]]["id"])  # ahead
            store.memories.update(
                store.memories.by_seqs([seqs[9]])[seqs[9]]["id"], content="Jonah: the cursor edge turn"
            )
        asked, answer, _ = _turns(store, SESSION)  # beyond the cursor, next to turn 29
        rebuild_now(store, force=False)
        assert all(report.ok for report in check_indexes(store.conn).values())
        assert _words_only(store, "bread festival")[:2] == [asked, answer]
    finally:
        store.close()


def test_turns_stored_without_a_session_id_chain_within_their_namespace_and_kind(store):
    # An AMP delta or a local memory per turn: no session id, the speaker in the text.
    a, b, c = _turns(store, SESSION, session=None, kind="task_event")
    assert _row(store, c)["before1"] == _row(store, b)["tokens"]
    assert _row(store, c)["before2"] == _row(store, a)["tokens"]
    assert _words_only(store, "when is the bread festival")[:2] == [a, b]
    # Kind "message" is a turn even without a speaker label.
    m1, m2 = _turns(
        store, [("", "the ferry leaves at noon"), ("", "from pier 4")], session=None, namespace="wsp_msgs"
    )
    assert _row(store, m2)["before1"] == _row(store, m1)["tokens"]


def test_records_without_a_session_that_are_not_turns_get_no_context(store):
    with store.transaction():
        notes = [
            store.memories.create(NewMemory(namespace="wsp_notes", kind="note", content=text, source="test"))[
                "seq"
            ]
            for text in ("the deploy script reads the vault", "we keep SQLite in WAL mode")
        ]
    assert tuple(_row(store, notes[1]))[1:] == ("", "")
    # Another kind in the same namespace is another chain; a session's turns are not in it.
    other_kind = _turns(store, SESSION[:1], session=None, kind="decision", namespace="wsp_notes")[0]
    assert tuple(_row(store, other_kind))[1:] == ("", "")
    _turns(store, SESSION[:1], session="s9", kind="task_event", namespace="wsp_notes")
    loose = _turns(store, SESSION[1:2], session=None, kind="task_event", namespace="wsp_notes")[0]
    assert tuple(_row(store, loose))[1:] == ("", "")
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_deleting_a_turn_without_a_session_id_refreshes_the_turns_after_it(store):
    a, b, c = _turns(store, SESSION, session=None, kind="task_event")
    memory_id = store.conn.execute("select id from memory_records where seq = ?", (b,)).fetchone()[0]
    with store.transaction():
        store.memories.delete(memory_id)
    assert _row(store, c)["before1"] == _row(store, a)["tokens"] and _row(store, c)["before2"] == ""
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_a_loose_turn_edited_out_of_being_a_turn_still_refreshes_the_turns_after_it(store):
    """Its speaker edited away, a turn without a session id is no longer a turn: the turns
    after it drop its words, old and new; its speaker given back, they take them again."""
    a, b, c = _turns(store, SESSION, session=None, kind="task_event")
    memory_id = store.conn.execute("select id from memory_records where seq = ?", (b,)).fetchone()[0]
    with store.transaction():
        store.memories.update(memory_id, content="saturday at the lakefront")
    assert tuple(_row(store, c))[1:] == (_row(store, a)["tokens"], "")
    with store.transaction():
        store.memories.update(memory_id, content="Maya: saturday at the lakefront")
    assert tuple(_row(store, c))[1:] == (_row(store, b)["tokens"], _row(store, a)["tokens"])
    assert "lakefront" in _row(store, c)["before1"]
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_a_loose_turn_takes_the_turns_before_it_not_the_notes_between(store):
    """Records of the same kind without a session id that are no turns (notes among a
    conversation's turns) are not its context: the turn takes only the turns among the
    records before it. A deleted note changes nothing; a redacted turn is found nowhere."""
    (asked,) = _turns(
        store, [("Maya", "the safe code is 4417 behind the painting")], session=None, kind="task_event"
    )
    with store.transaction():
        note = store.memories.create(
            NewMemory(namespace="wsp_chat", kind="task_event", content="the tent is blue", source="test")
        )["seq"]
    (turn,) = _turns(store, [("Jonah", "noted, thanks")], session=None, kind="task_event")
    assert tuple(_row(store, turn))[1:] == (_row(store, asked)["tokens"], "")
    assert "tent" not in " ".join(_row(store, turn)) and _words_only(store, "tent") == [note]
    with store.transaction():
        store.memories.delete(store.memories.by_seqs([note])[note]["id"])
    assert tuple(_row(store, turn))[1:] == (_row(store, asked)["tokens"], "")
    memory = store.memories.by_seqs([asked])[asked]
    with store.transaction():
        store.memories.redact_version(store.memories.versions(memory["id"])[-1]["id"])
    assert "4417" not in " ".join(_row(store, turn))
    assert _words_only(store, "safe code 4417") == []
    assert all(report.ok for report in check_indexes(store.conn).values())


@pytest.mark.parametrize(
    "start",
    [
        "[2023-05-08] Caroline: I went to the support group",
        "[2023-05-08 19:02] Jonah: When is the bread festival?",
        "2023-05-08T19:12 Maya: Saturday the 29th",
        "2023-05-08T19:12:05+02:00 Maya: yes",
        "(1:56 pm on 8 May, 2023) Caroline: yes",
        "1:56 pm on 8 May, 2023 Caroline: yes",
        "May 8th, 2023 - Dr. Lee: the results are in",
        "8/5/2023 14:02 Bob: hey",
        "[2023年5月8日] 小明：你好",
        "On 8 May 2023, Caroline said: I went",
        "At 1:56 pm on 8 May, 2023, Caroline said: I went",
        "Caroline (8 May 2023): I went",
        "Caroline [1:56 pm]: I went",
        "Caroline: no stamp at all",
        "D1:3 Caroline: a turn's id before the speaker",
        "**Caroline:** Markdown's emphasis",
        "**Caroline**: Markdown's emphasis",
        "- Caroline: a list item",
        "> Maya: a quoted line",
        "\u2022 Bob: a bullet",
        "- [2023-05-08] Caroline: a list item with its stamp",
        "[Caroline]: a name in brackets",
        "[user]: a role in brackets",
        "[2023-05-08] [Caroline]: a stamp and a name in brackets",
    ],
)
def test_a_turn_may_start_with_a_stamp_an_id_or_a_marker_before_its_speaker(start):
    assert is_loose_turn("observation", start)


@pytest.mark.parametrize(
    "start",
    [
        "2023-05-08 the deploy went fine",
        "[note] fix the build before Friday",
        "(see the runbook) restart the worker",
        "8 May 2023 we moved the database",
        "On 8 May 2023 we moved the database",
        "the deploy (staging) failed badly today",
        "- the deploy went fine",
        "**bold** statement here",
        "D1:3 the deploy went fine",
    ],
)
def test_a_time_stamp_without_a_speaker_is_no_turn(start):
    assert not is_loose_turn("observation", start)


def test_turns_stored_with_a_time_stamp_and_no_session_id_get_their_context(store):
    """One AMP delta per turn, "[time] speaker: text": the turns before it are its context,
    as without the stamp (the reply is found by the words of the question it answers)."""
    stamped = [(f"[2023-05-08 19:0{n}] {speaker}", text) for n, (speaker, text) in enumerate(SESSION)]
    a, b, c = _turns(store, stamped, session=None, kind="observation")
    assert _row(store, b)["before1"] == _row(store, a)["tokens"]
    assert (_row(store, c)["before1"], _row(store, c)["before2"]) == (
        _row(store, b)["tokens"],
        _row(store, a)["tokens"],
    )
    assert _words_only(store, "when is the bread festival")[:2] == [a, b]


@pytest.mark.parametrize("form", ["D1:{n} {speaker}: {text}", "**{speaker}:** {text}", "- {speaker}: {text}"])
def test_turns_stored_with_an_id_emphasis_or_a_list_marker_get_their_context(store, form):
    """One AMP delta per turn as outside harnesses write them ("D1:3 Jonah: ...", "**Jonah:**
    ...", "- Jonah: ..."): the turns before each are its context, as for "Jonah: ..."."""
    with store.transaction():
        a, b, c = (
            store.memories.create(
                NewMemory(
                    namespace="wsp_chat",
                    kind="observation",
                    content=form.format(n=n, speaker=speaker, text=text),
                    source="memory_delta",
                )
            )["seq"]
            for n, (speaker, text) in enumerate(SESSION, 1)
        )
    assert (_row(store, c)["before1"], _row(store, c)["before2"]) == (
        _row(store, b)["tokens"],
        _row(store, a)["tokens"],
    )
    assert _words_only(store, "when is the bread festival")[:2] == [a, b]


@pytest.mark.parametrize(
    ("kind", "content", "provenance"),
    [
        ("message", "Maya: see you there", {"session_id": "s1"}),  # a session's turn
        ("episodic_memory", "Jonah: loose turn", {}),  # a speaker, no session: the loose chain
        ("message", "no speaker at all", {}),  # kind message: the loose chain
        ("note", "[2023-05-08 19:02] Caroline: stamped", {}),
        ("note", "Decision (no speaker): plain note" * 5, {}),  # gated out: no chain
        ("summary", "Session s1:\nuser: hi", {"session_id": "s1"}),  # never a turn
    ],
)
def test_a_new_records_chain_is_the_one_read_back(store, kind, content, provenance):
    """MemoryRepository.create hands the index the chain's fields it wrote (ChainFields), so
    a write reads nothing back: they must give what chain_of reads from the row."""
    with store.transaction():
        record = store.memories.create(
            NewMemory(namespace="wsp_chat", kind=kind, content=content, source="test", provenance=provenance)
        )
    fields = ChainFields.of("wsp_chat", provenance, kind, content)
    assert fields is not None
    assert fields.chain() == chain_of(store.conn, record["seq"])


def test_a_session_id_that_is_no_string_is_read_back_by_the_database():
    assert ChainFields.of("wsp_chat", {"session_id": 7}, "message", "x") is None
    assert ChainFields.of("wsp_chat", {"session_id": ["a"]}, "message", "x") is None
    assert ChainFields.of("wsp_chat", ["not", "an", "object"], "message", "x") is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "start",
    [
        "Decision: keep SQLite in WAL mode",
        "Open loop: the flaky upload test",
        "Deploy checklist: run migrations, warm the cache",
        "Key decision: tabs over spaces",
        "User preferences: dark theme",
        "TODO(alice): rotate the key",
        "Update (2026-12-01): the export moved",
        "Note to self: ask about the VPN",
        "Lessons learned: pin the driver",
        "[2026-12-01] Decision: ship on Friday",
        "决定：数据库用 SQLite",
        "待办事项：补上迁移测试",
        "部署清单：先跑迁移",
        "メモ：金曜日に出荷",
        "Entscheidung: wir bleiben bei SQLite",
        "Title: Deploy notes",
        "Project: billing export",
        "Tags: deploy, ci",
        "[TODO]: fix the build",
        "标题：部署笔记",
        "タイトル：リリース手順",
    ],
)
def test_a_text_that_starts_with_a_label_is_a_note_not_a_turn(start):
    """An AMP delta's summary often starts with what it is; that is no speaker."""
    assert not is_loose_turn("decision", start)


@pytest.mark.parametrize(
    "start",
    [
        "user: hi",
        "assistant: sure",
        "Grace: hi",
        "Will: ok",
        "Dr. Lee: the results",
        "Q: why?",
        "A: because",
        "助手：好的",
        "用户：你好",
        "小明：明天见",
        "Customer service: how can I help?",  # a support chat's role, not a header
        "Agent: hello",
    ],
)
def test_a_speakers_name_is_no_label(start):
    assert is_loose_turn("observation", start)


def _deltas(store, texts, *, kind="decision", namespace="wsp_notes"):
    """AMP memory deltas as the daemon stores them: kind = delta type, no session id."""
    with store.transaction():
        return [
            store.memories.create(
                NewMemory(namespace=namespace, kind=kind, content=text, source="memory_delta")
            )["seq"]
            for text in texts
        ]


def test_labelled_notes_of_one_kind_do_not_hold_each_other_as_context(store):
    """Before tokenizer 9 "Decision: ..." read as a speaker's turn: each decision held the
    words of the two written before it, and a question about one found the next."""
    wal, billing, checklist = _deltas(
        store,
        [
            "Decision: keep SQLite in WAL mode for crash safety",
            "Decision: the billing export runs every Friday night after the backup",
            "Decision: deploy checklist is run migrations, warm the cache, flip the flag",
        ],
    )
    for seq in (wal, billing, checklist):
        assert tuple(_row(store, seq))[1:] == ("", "")
    assert _words_only(store, "where is the billing export", "wsp_notes") == [billing]
    # Nor are they the context of a conversation's turn of the same kind after them.
    (turn,) = _turns(store, [("Maya", "sounds good")], session=None, kind="decision", namespace="wsp_notes")
    assert tuple(_row(store, turn))[1:] == ("", "")
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_documents_that_start_with_a_header_do_not_hold_each_other_as_context(store):
    """Memory Stores documents (kind document, no session id) that start with a header's
    label ("Title: ...") were taken for a speaker's turns before tokenizer 10: each held the
    words of the two documents written before it."""
    runbook, billing, onboarding = _deltas(
        store,
        [
            "Title: Runbook\nRestart the worker, then check the queue depth.",
            "Title: Billing\nThe billing export runs every Friday night after the backup.",
            "Title: Onboarding\nNew hires get a laptop and a VPN account on day one.",
        ],
        kind="document",
        namespace="mst_docs",
    )
    for seq in (runbook, billing, onboarding):
        assert tuple(_row(store, seq))[1:] == ("", "")
    assert _words_only(store, "billing export", "mst_docs") == [billing]
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_turns_stored_with_the_speaker_in_brackets_get_their_context(store):
    """One AMP delta per turn written "[Jonah]: ...": the turns before it are its context."""
    a, b, c = _deltas(
        store, [f"[{speaker}]: {text}" for speaker, text in SESSION], kind="observation", namespace="wsp_chat"
    )
    assert (_row(store, c)["before1"], _row(store, c)["before2"]) == (
        _row(store, b)["tokens"],
        _row(store, a)["tokens"],
    )
    assert _words_only(store, "when is the bread festival")[:2] == [a, b]
