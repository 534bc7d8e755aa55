"""The vector scan of vector_mode ``fallback`` (English queries under ``auto``) ranked after
every BM25 hit instead of fused with them, for bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/append_vectors.py

``fallback`` scans the vectors when BM25 finds fewer records than the page asks for, and
fuses the scan 1:1 by reciprocal rank: a deep search (limit 50, R@2000c's) or a query with
few matching words gets vector neighbours between its word matches. Here the scan only
fills the page after the words' hits (the misspelt-query rescue stays: with no word match
the vectors rank alone). Simulated by a vector weight of 0.001 for the queries that
``auto`` sends to ``fallback`` (the rerank of CJK queries keeps its weight).

Measured first on tokenizer 2 (main up to a60e4a9), then on the default of 418782f
(tokenizer 3 and the loose turn chain); it patches only state/search.py's search, so it
runs on either.
"""

from __future__ import annotations

import sys
from pathlib import Path

from retrieval_turns import Config

import state.search as search

sys.path.insert(0, str(Path(__file__).resolve().parent))
from best import BEST  # noqa: E402

_search = search.SearchIndex.search


def appended(self, query, namespaces, **kwargs):
    tokenizer = search.tokenizer_for(self.builds()[search.FTS].built_with)
    if self.vector_mode in ("auto", "fallback") and not (
        self.vector_mode == "auto" and search.mostly_cjk(tokenizer.query_terms(query), tokenizer)
    ):
        saved = self.vector_weight
        self.vector_weight = min(saved, 0.001) if saved > 0 else saved
        try:
            return _search(self, query, namespaces, **kwargs)
        finally:
            self.vector_weight = saved
    return _search(self, query, namespaces, **kwargs)


APPEND = (search.SearchIndex, "search", appended)


def ideas() -> list[Config]:
    return [
        Config.shipped("shipped + vectors appended", patches=(APPEND,)),
        Config.shipped("best + vectors appended", patches=(*BEST, APPEND)),
    ]
