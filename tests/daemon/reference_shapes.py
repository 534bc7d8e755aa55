"""Checks of an answer against the MemoryCloud reference's documented response, deeper than
the contract suite's top-level check: the keys of nested objects (``nested.X.keys``), of each
item of a list (``nested.X.item_keys``) and of the shared notice objects, each with its JSON
type. Used by the *_reference.py tests."""

from __future__ import annotations

from typing import Any

from tests.contract import sheet


def _keys_problems(where: str, value: Any, keys: dict[str, str]) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where} is {type(value).__name__}, not an object"]
    problems = []
    for key, declared in keys.items():
        if key not in value:
            problems.append(f"{where} lacks {key!r} ({declared})")
        elif not sheet.type_matches(value[key], declared):
            problems.append(f"{where}.{key} is {type(value[key]).__name__}, the reference's is {declared}")
    return problems


def shape_problems(
    endpoint_id: str, data: Any, *, skip: tuple[str, ...] = (), caller_is_agent: bool = True
) -> list[str]:
    """Every documented key missing or of another type: top level (sheet.response_problems),
    then each nested object and list item the sheet describes (those in ``skip`` aside)."""
    entry = sheet.endpoint(endpoint_id)
    problems = sheet.response_problems(entry, data, caller_is_agent=caller_is_agent)
    shared = sheet.sheet()["shared_objects"]
    for key, nested in (entry.get("response") or {}).get("nested", {}).items():
        if key in skip or key not in data:
            continue
        value = data[key]
        if "keys" in nested:
            problems += _keys_problems(key, value, nested["keys"])
        if "item_keys" in nested:
            if not isinstance(value, list) or not value:
                problems.append(f"{key} has no items to check")
            for index, item in enumerate(value if isinstance(value, list) else []):
                problems += _keys_problems(f"{key}[{index}]", item, nested["item_keys"])
        if "see" in nested:
            problems += _keys_problems(key, value, shared[nested["see"].split(".", 1)[1]]["keys"])
        if nested.get("schema") and isinstance(value, dict) and value.get("schema") != nested["schema"]:
            problems.append(f"{key}.schema is {value.get('schema')!r}, not {nested['schema']!r}")
    return problems


def request_field_names(endpoint_id: str) -> list[str]:
    return [f["name"] for f in sheet.request_fields(sheet.endpoint(endpoint_id))]
