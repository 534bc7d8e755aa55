"""Question-side ideas on top of bench/ideas/best.py, for bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/questions.py

* ``question fillers``: words of question templates that say nothing about the answer
  ("Would X likely enjoy ...", "What kind of ...") left out of queries.
* ``how long``: "how long" questions ask for the time cue too (cues.py TIME_CUE).
* ``split``: a question of two parts ("Why did X ..., and what job did she get?") is also
  searched part by part; the whole's ranking and each part's are fused by reciprocal rank
  (a rank-function simulation of a product change in search()).

Measured on tokenizer 2 (main up to a60e4a9; bench/RESULTS.md and helper-17's notes have
the figures). Since 33539fd the default does this itself (state/lemmas.py,
state/answer_cues.py, the loose turn chain), so on later code these variants stack on it;
to reproduce the figures, run them on that tree::

    git archive a60e4a9 | tar -x -C /tmp/t2 && cd /tmp/t2
    PYTHONPATH=. python bench/retrieval_turns.py bench/data/conversations/DATASET.json
        --split tune --ideas /path/to/this/bench/ideas/questions.py
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path

from retrieval_turns import Config

import state.search as search
import state.tokenize as tokenize

sys.path.insert(0, str(Path(__file__).resolve().parent))
from append_vectors import APPEND  # noqa: E402
from cues import AGE_CUE, IRR_PHOTO, TIME_CUE, TIME_TOKEN, _temporal, cue_patches  # noqa: E402

BASE = (*IRR_PHOTO, APPEND)
BEST = (*BASE, *cue_patches([TIME_CUE, AGE_CUE]))

FILLERS = frozenset(
    "likely kind type sort specific specifically exactly particular thing things something anything".split()
)

WHEN_LONG = re.compile(
    r"^\s*when\b|\b(?:what|which) (?:date|day|month|year|time)\b"
    r"|\bhow long\b",
    re.IGNORECASE,
)


def filler_patches() -> tuple:
    stop = tokenize.STOPWORDS | FILLERS
    word_tokens = lru_cache(maxsize=65536)(tokenize._word_tokens.__wrapped__)
    return ((tokenize, "STOPWORDS", stop), (tokenize, "_word_tokens", word_tokens))


_PARTS = re.compile(
    r",?\s+and\s+(?=(?:what|why|how|where|when|who|which|whom|whose|did|does|do"
    r"|is|was|were|are|has|had)\b)|;\s*|\?\s+(?=\S)",
    re.IGNORECASE,
)


def split_rank(weight: float = 1.0):
    def rank(bench, question, limit):
        page = bench.product_rank(question, limit)
        parts = [p for p in _PARTS.split(question.question) if p and len(p.split()) >= 2]
        if len(parts) < 2 or len(question.question.split()) > 40:
            return page
        deep = bench.product_rank(question, max(50, limit))
        whole = [*page, *(k for k in deep if k not in page)]
        scores: dict = {}
        for r, key in enumerate(whole, 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (search.RRF_K + r)
        for part in parts:
            sub = type(question)(question.id, question.conversation, part, question.gold)
            for r, key in enumerate(bench.product_rank(sub, max(50, limit)), 1):
                scores[key] = scores.get(key, 0.0) + weight / (search.RRF_K + r)
        order = sorted(scores, key=lambda key: -scores[key])
        return order[:limit]

    return rank


def ideas() -> list[Config]:
    how_long = (WHEN_LONG, _temporal, TIME_TOKEN)
    return [
        Config.shipped("best2", patches=BEST),
        Config.shipped("best2 + question fillers", patches=(*BEST, *filler_patches())),
        Config.shipped("best2 + how long", patches=(*BASE, *cue_patches([how_long, AGE_CUE]))),
        Config.shipped("best2 + split 1", patches=BEST, rank=split_rank(1.0)),
        Config.shipped("best2 + split 0.5", patches=BEST, rank=split_rank(0.5)),
    ]
