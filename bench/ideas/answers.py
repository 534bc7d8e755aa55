"""Variants of the reply lift (state/search.py ANSWER_SHARE) for bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --split tune --ideas bench/ideas/answers.py

A turn that asks something passes a share of its BM25 score to the turn after it in its
session; the share is divided by the reply's length over a reference length when longer,
and only the best matches pass any on. Each variant sets ``reply_lift`` and patches the two
constants."""

from retrieval_turns import Config

import state.search as search
from state.config import Settings


def variant(label: str, share: float, ref_chars: int, from_top: int) -> Config:
    return Config.shipped(
        label,
        settings=Settings(reply_lift=share),
        patches=(
            (search, "ANSWER_REF_CHARS", ref_chars),
            (search, "ANSWER_FROM_TOP", from_top),
        ),
    )


def ideas() -> list[Config]:
    found = [variant("no reply lift", 0.0, 100, 20)]
    for share in (0.2, 0.3, 0.4):
        for ref_chars in (100, 200, 10**6):  # 10**6: no length rule
            for from_top in (10, 20, 50):
                found.append(
                    variant(f"lift {share}, ref {ref_chars}, top {from_top}", share, ref_chars, from_top)
                )
    return found
