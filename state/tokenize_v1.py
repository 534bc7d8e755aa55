"""Tokenizer version 1, frozen: the tokens of every store made before version 2.

Kept only to answer from an index built with it while that index is rebuilt in the
background (state/rebuild.py): the old FTS index keeps answering, queried with these terms,
and writes meanwhile keep it current. Never change it: its tokens must equal those already
stored. It can go when no supported upgrade path starts from a store built with version 1
(a release that refuses to open such stores, or requires `memorycloud doctor --repair`).

The text below is state/tokenize.py as of commit 3e61d2f, but for what makes no tokens and is
shared with the current tokenizer: the FTS5 query syntax (fts_match) and the cap on query
terms (last_distinct).

SQLite's unicode61 tokenizer treats a whole run of Chinese characters as one token, so a
query for 记忆 would never match 原生记忆系统. We pre-tokenize in Python instead and store the
tokens space-separated: Latin text becomes lower-cased words (with a light English suffix
folding), CJK text becomes overlapping character bigrams plus single characters. Bigrams
carry most of the meaning of Chinese words; unigrams rescue one-character queries.
"""

from __future__ import annotations

import re
from functools import lru_cache

from state.tokenize import fts_match, last_distinct

# The frozen tokenizers' shared interface (state/index_builds.py uses the module itself).
__all__ = [
    "FTS_COLUMNS",
    "FTS_TOKENIZER",
    "TOKENIZER_VERSION",
    "fts_match",
    "index_text",
    "is_cjk_char",
    "query_terms",
    "tokens",
]

TOKENIZER_VERSION = 1
# The FTS5 tokenizer of the tables built with this version (migration m0001).
FTS_TOKENIZER = "unicode61 remove_diacritics 2"
FTS_COLUMNS = ("tokens",)  # one column: a record's own tokens

_WORD = re.compile(r"[0-9a-z_]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")

# Words that match nearly everything; dropping them keeps OR queries small and fast.
STOPWORDS = frozenset(
    """a an and are as at be but by do does did for from had has have he her hers him his how i
    if in into is it its me my no not of on or our she so than that the their them then there
    these they this those to too us was we were what when where which who why will with you your
    yours just also can could would should about very really oh yeah ok okay hey hi""".split()
)
CJK_STOP = frozenset("的了是在我你他她它们吗呢吧啊呀哦嗯和也都就这那")


@lru_cache(maxsize=65536)
def _fold(word: str) -> str:
    """Light English suffix folding so 'memories'/'memory', 'games'/'game', 'decided'/'decide'
    meet. Not a full stemmer: it only has to map a word's common forms to one token."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith(("ches", "shes", "xes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ing") and len(word) >= 6:
        word = word[:-3]
    elif word.endswith("ed") and len(word) >= 5:
        word = word[:-2]
    # 'decide'/'decided' -> 'decid': a trailing e is dropped after the suffix rules.
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def tokens(text: str, *, for_query: bool = False) -> list[str]:
    """Split text into index tokens (see module docstring).

    With ``for_query`` stopwords are dropped (English words and CJK function characters).
    CJK single characters stay in queries: BM25's IDF weighs them, and they are how 绘画
    meets 画画 and 画作 (MADial-Bench zh MRR@10 +0.04 on both halves, bench/RESULTS.md).
    """
    out: list[str] = []
    for run in _WORD.findall(text.lower()):
        if _CJK.match(run):
            chars = [c for c in run]
            out.extend(chars)
            out.extend(chars[i] + chars[i + 1] for i in range(len(chars) - 1))
        else:
            if for_query and run in STOPWORDS:
                continue
            out.append(_fold(run))
    if for_query:
        out = [t for t in out if t not in CJK_STOP]
    return out


def index_text(text: str) -> str:
    """The space-separated token string stored in the FTS5 table."""
    return " ".join(tokens(text))


def query_terms(text: str, *, max_terms: int = 256) -> list[str]:
    """The distinct query tokens of ``text``, at most ``max_terms`` (the last ones)."""
    return last_distinct(tokens(text, for_query=True), max_terms)


def is_cjk_char(token: str) -> bool:
    """A single CJK character token (the query tokens whose posting lists are longest)."""
    return len(token) == 1 and _CJK.match(token) is not None
