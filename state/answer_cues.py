"""Answer cues: what kind of answer an English question asks for, as one more search term.

"When did Melanie paint the sunrise?" names the painting; the turn that answers it says
"I painted that lake sunrise last year". A question asking *when* gets the query term
``__cue_time``, and every text with a temporal expression (a weekday, a month, yesterday,
last week, a date, a clock time, N days ago, a year) gets it as an index token; likewise
*how old* and ages. BM25 then weighs the cue like any term (by how many records hold it), so
among the turns that mention the painting the one that says when ranks first.

Chosen on the tuning halves of three datasets of long conversations (bench/RESULTS.md,
"choosing tokenizer 3"): the time cue added 0.021 to the summed recall@10 of the tuning halves,
the age cue 0.050; a cue for *how many* (turns with a number) and one for *where* (a
capitalised place after a preposition) lost or did nothing and are left out. MADial-Bench
moved within noise. English only: other languages' questions get no cue, as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

_MONTHS = (
    "january february march april june july august september october november december"
    " jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_TEMPORAL = re.compile(
    r"\b(?:" + "|".join(_MONTHS + _DAYS) + r"|weekend|tonight|today|tomorrow|yesterday"
    r"|(?:last|next|this|that) (?:week|month|year|night|morning|evening|afternoon|summer|winter"
    r"|spring|autumn|" + "|".join(_DAYS) + r")"
    r"|\d+ (?:days?|weeks?|months?|years?) ago|ago"
    r"|(?:19|20)\d\d|\d{1,2}(?:st|nd|rd|th)|\d{1,2}(?::\d\d)? ?(?:am|pm)|o'clock)\b"
    # May the month, not the verb: after a word that takes a month, or before a day.
    r"|\b(?:in|on|since|until|till|by|of|early|late|mid|last|next|this|every)[ -]may\b|\bmay \d",
    re.IGNORECASE,
)
_WHEN = re.compile(
    r"^\s*when\b|\b(?:what|which) (?:date|day|month|year|time)\b|\bhow long ago\b", re.IGNORECASE
)
_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen"
    " fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty"
    " fifty sixty seventy eighty ninety"
).split()
_NUMBER = r"(?:\d+|" + "|".join(_NUMBER_WORDS) + r")(?:[- ](?:" + "|".join(_NUMBER_WORDS) + r"))?"
_AGE = re.compile(
    r"\b(?:i'm|i am|she's|he's|she is|he is|they're|turns?|turned|aged?)\s+"
    + _NUMBER
    + r"\b|\b"
    + _NUMBER
    + r"[- ](?:years?|yrs?)[- ]old\b|\bbirthday\b",
    re.IGNORECASE,
)
_HOW_OLD = re.compile(r"\bhow old\b|\bwhat age\b|\bage\b", re.IGNORECASE)


# Words without which neither pattern can match: most texts hold none, and a set lookup of
# their words is ~6x cheaper than the patterns' scan (bench texts: 42 -> 7 us a text).
_WORDS = re.compile(r"[a-z0-9]+")
_TIME_WORDS = frozenset(
    _MONTHS
    + _DAYS
    + (
        "weekend tonight today tomorrow yesterday ago clock week month year night morning evening"
        " afternoon summer winter spring autumn may am pm"
    ).split()
)
_AGE_WORDS = frozenset(_NUMBER_WORDS + ["birthday"])


def _words(text: str) -> set[str]:
    return set(_WORDS.findall(text.lower()))


def _has_number(words: set[str]) -> bool:
    return any(w[0].isdigit() for w in words)


def _temporal(text: str) -> bool:
    """Whether ``text`` holds a temporal expression."""
    words = _words(text)
    return bool((words & _TIME_WORDS or _has_number(words)) and _TEMPORAL.search(text))


def _states_age(text: str) -> bool:
    """Whether ``text`` says how old someone is (or mentions a birthday)."""
    words = _words(text)
    return bool((words & _AGE_WORDS or _has_number(words)) and _AGE.search(text))


class Cue(NamedTuple):
    token: str  # never made from ordinary words (state/tokenize.py keeps it whole)
    asks: Callable[[str], bool]  # the question asks for this kind of answer
    answers: Callable[[str], bool]  # the text can answer such a question


CUES = (
    Cue("__cue_time", lambda q: _WHEN.search(q) is not None, _temporal),
    Cue("__cue_age", lambda q: _HOW_OLD.search(q) is not None, _states_age),
)


def index_cues(text: str) -> list[str]:
    """The cue tokens of a stored text."""
    return [cue.token for cue in CUES if cue.answers(text)]


def query_cues(text: str) -> list[str]:
    """The cue terms of a query."""
    return [cue.token for cue in CUES if cue.asks(text)]
