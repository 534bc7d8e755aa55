"""Document length in BM25 with context columns, on tokenizer 3 (the default since 33539fd),
for bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/lengths.py

FTS5's bm25() normalises a row by its length in tokens over *all* columns (the column
weights scale term frequencies, not the length), so a short turn after a long one is
penalised for its neighbour's words, and stopwords, which no query holds (query_terms drops
them), lengthen every row. Variants:

* ``context without stopwords``: the context columns hold the neighbours' tokens less
  STOP_TOKENS;
* ``index without stopwords``: a record's own tokens (and so its followers' context) are
  made as a query's are (``tokens(for_query=True)``): the words no query can match are not
  stored; a smaller index too;
* ``context distinct`` / ``context capped at N``: each context column holds a neighbour's
  distinct tokens, or at most its first N.

Measured on 418782f's default, tuning halves (recall@10 / R@2000c summed over the three
datasets; default 2.470 / 2.601): context without stopwords 2.413 / 2.594, index without
stopwords 2.444 / 2.601 (MADial-Bench English MRR@10 0.554 -> 0.525), + context distinct
2.428 / 2.573, + context capped at 12 2.413 / 2.559. None kept: the length that the
neighbours' words (stopwords included) give a row works as a prior that helps here.
"""

from __future__ import annotations

from retrieval_turns import Config

import state.answer_cues as answer_cues
import state.tokenize as tokenize
import state.turn_context as turn_context


def context_patches(stop: bool = False, distinct: bool = False, cap: int | None = None) -> tuple:
    original = turn_context.context_columns

    def shape(column: str) -> str:
        words = column.split()
        if stop:
            words = [w for w in words if w not in tokenize.STOP_TOKENS]
        if distinct:
            words = list(dict.fromkeys(words))
        if cap is not None:
            words = words[:cap]
        return " ".join(words)

    def context_columns(conn, table, seq):
        return tuple(shape(c) for c in original(conn, table, seq))

    return ((turn_context, "context_columns", context_columns),)


def index_without_stopwords() -> tuple:
    def index_text(text: str) -> str:
        return " ".join([*tokenize.tokens(text, for_query=True, lemmas=True), *answer_cues.index_cues(text)])

    return ((tokenize, "index_text", index_text),)


def ideas() -> list[Config]:
    return [
        Config.shipped("context without stopwords", patches=context_patches(stop=True)),
        Config.shipped("index without stopwords", patches=index_without_stopwords()),
        Config.shipped(
            "index without stopwords, context distinct",
            patches=(*index_without_stopwords(), *context_patches(distinct=True)),
        ),
        Config.shipped(
            "index without stopwords, context capped at 12",
            patches=(*index_without_stopwords(), *context_patches(cap=12)),
        ),
    ]
