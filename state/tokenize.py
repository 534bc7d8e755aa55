"""Language-aware tokens for the full-text index and the hashing embedder.

SQLite's unicode61 tokenizer treats a whole run of Chinese characters as one token, so a
query for 记忆 would never match 原生记忆系统. We pre-tokenize in Python instead and store the
tokens space-separated: Latin text becomes lower-cased words (with a light English suffix
folding), CJK text becomes overlapping character bigrams plus single characters. Bigrams
carry most of the meaning of Chinese words; unigrams rescue one-character queries.
"""

from __future__ import annotations

import re
from functools import lru_cache

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

    With ``for_query`` stopwords are dropped, as are CJK unigrams when bigrams exist (they
    would match almost every Chinese memory and only add noise to the ranking).
    """
    out: list[str] = []
    for run in _WORD.findall(text.lower()):
        if _CJK.match(run):
            chars = [c for c in run]
            bigrams = [chars[i] + chars[i + 1] for i in range(len(chars) - 1)]
            if for_query:
                out.extend(bigrams if bigrams else chars)
            else:
                out.extend(chars)
                out.extend(bigrams)
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


def fts_query(text: str, *, max_terms: int = 256) -> str | None:
    """An FTS5 OR-query over the distinct query tokens, or None if nothing is searchable.

    The cap is generous on purpose: with a dialogue as the query, cutting at 64 terms dropped
    the end of the conversation, the part nearest the memory sought (MADial-Bench MRR 0.51 ->
    0.55 at 256, see bench/RESULTS.md).

    Tokens are double-quoted, so user input can never inject FTS5 syntax.
    """
    seen: dict[str, None] = {}
    for token in tokens(text, for_query=True):
        seen.setdefault(token, None)
        if len(seen) >= max_terms:
            break
    if not seen:
        return None
    return " OR ".join(f'"{t}"' for t in seen)
