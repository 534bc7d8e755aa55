"""A speaker prior for questions that name a conversation's speaker, for
bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/speaker.py

In our three datasets' tuning halves, of the gold turns of questions that name a speaker,
96 % (CC 96/100, L2 109/113, AC 58/65, "the user" counted as naming the speaker ``user``)
were said by the first speaker the question names. A turn's speaker is a word of its own
text, but held by about half of a namespace's turns, so BM25 gives it no weight (IDF ~0).
Here the ranking is a reciprocal-rank fusion (k = state.search.RRF_K) of the product's
ranking (bench/ideas/best.py's patches) and the same ranking restricted to the named
speaker's turns (content starting "Name:"), at ``weight``: a rank function simulating
what a product change would do with a second FTS query (``(terms) AND speaker token``).

Measured on tokenizer 2 (main up to a60e4a9; bench/RESULTS.md and helper-17's notes have
the figures). Since 33539fd the default does this itself (state/lemmas.py,
state/answer_cues.py, the loose turn chain), so on later code these variants stack on it;
to reproduce the figures, run them on that tree::

    git archive a60e4a9 | tar -x -C /tmp/t2 && cd /tmp/t2
    PYTHONPATH=. python bench/retrieval_turns.py bench/data/conversations/DATASET.json
        --split tune --ideas /path/to/this/bench/ideas/speaker.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from retrieval_turns import Config

import state.search as search

sys.path.insert(0, str(Path(__file__).resolve().parent))
from best import BEST  # noqa: E402

POOL = 50
_LABEL = re.compile(r"^([^:]{1,40}):")


def speaker_of(text: str) -> str | None:
    match = _LABEL.match(text)
    return match.group(1).strip().lower() if match else None


def named_speaker(bench, question) -> str | None:
    """The first speaker of the question's conversation that the question names."""
    speakers = bench.speakers.get(question.conversation) if hasattr(bench, "speakers") else None
    if speakers is None:
        speakers = {speaker_of(t) for (cid, _), t in bench.texts.items() if cid == question.conversation}
        speakers.discard(None)
        if not hasattr(bench, "speakers"):
            bench.speakers = {}
        bench.speakers[question.conversation] = speakers
    words = re.findall(r"[\w'’]+", question.question.lower())
    for word in words:
        word = re.sub(r"['’]s$", "", word)
        if word in speakers:
            return word
    return None


def speaker_rank(weight: float):
    def rank(bench, question, limit):
        page = bench.product_rank(question, limit)  # exactly the product's page for this limit
        speaker = named_speaker(bench, question)
        if speaker is None or weight == 0:
            return page
        deep = bench.product_rank(question, max(POOL, limit))
        ranked = [*page, *(key for key in deep if key not in page)]
        own = [key for key in ranked if speaker_of(bench.texts[key]) == speaker]
        scores = {key: 1.0 / (search.RRF_K + r) for r, key in enumerate(ranked, 1)}
        for r, key in enumerate(own, 1):
            scores[key] += weight / (search.RRF_K + r)
        order = sorted(ranked, key=lambda key: -scores[key])  # stable: ties keep the order
        return order[:limit]

    return rank


def ideas() -> list[Config]:
    return [
        Config.shipped(f"best + speaker prior {w:g}", patches=BEST, rank=speaker_rank(w))
        for w in (0.1, 0.25, 0.5, 1.0)
    ]
