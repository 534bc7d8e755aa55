"""The kept tokenizer ideas in the shape of a product change (tokenizer version 3), for
bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/tokenizer_v3.py

What /tmp/tokenizer-v3.patch puts into state/tokenize.py, as patches of index_text and
query_terms (``tokens()`` is left as it is, so the hashing embedder, which reads it, and its
stored vectors do not change):

* irregular verb and noun forms and photo words (bench/ideas/irregular.py, cues.py) mapped
  to their lemma **after** Snowball (stem of the form -> stem of the lemma), which equals
  mapping before it except where another word stems to the same string;
* the time cue and the age cue (cues.py): a marker token on index text that states a time
  or an age, and on questions that ask when or how old.

Also here: the same with bench/ideas/append_vectors.py, and the turn-context fallback of
bench/ideas/no_session.py with turns stored without session ids.

Measured on tokenizer 2 (main up to a60e4a9; bench/RESULTS.md and helper-17's notes have
the figures). Since 33539fd the default does this itself (state/lemmas.py,
state/answer_cues.py, the loose turn chain), so on later code these variants stack on it;
to reproduce the figures, run them on that tree::

    git archive a60e4a9 | tar -x -C /tmp/t2 && cd /tmp/t2
    PYTHONPATH=. python bench/retrieval_turns.py bench/data/conversations/DATASET.json
        --split tune --ideas /path/to/this/bench/ideas/tokenizer_v3.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import retrieval_turns as rt
from retrieval_turns import Config

import state.tokenize as tokenize

sys.path.insert(0, str(Path(__file__).resolve().parent))
from append_vectors import APPEND  # noqa: E402
from cues import AGE, AGE_Q, PHOTO, WHEN, _temporal  # noqa: E402
from irregular import IRREGULAR  # noqa: E402
from no_session import fallback_nearest, ingest_without_session  # noqa: E402


def stemmed_lemmas(forms: dict[str, str]) -> dict[str, str]:
    """{stem of a form: stem of its lemma} for the forms whose stem differs from the lemma's."""
    stem = tokenize._stem
    return {stem(form): stem(lemma) for form, lemma in forms.items() if stem(form) != stem(lemma)}


LEMMAS = stemmed_lemmas({**IRREGULAR, **PHOTO})
TIME, AGE_TOKEN = "__time__", "__age__"


def index_cues(text: str) -> list[str]:
    out = []
    if _temporal(text):
        out.append(TIME)
    if AGE.search(text):
        out.append(AGE_TOKEN)
    return out


def query_cues(text: str) -> list[str]:
    out = []
    if WHEN.search(text):
        out.append(TIME)
    if AGE_Q.search(text):
        out.append(AGE_TOKEN)
    return out


def v3_patches(lemmas: bool = True, cues: bool = True) -> tuple:
    tokens = tokenize.tokens
    table = LEMMAS if lemmas else {}

    def index_text(text: str) -> str:
        out = [table.get(t, t) for t in tokens(text)]
        if cues:
            out += index_cues(text)
        return " ".join(out)

    def query_terms(text: str, *, max_terms: int = 256) -> list[str]:
        seen: dict[str, None] = {}
        for token in reversed(tokens(text, for_query=True)):
            seen.setdefault(table.get(token, token), None)
            if len(seen) >= max_terms:
                break
        out = list(reversed(seen))
        if cues:
            out += [t for t in query_cues(text) if t not in seen]
        return out

    return ((tokenize, "index_text", index_text), (tokenize, "query_terms", query_terms))


V3 = v3_patches()
NO_SESSION = (rt, "ingest", ingest_without_session())
FALLBACK = fallback_nearest(product_gate=True)


def ideas() -> list[Config]:
    return [
        Config.shipped("v3 lemmas", patches=v3_patches(cues=False)),
        Config.shipped("v3 lemmas + cues", patches=V3),
        Config.shipped("v3 + vectors appended", patches=(*V3, APPEND)),
        Config.shipped("v3 + vectors appended, no session id", patches=(*V3, APPEND, NO_SESSION)),
        Config.shipped(
            "v3 + vectors appended, no session id + fallback", patches=(*V3, APPEND, NO_SESSION, *FALLBACK)
        ),
        Config.shipped(
            "v3 + vectors appended + fallback (session ids kept)", patches=(*V3, APPEND, *FALLBACK)
        ),
    ]
