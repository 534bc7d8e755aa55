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
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS  # {1: ...} becomes {"1": ...}, as json.dumps does


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
