"""Query and index cues on top of the irregular forms (bench/ideas/irregular.py), for
bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/cues.py

* ``photo words``: picture, pic, photograph, snapshot (and plurals) index and query as
  "photo", the word the bench's (and LoCoMo's) shared-photo turns carry
  ("[shares a photo: ...]"); ``+ image`` adds image/images.
* ``time cue``: a turn with a temporal expression (a weekday, a month, yesterday, last week,
  a date, a clock time, N days ago, a year) gets the extra index token ``__time__``, and a
  "when" question ("When did ...", "what date", "how long ago") gets it as a query term.
* ``rare terms twice``: query terms held by at most ``share`` of the store's records are
  OR-ed twice (FTS5's bm25() sums over the query's phrases, so such a term counts double).
* ``names twice``: capitalised words of the question (not its first word) are OR-ed twice.
* context weights again (the turn before / two before at other weights), with the irregular
  forms in.

Measured on tokenizer 2 (main up to a60e4a9; bench/RESULTS.md and helper-17's notes have
the figures). Since 33539fd the default does this itself (state/lemmas.py,
state/answer_cues.py, the loose turn chain), so on later code these variants stack on it;
to reproduce the figures, run them on that tree::

    git archive a60e4a9 | tar -x -C /tmp/t2 && cd /tmp/t2
    PYTHONPATH=. python bench/retrieval_turns.py bench/data/conversations/DATASET.json
        --split tune --ideas /path/to/this/bench/ideas/cues.py
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from retrieval_turns import Config

import state.search as search
import state.tokenize as tokenize
import state.turn_context as turn_context

sys.path.insert(0, str(Path(__file__).resolve().parent))
from irregular import IRREGULAR, lemma_patches  # noqa: E402

PHOTO = {
    w: "photo" for w in "picture pictures pic pics photograph photographs snapshot snapshots photos".split()
}
IMAGE = {"image": "photo", "images": "photo"}
# The same person or thing in another register or spelling, which Snowball keeps apart.
FAMILY = {
    **{w: "mother" for w in "mom moms mum mums mommy mummy mama mamma".split()},
    **{w: "father" for w in "dad dads daddy papa".split()},
    **{w: "grandmother" for w in "grandma grandmas granny grannies nana gran".split()},
    **{w: "grandfather" for w in "grandpa grandpas granddad grandad".split()},
    **{w: "child" for w in "kid kids kiddo".split()},
}
_SPELLING = """colour color | colours colors | coloured colored | favourite favorite
favourites favorites | favour favor | neighbour neighbor | neighbours neighbors
neighbourhood neighborhood | honour honor | humour humor | flavour flavor | flavours flavors
behaviour behavior | harbour harbor | labour labor | rumour rumor | theatre theater
centre center | centres centers | metre meter | litre liter | fibre fiber | travelling traveling
travelled traveled | traveller traveler | cancelled canceled | jewellery jewelry | grey gray
organise organize | organised organized | realise realize | realised realized
recognise recognize | apologise apologize | practise practice | mould mold | aeroplane airplane
programme program | cheque check | tyre tire | pyjamas pajamas | mum mom | catalogue catalog
dialogue dialog | defence defense | licence license | offence offense | analyse analyze"""
SPELLING = {
    uk: us for uk, us in (e.split() for e in _SPELLING.replace("\n", " | ").split("|")) if uk != "mum"
}

_MONTHS = (
    "january february march april june july august september october november december"
    " jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
TEMPORAL = re.compile(
    r"\b(?:" + "|".join(_MONTHS + _DAYS) + r"|weekend|tonight|today|tomorrow|yesterday"
    r"|(?:last|next|this|that) (?:week|month|year|night|morning|evening|afternoon|summer|winter"
    r"|spring|autumn|" + "|".join(_DAYS) + r")"
    r"|\d+ (?:days?|weeks?|months?|years?) ago|ago"
    r"|(?:19|20)\d\d|\d{1,2}(?:st|nd|rd|th)|\d{1,2}(?::\d\d)? ?(?:am|pm)|o'clock)\b"
    r"|\bMay\b",
    re.IGNORECASE,
)
# "May" the month is written with a capital; case-insensitively it would be the modal verb.
TEMPORAL_MAY = re.compile(r"\bmay\b", re.IGNORECASE)
WHEN = re.compile(
    r"^\s*when\b|\b(?:what|which) (?:date|day|month|year|time)\b|\bhow long ago\b", re.IGNORECASE
)
TIME_TOKEN = "__time__"


def _temporal(text: str) -> bool:
    for match in TEMPORAL.finditer(text):
        if match.group().lower() != "may" or match.group() == "May":
            return True
    return False


def time_cue_patches(twice: bool = False) -> tuple:
    """``twice``: the query's time token is OR-ed twice."""
    tokens = tokenize.tokens

    def patched_tokens(text: str, *, for_query: bool = False) -> list[str]:
        out = tokens(text, for_query=for_query)
        if WHEN.search(text) if for_query else _temporal(text):
            out.append(TIME_TOKEN)
        return out

    patches = [(tokenize, "tokens", patched_tokens)]
    if twice:
        fts_match = search.fts_match

        def doubled(terms: list[str]) -> str | None:
            return fts_match([*terms, TIME_TOKEN] if TIME_TOKEN in terms else terms)

        patches.append((search, "fts_match", doubled))
    return tuple(patches)


def repeat_patches(share: float | None = None, names: bool = False) -> tuple:
    """SearchIndex._bm25_ranked, with rare terms (or the question's names) OR-ed twice."""
    original = search.SearchIndex._bm25_ranked
    current_query: list[str] = [""]
    original_search = search.SearchIndex.search

    def search_method(self, query, namespaces, **kwargs):
        current_query[0] = query
        return original_search(self, query, namespaces, **kwargs)

    def _bm25_ranked(self, terms, namespaces, limit):
        if not terms:
            return []
        doubled: set[str] = set()
        if share is not None:
            frequencies, total = self.terms(terms)
            doubled |= {t for t in terms if 0 < frequencies[t] <= share * total}
        if names:
            words = re.findall(r"\b[A-Z][\w'’]+", current_query[0])[1:]
            for word in words:
                doubled.update(tokenize.query_terms(word))
        if not doubled:
            return original(self, terms, namespaces, limit)
        match = tokenize.fts_match([*terms, *(t for t in terms if t in doubled)])
        return self._bm25(match, namespaces, limit)

    return ((search.SearchIndex, "_bm25_ranked", _bm25_ranked), (search.SearchIndex, "search", search_method))


def context_patches(turns: int, weight: float) -> tuple:
    columns = tuple(f"before{n}" for n in range(1, turns + 1))
    rank = "bm25(1.0" + f", {weight}" * turns + ")"
    return (
        (turn_context, "CONTEXT_TURNS", turns),
        (turn_context, "COLUMNS", columns),
        (turn_context, "RANK", rank),
        (tokenize, "FTS_COLUMNS", ("tokens", *columns)),
    )


IRR = lemma_patches(IRREGULAR)
IRR_PHOTO = lemma_patches({**IRREGULAR, **PHOTO})


def round1() -> list[Config]:
    return [
        Config.shipped("irregular forms", patches=IRR),
        Config.shipped("irr + photo words", patches=IRR_PHOTO),
        Config.shipped("irr + photo words + image", patches=lemma_patches({**IRREGULAR, **PHOTO, **IMAGE})),
        Config.shipped("irr + time cue", patches=(*IRR, *time_cue_patches())),
        Config.shipped("irr + rare terms twice (1 %)", patches=(*IRR, *repeat_patches(0.01))),
        Config.shipped("irr + rare terms twice (0.3 %)", patches=(*IRR, *repeat_patches(0.003))),
        Config.shipped("irr + names twice", patches=(*IRR, *repeat_patches(names=True))),
        Config.shipped("irr + context 2 x 0.15", patches=(*IRR, *context_patches(2, 0.15))),
        Config.shipped("irr + context 2 x 0.3", patches=(*IRR, *context_patches(2, 0.3))),
        Config.shipped("irr + context 3 x 0.2", patches=(*IRR, *context_patches(3, 0.2))),
    ]


def round2() -> list[Config]:
    """Round 2: on top of irregular forms and photo words."""
    time = time_cue_patches()
    return [
        Config.shipped("irr + photo words", patches=IRR_PHOTO),
        Config.shipped("irr + photo + time cue", patches=(*IRR_PHOTO, *time)),
        Config.shipped("irr + photo + time cue x2", patches=(*IRR_PHOTO, *time_cue_patches(True))),
        Config.shipped("irr + photo + family", patches=lemma_patches({**IRREGULAR, **PHOTO, **FAMILY})),
        Config.shipped("irr + photo + spelling", patches=lemma_patches({**IRREGULAR, **PHOTO, **SPELLING})),
        Config.shipped(
            "irr + photo + family + spelling + time cue",
            patches=(*lemma_patches({**IRREGULAR, **PHOTO, **FAMILY, **SPELLING}), *time),
        ),
    ]


# -- round 3: more answer-type cues (a question's kind -> a token on turns that can answer it)

AGE_Q = re.compile(r"\bhow old\b|\bwhat age\b|\bage\b", re.IGNORECASE)
_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen"
    " fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty"
    " fifty sixty seventy eighty ninety"
).split()
_NUM = r"(?:\d+|" + "|".join(_NUMBER_WORDS) + r")(?:[- ](?:" + "|".join(_NUMBER_WORDS) + r"))?"
AGE = re.compile(
    r"\b(?:i'm|i am|she's|he's|she is|he is|they're|turns?|turned|aged?)\s+"
    + _NUM
    + r"\b|\b"
    + _NUM
    + r"[- ](?:years?|yrs?)[- ]old\b|\bbirthday\b",
    re.IGNORECASE,
)
COUNT_Q = re.compile(r"\bhow (?:many|much)\b", re.IGNORECASE)
COUNT = re.compile(r"\b" + _NUM + r"\b|\b(?:a couple|a few|several|dozen)\b", re.IGNORECASE)
WHERE_Q = re.compile(
    r"^\s*where\b|\bwhich (?:city|town|country|place|neighbou?rhood|restaurant"
    r"|shop|store|park|school)\b",
    re.IGNORECASE,
)
# A place: a capitalised word after a preposition of place, not at the sentence start.
WHERE = re.compile(r"\b(?:in|at|to|from|near|around|outside)\s+(?:the\s+)?[A-Z][\w'’-]+")


def cue_patches(cues: list[tuple[re.Pattern, object, str]]) -> tuple:
    """(question pattern, turn test, token): a turn that passes the test gets the token, a
    question that matches the pattern asks for it."""
    tokens = tokenize.tokens

    def patched_tokens(text: str, *, for_query: bool = False) -> list[str]:
        out = tokens(text, for_query=for_query)
        for question, turn, token in cues:
            if question.search(text) if for_query else turn(text):
                out.append(token)
        return out

    return ((tokenize, "tokens", patched_tokens),)


TIME_CUE = (WHEN, _temporal, TIME_TOKEN)
AGE_CUE = (AGE_Q, lambda t: AGE.search(t) is not None, "__age__")
COUNT_CUE = (COUNT_Q, lambda t: COUNT.search(t) is not None, "__count__")
WHERE_CUE = (WHERE_Q, lambda t: WHERE.search(t) is not None, "__place__")


def round3() -> list[Config]:
    return [
        Config.shipped("irr + photo + time cue", patches=(*IRR_PHOTO, *cue_patches([TIME_CUE]))),
        Config.shipped(
            "irr + photo + time + age cue", patches=(*IRR_PHOTO, *cue_patches([TIME_CUE, AGE_CUE]))
        ),
        Config.shipped(
            "irr + photo + time + count cue", patches=(*IRR_PHOTO, *cue_patches([TIME_CUE, COUNT_CUE]))
        ),
        Config.shipped(
            "irr + photo + time + place cue", patches=(*IRR_PHOTO, *cue_patches([TIME_CUE, WHERE_CUE]))
        ),
        Config.shipped(
            "irr + photo + time + age + count + place cues",
            patches=(*IRR_PHOTO, *cue_patches([TIME_CUE, AGE_CUE, COUNT_CUE, WHERE_CUE])),
        ),
    ]


def ideas() -> list[Config]:
    """The round named by $CUES_ROUND (1, 2 or 3; default 3): their labels overlap, so one a run."""
    return {"1": round1, "2": round2, "3": round3}[os.environ.get("CUES_ROUND", "3")]()
