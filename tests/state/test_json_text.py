"""state/json_text.py: the JSON the daemon answers with and the store keeps is the JSON the
standard library would write, for every value the standard library takes; and stored JSON
reads back as the standard library reads it."""

from __future__ import annotations

import json

import pytest

from state.json_text import compact, compact_bytes, loads
from state.memories import NewMemory
from state.store import Store

VALUES = [
    {"a": 1, "b": [1.5, None, True, False], "text": "记忆云 Größe Встреча", "nested": {"x": ""}},
    [0, -1, 2**63 - 1, 1e-7, 3.141592653589793],
    'line\nbreak\ttab "quoted" back\\slash \u2028 \x00 \x1f',
    {},
    [],
]


@pytest.mark.parametrize("value", VALUES)
def test_same_json_as_the_standard_library(value: object) -> None:
    assert json.loads(compact(value)) == value
    assert json.loads(compact_bytes(value)) == value
    # Non-ASCII text is kept as it is, not escaped.
    if isinstance(value, dict) and "text" in value:
        assert "记忆云" in compact(value)


def test_compact_has_no_spaces_between_tokens() -> None:
    assert compact({"a": [1, 2], "b": "c d"}) == '{"a":[1,2],"b":"c d"}'


def test_integer_keys_become_strings_as_json_dumps_makes_them() -> None:
    assert json.loads(compact({1: "one", 2: "two"})) == {"1": "one", "2": "two"}


def test_an_integer_past_64_bits_falls_back_to_the_standard_library() -> None:
    big = {"n": 2**70}
    assert json.loads(compact(big)) == big
    assert json.loads(compact_bytes(big)) == big


def test_a_lone_surrogate_is_escaped_in_an_answer_and_kept_as_before_in_stored_text() -> None:
    value = {"text": "a\ud800b"}
    body = compact_bytes(value)
    assert body == b'{"text":"a\\ud800b"}'
    assert json.loads(body) == value
    assert compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_what_neither_encoder_takes_is_still_refused() -> None:
    with pytest.raises(TypeError):
        compact({"s": {1, 2}})


def test_stored_json_round_trips_through_compact() -> None:
    value = {"session_id": "s1", "n": 2**70, "tags": ["a", "é"], "nested": {"x": None}}
    assert json.loads(compact(value)) == value


# Stored text read back (loads): what the standard library reads, value for value, though
# orjson does the reading where it reads the same.
STORED = [
    '{"delta_id":"mdelta_01","source":"memory_delta","agent":"bench-000"}',
    '["Kafka","nginx","搜索索引"]',
    '{"n":123456789012345678901234,"m":-9223372036854775809}',  # past 64 bits: ints, exact
    '{"deep":[{"x":[18446744073709551616]}],"ok":18446744073709551615}',
    "[1e400, -0.0, 0.1, 1e-320, 1.7976931348623157e308, 1e22]",
    "[NaN, Infinity, -Infinity]",  # the standard library writes these (json.dumps)
    '{"s":"\\ud800","t":"\\ud83d\\ude00","u":"\\u0000\u2028"}',  # a lone surrogate, escaped
    '{"a":1,"a":2}',
    "{}",
    "[]",
    "null",
    '"text"',
]


@pytest.mark.parametrize("text", STORED)
def test_stored_text_reads_back_as_the_standard_library_reads_it(text: str) -> None:
    # repr: NaN != NaN, and 1e22 == 10**22 would hide an integer read as a float.
    assert repr(loads(text)) == repr(json.loads(text))
    assert repr(loads(text.encode("utf-8", "surrogatepass"))) == repr(json.loads(text))


def test_an_integer_past_64_bits_reads_back_exact_not_as_a_float() -> None:
    value = {"n": 2**70, "nested": [{"m": -(2**65)}], "small": 2**63 - 1}
    assert loads(compact(value)) == value
    assert type(loads(compact(value))["n"]) is int


def test_a_record_keeps_an_integer_past_64_bits_in_its_metadata(store: Store) -> None:
    with store.transaction():
        record = store.memories.create(
            NewMemory(
                namespace="ns", kind="fact", content="big numbers", source="test", metadata={"n": 2**70}
            )
        )
    assert store.memories.get(record["id"])["metadata"] == {"n": 2**70}


@pytest.mark.parametrize("text", ["{", "[1,]", "", "nul", '{"a": }'])
def test_text_that_is_not_json_is_refused_as_the_standard_library_refuses_it(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        loads(text)
