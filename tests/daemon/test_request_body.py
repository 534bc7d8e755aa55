"""A request body read as JSON (daemon/validation.py parse_json_object): the standard
library's reading, every value exact (orjson was measured and not kept: it reads an integer
past 64 bits as a float, and the check that sends such a body elsewhere cost more than orjson
saved, bench/RESULTS.md), and a bad body refused saying why."""

from __future__ import annotations

import json

import pytest

from daemon.validation import parse_json_object
from state.errors import InvalidRequest


@pytest.mark.parametrize(
    "raw",
    [
        b'{"summary": "caf\\u00e9 \xe6\x97\xa5\xe6\x9c\xac", "importance": 3, "why": null, "tags": ["a", 1.5]}',
        b'{"importance": 123456789012345678901234}',  # past 64 bits: an int, not a float
        b'{"n": -9223372036854775809, "m": 18446744073709551616}',
        b'{"a": NaN, "b": Infinity, "c": 1e400}',  # json's extensions, accepted as before
        b"\xef\xbb\xbf{}",  # a UTF-8 byte order mark
        '{"text": "utf-16"}'.encode("utf-16"),
        b'{"a": 1, "a": 2}',  # the last of a repeated key
        b'{"emoji": "\\ud83d\\ude00"}',
    ],
)
def test_a_body_means_what_the_standard_library_reads(raw: bytes) -> None:
    expected = json.loads(raw)
    parsed = parse_json_object(raw)
    assert repr(parsed) == repr(expected)  # repr: NaN != NaN, and 1 == 1.0 would hide a float


def test_an_integer_past_64_bits_stays_exact() -> None:
    assert (
        parse_json_object(b'{"importance": 123456789012345678901234}')["importance"]
        == 123456789012345678901234
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b'{"a": }', "malformed JSON at line 1 column 7"),
        (b'{"a": "\\ud800"}', "lone surrogate"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"a": "\xff"}', "not UTF-8"),
        (b"[1, 2]", "must be a JSON object, got array"),
        (b"null", "must be a JSON object, got null"),
    ],
)
def test_a_bad_body_is_refused_saying_why(raw: bytes, message: str) -> None:
    with pytest.raises(InvalidRequest, match=message):
        parse_json_object(raw)


def test_an_empty_body_is_an_empty_object() -> None:
    assert parse_json_object(b"  \n") == {}
