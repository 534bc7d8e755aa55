"""More lexical ideas on top of tokenizer 3 (the default since 33539fd), for
bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/more_cues.py

* ``number words``: one..twenty, thirty..ninety index and query as their digits ("she's
  five" / "5 years old"), through state.lemmas' table.
* ``who cue``: a question asking who ("Who persuaded Maya ...", "Who did the user meet")
  and the texts that name someone other than at their start (a capitalised word after a
  lower-case one) share ``__cue_person``, like state/answer_cues.py's cues.
* ``where cue, lower-case places``: "where" questions and texts with a preposition of place
  before a noun phrase ("in the bathtub", "at the community center").
* ``cues not in the context columns``: a turn's context columns hold its neighbours' tokens,
  their answer cues included; here without them.

Measured on 418782f's default (tokenizer 3), tuning halves (sum of the three datasets'
recall@10 / R@2000c; default 2.470 / 2.601): number words 2.470 / 2.601 (no instance moved),
who cue 2.448 / 2.595, where cue 2.449 / 2.601, cues out of the context 2.467 / 2.619. None
kept.
"""

from __future__ import annotations

import re
from functools import lru_cache

from retrieval_turns import Config

import state.answer_cues as answer_cues
import state.tokenize as tokenize

_NUMBERS = {
    w: str(n)
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
        " fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBERS.update(
    {w: str(10 * n) for n, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split(), 3)}
)
_NUMBERS.pop("zero")


def lemma_patches(extra: dict[str, str]) -> tuple:
    table = {**tokenize.LEMMAS, **extra}
    word_tokens = lru_cache(maxsize=65536)(tokenize._word_tokens.__wrapped__)
    return ((tokenize, "LEMMAS", table), (tokenize, "_word_tokens", word_tokens))


WHO_Q = re.compile(
    r"^\s*who\b|\bwho (?:did|does|is|was|were|will|has|had)\b|\bwhose\b|\bwhom\b", re.IGNORECASE
)
NAMED = re.compile(r"\b[a-z][\w']*,? (?:(?:Mr|Mrs|Ms|Dr)\.? )?[A-Z][a-z]+")
WHERE_Q = re.compile(
    r"^\s*where\b|\bwhich (?:city|town|country|place|neighbou?rhood|restaurant"
    r"|shop|store|park|school|beach|studio)\b",
    re.IGNORECASE,
)
PLACE = re.compile(
    r"\b(?:in|at|to|from|near|around|outside|inside|under|behind) (?:the|a|an|my|our"
    r"|his|her|their) \w+|\b(?:in|at|to|from|near) [A-Z]\w+"
)


def cue_patches(*cues: answer_cues.Cue) -> tuple:
    return ((answer_cues, "CUES", (*answer_cues.CUES, *cues)),)


WHO = answer_cues.Cue(
    "__cue_person", lambda q: WHO_Q.search(q) is not None, lambda t: NAMED.search(t) is not None
)
WHERE = answer_cues.Cue(
    "__cue_place", lambda q: WHERE_Q.search(q) is not None, lambda t: PLACE.search(t) is not None
)


def _context_without_cues():
    import state.turn_context as turn_context

    original = turn_context.context_columns

    def context_columns(conn, table, seq):
        return tuple(
            " ".join(t for t in column.split() if not t.startswith("__cue_"))
            for column in original(conn, table, seq)
        )

    return ((turn_context, "context_columns", context_columns),)


def _ideas_round1() -> list[Config]:
    return [
        Config.shipped("v3 + number words", patches=lemma_patches(_NUMBERS)),
        Config.shipped("v3 + who cue", patches=cue_patches(WHO)),
        Config.shipped("v3 + where cue", patches=cue_patches(WHERE)),
    ]


def ideas() -> list[Config]:
    """Round 1 (the three above) and the cues kept out of the context columns."""
    return [
        *_ideas_round1(),
        Config.shipped("v3, cues not in the context columns", patches=_context_without_cues()),
    ]
