"""JSON text the store keeps and the daemon answers with: compact, UTF-8 as is; and that text
read back (:func:`loads`).

orjson writes it ~20x faster than the standard library (a brief's 45 KB answer 175 -> 7 us as
bytes, 37 us as str, this machine; bench/RESULTS.md "JSON by orjson"): a memory brief encodes
its answer and stores its context pack, ~10 % of a brief over HTTP before. Values orjson
refuses and the standard library takes (an integer past 64 bits, a lone surrogate that a
client sent as ``"\\ud800"``) fall back to the standard library, so nothing is answered or
stored otherwise than before but faster; output is equal JSON, not always equal bytes (floats
like 1e16 are written ``1e16``, not ``1e+16``; NaN is ``null``).

Reading is the same trade (:func:`loads`): a record's provenance reads in ~1.3 us against ~3 by
the standard library, and a context pack decodes two such columns of each of its ~24 memories,
a memory brief of ~40 (bootstrap/context 4.70 -> 4.52 M instructions a request). What orjson
refuses is read by the standard library, and so is a value holding a float of 2**63 or more:
orjson reads an integer past 64 bits as a float, without an error. So every value reads back
as the standard library reads it.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS  # {1: ...} becomes {"1": ...}, as json.dumps does
# orjson reads an integer past 64 bits as a float (no error): a float this large may be one, and
# the text is read again by the standard library (a float literal this large reads the same).
_LARGEST_EXACT = 2.0**63
_CONTAINERS_AND_FLOAT = frozenset({dict, list, float})


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
    """The value of stored JSON ``text``; invalid JSON raises :class:`json.JSONDecodeError`."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
    return json.loads(text) if _holds_large_float(value) else value


def _holds_large_float(value: Any) -> bool:
    """Whether ``value`` (decoded JSON) holds a float of magnitude 2**63 or more."""
    kind = type(value)
    if kind is float:
        return abs(value) >= _LARGEST_EXACT
    if kind is dict:
        value = value.values()
    elif kind is not list:
        return False
    for item in value:
        if type(item) in _CONTAINERS_AND_FLOAT and _holds_large_float(item):
            return True
    return False
