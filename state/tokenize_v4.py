"""Tokenizers 3 and 4: the full-text tokens of every store made before version 5.

Kept only to answer from an index built with them while that index is rebuilt in the
background (state/rebuild.py), like state/tokenize_v1.py and state/tokenize_v2.py. Version 5
changed only the folding of letters without a decomposition (state/tokenize.py
LETTER_FOLDS) and of other scripts' digits, which these tokens leave as they are; 3 and 4
have the same tokens (4 changed which turns get context columns). So this is state/tokenize.py's ``tokens`` without
``fold``, and must stay so: a change to ``tokens`` itself needs a version of its own.
"""

from __future__ import annotations

from state.answer_cues import index_cues, query_cues
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

TOKENIZER_VERSION = 4


def index_text(text: str) -> str:
    """The space-separated token string of a version-3 or -4 FTS row."""
    return " ".join([*tokens(text, lemmas=True), *index_cues(text)])


def query_terms(text: str, *, max_terms: int = 256) -> list[str]:
    """The distinct query tokens of ``text`` for a version-3 or -4 index, at most ``max_terms``."""
    return last_distinct([*tokens(text, for_query=True, lemmas=True), *query_cues(text)], max_terms)
