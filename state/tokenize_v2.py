"""Tokenizer version 2: the full-text tokens of every store made before version 3.

Kept only to answer from an index built with it while that index is rebuilt in the
background (state/rebuild.py), like state/tokenize_v1.py. Version 3 changed only what the
full-text index and its queries add to the plain tokens (lemmas of English word forms,
answer cues), so version 2 is those plain tokens of state/tokenize.py, and must stay so:
a change to ``tokens`` itself needs a version of its own, and a frozen copy here.
"""

from __future__ import annotations

from state.tokenize import (
    FTS_COLUMNS,
    FTS_TOKENIZER,
    STOP_TOKENS,
    fts_match,
    is_cjk,
    is_cjk_char,
    last_distinct,
    tokens,
)

# The frozen tokenizers' shared interface (state/index_builds.py uses the module itself).
__all__ = [
    "FTS_COLUMNS",
    "FTS_TOKENIZER",
    "STOP_TOKENS",
    "TOKENIZER_VERSION",
    "fts_match",
    "index_text",
    "is_cjk",
    "is_cjk_char",
    "query_terms",
    "tokens",
]

TOKENIZER_VERSION = 2


def index_text(text: str) -> str:
    """The space-separated token string of a version-2 FTS row."""
    return " ".join(tokens(text))


def query_terms(text: str, *, max_terms: int = 256) -> list[str]:
    """The distinct query tokens of ``text`` for a version-2 index, at most ``max_terms``."""
    return last_distinct(tokens(text, for_query=True), max_terms)
