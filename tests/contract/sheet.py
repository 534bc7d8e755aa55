"""The MemoryCloud reference server's wire contract, as data (a copy of
``shared/contracts/memorycloud-reference-contract.json``, kept with the tests so a clean
clone has it), and what the contract tests need from it: the endpoints, request bodies built
from their fields, and checks of an answer against the documented response.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

SHEET_PATH = Path(__file__).with_name("memorycloud-reference-contract.json")
SHARED_COPY = Path(__file__).resolve().parents[3] / "shared" / "contracts" / SHEET_PATH.name


@lru_cache(maxsize=1)
def sheet() -> dict[str, Any]:
    return json.loads(SHEET_PATH.read_text(encoding="utf-8"))


def endpoints() -> list[dict[str, Any]]:
    return sheet()["endpoints"]


def endpoint(endpoint_id: str) -> dict[str, Any]:
    return next(e for e in endpoints() if e["id"] == endpoint_id)


def request_fields(entry: dict[str, Any]) -> list[dict[str, Any]]:
    body = entry.get("request_body") or {}
    return body.get("fields", []) if body.get("content_type") == "application/json" else []


def sample_value(spec: dict[str, Any], rules: dict[str, Any]) -> Any:
    """A valid value for one request field: its default, else the first allowed value, else a
    value of its type within its limits."""
    allowed = rules.get(spec["name"], {}).get("allowed") if isinstance(rules.get(spec["name"]), dict) else None
    if allowed:
        return allowed[0]
    if spec.get("default") not in (None, "", [], {}):
        return spec["default"]
    kind = spec["type"]
    if kind == "string":
        text = f"contract {spec['name'].replace('_', ' ')}"
        low, high = spec.get("min_length", 1), spec.get("max_length", 200)
        return (text * (low // len(text) + 1))[:max(low, min(len(text), high))]
    if kind == "integer":
        return spec.get("min", 1)
    if kind == "number":
        return spec.get("min", 0.5)
    if kind == "boolean":
        return False
    if kind == "object":
        return {}
    return []


def required_body(entry: dict[str, Any]) -> dict[str, Any]:
    """A body with every required field of the endpoint's request, each with a valid value."""
    rules = (entry.get("request_body") or {}).get("value_rules", {})
    return {f["name"]: sample_value(f, rules) for f in request_fields(entry) if f.get("required")}


# -- checking an answer ----------------------------------------------------------------------

_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
    "object": (dict,), "array": (list,), "null": (type(None),),
}


def type_matches(value: Any, declared: str) -> bool:
    """``declared`` is a sheet type: "string", "object|null", "array<string>", ..."""
    for option in declared.split("|"):
        option = option.split("<", 1)[0].strip()
        kinds = _PYTHON_TYPES.get(option)
        if kinds is None:
            continue
        if isinstance(value, bool) and option in ("integer", "number"):
            continue
        if isinstance(value, kinds):
            return True
    return False


def response_problems(entry: dict[str, Any], data: Any, *, caller_is_agent: bool = True,
                      null_keys: tuple[str, ...] = ()) -> list[str]:
    """Every way ``data`` differs from the documented 2xx answer: the schema string, each
    top-level key and its type, the schema of nested objects the sheet names. A key the
    sheet marks conditional is checked when present, and required when its condition is only
    that the caller is an agent. ``null_keys`` may be null (a feature the daemon lacks)."""
    response = entry.get("response") or {}
    problems: list[str] = []
    if not isinstance(data, dict):
        return [f"answer is {type(data).__name__}, not a JSON object"]
    if response.get("schema") and data.get("schema") != response["schema"]:
        problems.append(f"schema is {data.get('schema')!r}, the reference's is {response['schema']!r}")
    conditional = response.get("conditional_keys", {})
    for key, declared in response.get("top_level_keys", {}).items():
        if key not in data:
            condition = conditional.get(key)
            if condition is None or (caller_is_agent and _agent_only(condition)):
                problems.append(f"missing top-level key {key!r} ({declared})")
            continue
        if data[key] is None and key in null_keys:
            continue
        if not type_matches(data[key], declared):
            problems.append(f"key {key!r} is {type(data[key]).__name__}, the reference's is {declared}")
    for key, nested in response.get("nested", {}).items():
        value = data.get(key)
        if isinstance(value, dict) and nested.get("schema") and value.get("schema") != nested["schema"]:
            problems.append(f"{key}.schema is {value.get('schema')!r}, the reference's is {nested['schema']!r}")
    return problems


def _agent_only(condition: str) -> bool:
    text = condition.lower()
    return "agent" in text and "pending" not in text and "update" not in text
