"""A conversation turn that asks something lifts the turn after it (state/search.py
ANSWER_SHARE, the setting reply_lift; state/turn_context.py answers): the reply "Churro." to "What did you name
her?" shares no word with a question about the dog's name, and is found through the question
it answers, within its own session, never for a turn that asks nothing or a note."""

from __future__ import annotations

import pytest

from state import search as search_module
from state.config import Settings
from state.memories import NewMemory
from state.store import Store
from state.turn_context import answers


def _turns(store: Store, lines, *, session: str | None = "s1", kind: str = "message", namespace="wsp_chat"):
    with store.transaction():
        return [
            store.memories.create(
                NewMemory(
                    namespace=namespace,
                    kind=kind,
                    content=text,
                    source="test",
                    provenance={"session_id": session} if session else {},
                )
            )["seq"]
            for text in lines
        ]


def _filler(store: Store) -> list[int]:
    """Turns of another session that hold one of the query's words ("name") at full weight:
    they outrank a reply found only through its context columns (the question's words at a
    fifth of the weight), and rank below a reply the question lifts."""
    return _turns(store, [f"Maya: name tag {i}" for i in range(3)], session="s0")


QUERY = "What is the name of the adopted puppy?"
SESSION = ["Lena: What name did you give the puppy you adopted?", "Tomás: Churro.", "Lena: Cute!"]


def _words_only(store: Store, query: str, limit: int = 10) -> list[int]:
    store.search.vector_weight = 0.0  # no vector fallback: words (and lifts) only
    return [hit.seq for hit in store.search.search(query, ["wsp_chat"], limit=limit)]


def test_the_reply_to_a_matching_question_ranks_right_after_it(store):
    filler = _filler(store)
    asked, reply, cute = _turns(store, SESSION)
    # "Churro." holds no word of the query; the question lifts it above every filler turn.
    assert _words_only(store, QUERY) == [asked, reply, *filler, cute]


def test_without_the_lift_the_reply_ranks_below_the_filler(store):
    """The test above fails without the feature: the context columns alone leave the reply
    below every turn with one of the query's words."""
    store.search.reply_lift = 0.0  # the setting reply_lift = 0
    filler = _filler(store)
    asked, reply, cute = _turns(store, SESSION)
    assert _words_only(store, QUERY) == [asked, *filler, reply, cute]


def test_a_turn_that_asks_nothing_lifts_nothing(store):
    filler = _filler(store)
    told, after, cute = _turns(
        store, ["Lena: I gave a name to the puppy you adopted.", "Tomás: Churro.", "Lena: Cute!"]
    )
    assert answers(store.conn, [told, after, cute]) == {}
    assert _words_only(store, QUERY) == [told, *filler, after, cute]


def test_the_lift_stays_in_the_session(store):
    filler = _filler(store)
    asked = _turns(store, SESSION[:1], session="s1")[0]
    other = _turns(store, SESSION[1:2], session="s2")[0]
    assert answers(store.conn, [asked]) == {}
    assert _words_only(store, QUERY) == [asked, *filler]
    assert other not in _words_only(store, QUERY)


def test_a_long_reply_is_lifted_less_than_a_short_one(store):
    long_text = "assistant: " + "Here is a long general answer about many other things. " * 20
    q1, short = _turns(store, ["user: Which puppy food is best?", "assistant: Salmon kibble."], session="a")
    q2, long_ = _turns(store, ["user: Which puppy food is best?", long_text], session="b")
    assert answers(store.conn, [q1, q2]) == {
        q1: (short, len("assistant: Salmon kibble.")),
        q2: (long_, len(long_text)),
    }
    store.search.vector_weight = 0.0
    ranked = [hit.seq for hit in store.search.search("best puppy food", ["wsp_chat"], limit=10)]
    assert ranked.index(short) < ranked.index(long_)


def test_a_deleted_reply_passes_the_lift_to_the_next_live_turn(store):
    asked, reply, later = _turns(
        store, ["Lena: What name did you pick?", "Tomás: Churro.", "Tomás: Or Chewy."]
    )
    with store.transaction():
        store.memories.delete(store.memories.by_seqs([reply])[reply]["id"])
    assert answers(store.conn, [asked]) == {asked: (later, len("Tomás: Or Chewy."))}
    assert reply not in _words_only(store, "name pick")
    assert later in _words_only(store, "name pick")


def test_turns_without_a_session_id_lift_within_their_loose_chain(store):
    asked, reply = _turns(store, ["Lena: What name did you give the puppy?", "Tomás: Churro."], session=None)
    assert answers(store.conn, [asked]) == {asked: (reply, len("Tomás: Churro."))}


@pytest.mark.parametrize("mark", ["？", "؟"])
def test_other_scripts_question_marks_ask_too(store, mark):
    asked, reply = _turns(store, [f"丽娜：你给小狗起了什么名字{mark}", "托马斯：丘罗。"])
    assert answers(store.conn, [asked]) == {asked: (reply, len("托马斯：丘罗。"))}


def test_notes_with_a_question_mark_lift_nothing(store):
    """Records that are not conversation turns (no session, no speaker, kind fact) keep their
    ranking: a question in a note has no reply."""
    note, after = _turns(
        store, ["Should we move the cache to Redis?", "Decided to keep SQLite."], session=None, kind="fact"
    )
    assert answers(store.conn, [note, after]) == {}


def test_a_reply_that_is_not_a_turn_is_not_lifted(store):
    """In a loose chain (no session id) of a kind other than message, the next record of the
    kind must itself be a turn (start with its speaker)."""
    asked, note = _turns(
        store, ["Maya: Which release has the fix?", "release notes for 1.4"], session=None, kind="event"
    )
    assert answers(store.conn, [asked]) == {}


def test_the_setting_reaches_the_search(tmp_path):
    opened = Store.open(tmp_path / "lift.db", Settings(reply_lift=0.0))
    try:
        assert opened.search.reply_lift == 0.0
    finally:
        opened.close()
    assert Settings().reply_lift == search_module.ANSWER_SHARE  # one default
