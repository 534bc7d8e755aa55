"""JSON text the store keeps and the daemon answers with: compact, UTF-8 as is.

orjson writes it ~20x faster than the standard library (a brief's 45 KB answer 175 -> 7 us as
bytes, 37 us as str, this machine; bench/RESULTS.md "JSON by orjson"): a memory brief encodes
its answer and stores its context pack, ~10 % of a brief over HTTP before. Values orjson
refuses and the standard library takes (an integer past 64 bits, a lone surrogate that a
client sent as ``"\\ud800"``) fall back to the standard library, so nothing is answered or
stored otherwise than before but faster; output is equal JSON, not always equal bytes (floats
like 1e16 are written ``1e16``, not ``1e+16``; NaN is ``null``).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS  # {1: ...} becomes {"1": ...}, as json.dumps does
# orjson reads an integer past 64 bits as a float; json reads it as the integer it is.
_LONG_DIGITS = re.compile(r"\d{19}")  # 2**63 has 19 digits
_LONG_DIGIT_BYTES = re.compile(rb"\d{19}")


def compact(value: Any) -> str:
    """``value`` as compact JSON text (no spaces, non-ASCII kept)."""
    try:
        return orjson.dumps(value, option=_OPTIONS).decode("utf-8")
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def compact_bytes(value: Any) -> bytes:
    """``value`` as compact JSON in UTF-8 (an HTTP body). A value that cannot be UTF-8 (a
    lone surrogate) is escaped as the standard library's ASCII output does."""
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def loads(text: str | bytes) -> Any:
    """JSON text read as the standard library reads it, by orjson where that gives the same
    value (~5x faster for a short object): a text orjson refuses (NaN, a byte order mark,
    UTF-16, a lone surrogate escape, deep nesting, malformed JSON) or holds a long run of
    digits anywhere goes to ``json.loads``, whose errors are raised as they always were."""
    long_digits = _LONG_DIGIT_BYTES if isinstance(text, bytes) else _LONG_DIGITS
    if long_digits.search(text) is None:  # type: ignore[arg-type]
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)
