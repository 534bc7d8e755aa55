"""state/json_text.py: the JSON the daemon answers with and the store keeps is the JSON the
standard library would write, for every value the standard library takes."""

from __future__ import annotations

import json

import pytest

from state.json_text import compact, compact_bytes

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
