"""Tokenizer 5: the full-text tokens of every store made before version 6.

Kept only to answer from an index built with it while that index is rebuilt in the
background (state/rebuild.py), like state/tokenize_v1.py, state/tokenize_v2.py and
state/tokenize_v4.py. Version 6 changed only the spellings that ``spelling`` meets (state/
tokenize.py ARABIC_FOLDS and the notes after it: Hebrew prefixes, Arabic-script letters,
Indic nukta and chandrabindu, apostrophes in Cyrillic words, traditional Chinese characters,
zero-width non-joiners), which
these tokens leave as they are. So this is state/tokenize.py's ``tokens`` with ``fold`` and
without ``spelling``, and must stay so: a change to ``tokens`` itself needs a version of its
own.
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

TOKENIZER_VERSION = 5


def index_text(text: str) -> str:
    """The space-separated token string of a version-5 FTS row."""
    return " ".join([*tokens(text, lemmas=True, fold=True), *index_cues(text)])


def query_terms(text: str, *, max_terms: int = 256) -> list[str]:
    """The distinct query tokens of ``text`` for a version-5 index, at most ``max_terms``."""
    return last_distinct(
        [*tokens(text, for_query=True, lemmas=True, fold=True), *query_cues(text)], max_terms
    )
