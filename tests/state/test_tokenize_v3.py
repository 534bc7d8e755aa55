"""Tokenizer 3 (state/tokenize.py index_text / query_terms): English word forms that Snowball
keeps apart meet through their lemma (state/lemmas.py), and a question's kind of answer is a
search term that texts able to answer it carry (state/answer_cues.py). The embedder's plain
tokens, and version 2's full-text tokens (state/tokenize_v2.py), stay as they were."""

from __future__ import annotations

from state import tokenize, tokenize_v2
from state.memories import NewMemory


def _index(text: str) -> set[str]:
    return set(tokenize.index_text(text).split())


def test_irregular_forms_meet_their_lemma_in_the_index_and_in_queries():
    assert set(tokenize.query_terms("When did Caroline go to the support group?")) & _index(
        "Caroline: I went to a LGBTQ support group yesterday"
    ) >= {"go", "support", "group"}
    assert "child" in _index("the children painted") and "child" in tokenize.query_terms("her child")
    assert "bring" in _index("she brought cookies") and "buy" in _index("we bought a tent")
    assert "photo" in _index("[shares a photo: a sunset]") and "photo" in tokenize.query_terms(
        "What was in the picture Melanie shared?"
    )


def test_words_whose_other_sense_is_common_are_not_mapped():
    assert "leav" not in _index("I left the keys on the left side")
    assert "rose" in _index("a red rose")


def test_identifiers_are_not_mapped():
    assert tokenize.index_text("went_to_market").split()[0] == "went_to_market"


def test_answer_cues_join_questions_and_the_texts_that_answer_them():
    time = "__cue_time"
    for text in (
        "I painted it last week",
        "See you on Friday",
        "back in May",
        "on 12th",
        "at 7 pm",
        "3 days ago",
        "in 2022",
        "yesterday was long",
    ):
        assert time in _index(text), text
    for text in ("May I ask you something?", "I painted a lake", "we may go"):
        assert time not in _index(text), text
    assert time in tokenize.query_terms("When did Melanie paint the sunrise?")
    assert time in tokenize.query_terms("What date is the festival?")
    assert time not in tokenize.query_terms("What did Melanie paint?")
    age = "__cue_age"
    assert age in _index("I just turned 30") and age in _index("she is a 5-year-old")
    assert age in tokenize.query_terms("How old is Jon's daughter?")
    assert age not in _index("I turned left") and age not in tokenize.query_terms("Where is Jon?")


def test_the_embedder_and_version_2_see_the_plain_tokens():
    text = "Caroline: I went to see the pictures last week"
    plain = tokenize.tokens(text)
    assert "went" in plain and "go" not in plain and "__cue_time" not in plain
    assert tokenize_v2.index_text(text) == " ".join(plain)
    assert tokenize_v2.query_terms("When did she go?") == tokenize.last_distinct(
        tokenize.tokens("When did she go?", for_query=True), 256
    )
    assert tokenize.index_text(text) != tokenize_v2.index_text(text)


def test_a_when_question_ranks_the_turn_that_says_when_first(store):
    turns = [
        "Caroline: The support group was so welcoming to everyone",
        "Caroline: I love how the support group shares stories",
        "Caroline: I went to a support group yesterday and it was powerful",
    ]
    with store.transaction():
        seqs = [
            store.memories.create(NewMemory(namespace="conv", kind="message", content=t, source="test"))[
                "seq"
            ]
            for t in turns
        ]
    store.search.vector_weight = 0.0
    hits = store.search.search("When did Caroline go to the support group?", ["conv"], limit=3)
    assert hits[0].seq == seqs[2]
