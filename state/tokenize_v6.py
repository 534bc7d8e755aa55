"""Tokenizer 6: the full-text tokens of every store made before version 7.

Kept only to answer from an index built with it while that index is rebuilt in the
background (state/rebuild.py), like state/tokenize_v5.py. Version 7 only added a text's
tokens of its own language (state/tokenize.py ``language_tokens``: a marker and tagged stems,
state/languages.py) and a query's (``language_terms``), beside tokens that stayed as they
were. So this is state/tokenize.py's ``index_text`` without ``language_tokens`` and its
``query_terms`` as they are, and must stay so: a change to ``tokens`` itself needs a version
of its own.
"""

from __future__ import annotations

from state.answer_cues import index_cues
from state.tokenize import (
    FTS_COLUMNS,
    FTS_TOKENIZER,
    STOP_TOKENS,
    fts_match,
    is_cjk,
    is_cjk_char,
    query_terms,
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

TOKENIZER_VERSION = 6


def index_text(text: str) -> str:
    """The space-separated token string of a version-6 FTS row."""
    return " ".join([*tokens(text, lemmas=True, fold=True, spelling=True), *index_cues(text)])
