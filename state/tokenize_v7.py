"""Tokenizer 7: the full-text tokens of every store made before version 8.

Kept only to answer from an index built with it while that index is rebuilt in the
background (state/rebuild.py), like state/tokenize_v6.py. Version 8 only told more languages
(state/languages.py: Lithuanian, Estonian, Basque, Irish, Esperanto, Serbian, Nepali, Yiddish,
Sesotho) and stemmed a text in one of them in it; every other text's tokens stayed as they
were. So this is state/tokenize.py's ``index_text`` telling only tokenizer 7's languages
(``TOKENIZER_7_CODES``, with their function words and letters alone), and its query terms as
they are (an index of 7 holds no marker of another language, so a query asks nothing more of
it), and must stay so: a change to ``tokens`` itself needs a version of its own.
"""

from __future__ import annotations

from state import languages
from state.answer_cues import index_cues
from state.tokenize import (
    FTS_COLUMNS,
    FTS_TOKENIZER,
    STOP_TOKENS,
    fts_match,
    is_cjk,
    is_cjk_char,
    language_forms,
    language_terms,
    query_terms,
    text_language,
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
    "language_forms",
    "language_terms",
    "query_terms",
    "tokens",
]

TOKENIZER_VERSION = 7


def index_text(text: str) -> str:
    """The space-separated token string of a version-7 FTS row."""
    language = text_language(text, languages.TOKENIZER_7_CODES)
    out = [*tokens(text, lemmas=True, fold=True, spelling=True, language=language), *index_cues(text)]
    if language is not None:
        out.append(languages.marker(language))
    return " ".join(out)
