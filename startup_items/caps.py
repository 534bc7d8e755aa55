"""Output caps per runtime, counting Chinese correctly.

Caps are in characters (Python counts code points, so 记 is one character, not three bytes)
or in estimated tokens: one token per CJK character, one per four other characters. That is
conservative for Chinese with current tokenizers and about right for English.
"""

from __future__ import annotations

import math
import re

_CJK = re.compile(
    r"[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)


def estimate_tokens(text: str) -> int:
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


def fits(text: str, max_chars: int | None = None, max_tokens: int | None = None) -> bool:
    if max_chars is not None and len(text) > max_chars:
        return False
    if max_tokens is not None and estimate_tokens(text) > max_tokens:
        return False
    return True


def truncate(text: str, max_chars: int | None = None, max_tokens: int | None = None) -> str:
    """The longest prefix of whole lines within the caps, with a note when cut."""
    if fits(text, max_chars, max_tokens):
        return text
    note = "\n\n_(cut to fit this runtime's context limit; query the retrieval handles for more)_"
    chars, tokens = len(note), estimate_tokens(note)
    kept: list[str] = []
    for line in text.splitlines():
        chars += len(line) + 1
        tokens += estimate_tokens(line) + 1
        if (max_chars is not None and chars > max_chars) or (max_tokens is not None and tokens > max_tokens):
            break
        kept.append(line)
    return "\n".join(kept) + note
