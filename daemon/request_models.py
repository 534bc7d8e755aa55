"""Request bodies as pydantic models: the one schema source for validation, the OpenAPI
document (daemon/api/openapi.py) and GET /api/protocol/schema.

Each endpoint's body is a :class:`RequestModel` subclass declared next to its handler. What
every body shares, decided here once:

- ``null`` is the same as leaving a field out (its default applies; a required field is
  missing), so optional fields are documented as nullable;
- types are strict, as JSON Schema reads them: ``"5"`` is not an integer and ``true`` is not
  a number, but ``5.0`` is the integer 5 (JSON Schema's "integer" is a mathematical one);
- a field that the model does not know is not stored, and not silently either: the answer
  names it (``ignored_fields``), so a typo such as ``dreams_mdx`` never loses data without a
  word;
- a field may be sent under other names (``validation_alias=AliasChoices(name, ...)``: the
  MemoryCloud reference's names or our earlier ones); two different values are a 422;
- a failure is a :class:`state.errors.ValidationFailed` whose details name the missing fields
  or the one wrong field and the problem, which each dialect puts in its own envelope.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, ValidationError
from pydantic_core import ErrorDetails

from state.errors import ValidationFailed

# Python types as JSON Schema names: for error messages and the JSON reader's messages.
JSON_TYPES = {
    str: "string",
    int: "integer",
    bool: "boolean",
    list: "array",
    dict: "object",
    float: "number",
    type(None): "null",
}


def _integral(value: Any) -> Any:
    """5.0 is the integer 5 (JSON Schema's reading); 5.5, "5" and true stay what they are."""
    return int(value) if type(value) is float and value.is_integer() else value


# An integer field: ``max_items: Int = Field(8, ge=1, le=50)``.
Int = Annotated[int, BeforeValidator(_integral)]

_MIN_LENGTH_OF: dict[str, int] = {}
# The characters str.strip() removes (str.isspace(), all below U+3001), written out: \s is
# not the same set in Python, ECMA-262 and Rust regular expressions (\x1c-\x1f, \x85), and a
# fuzzer checks the document's patterns with another engine than the server's.
_BLANK = "".join(c for c in map(chr, range(0x3001)) if c.isspace())
_TEXT = f"[^{_BLANK}]"


# A text that is empty or blanks only (what at_least(1) refuses).
BLANK_ONLY = f"^[{_BLANK}]*$"


def blank_padded(pattern: str) -> str:
    """A pattern for ``pattern`` whole, with any blanks before and after (a value that is
    read with str.strip(), as a multipart form's fields are)."""
    return f"^[{_BLANK}]*(?:{pattern})[{_BLANK}]*$"


def at_least(length: int) -> str:
    """A pattern for "at least ``length`` characters besides surrounding blanks" (what a
    required text needs: "   " is empty). The stripped text is that long exactly when two
    non-blank characters lie ``length - 1`` apart, which a JSON Schema pattern can say."""
    pattern = _TEXT if length == 1 else rf"{_TEXT}[\s\S]{{{length - 2},}}{_TEXT}"
    _MIN_LENGTH_OF[pattern] = length
    return pattern


class RequestModel(BaseModel):
    """Base of every request body (see the module's docstring)."""

    # strict: no coercion of "5" into 5 or of 1 into True; python-re: the patterns are
    # Python's regular expressions, as the OpenAPI document's readers take them.
    # A subclass names its schema with ``title`` ("memory-brief"): class Brief(RequestModel,
    # title="memory-brief").
    model_config = ConfigDict(
        strict=True, extra="ignore", regex_engine="python-re", hide_input_in_errors=True
    )

    @classmethod
    def parse_body(cls, body: dict[str, Any]) -> dict[str, Any]:
        """The validated body: every field under its own name, defaults filled in; or
        ValidationFailed naming the missing fields, or the first wrong field."""
        aliases = _aliases(cls)
        if aliases or None in body.values():
            body = {key: value for key, value in body.items() if value is not None}
            for name, names in aliases:
                _fold(body, name, names)
        try:
            return cls.model_validate(body).__dict__
        except ValidationError as exc:
            raise _failure(cls, exc) from None

    @classmethod
    def ignored_fields(cls, body: dict[str, Any]) -> list[str]:
        """Top-level fields of ``body`` that this model neither reads nor keeps."""
        known = _known(cls)
        return [key for key in body if key not in known]

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The body's JSON Schema (for the OpenAPI document), made once per model."""
        return _json_schema(cls)

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """The body's fields in /api/protocol/schema's flat form (name, type, bounds)."""
        return {"name": _json_schema(cls)["title"], "fields": _described_fields(cls)}


class Empty(RequestModel, title="empty"):
    """A body with no fields (any fields sent are named as ignored)."""


@cache
def _known(model: type[RequestModel]) -> frozenset[str]:
    # Made once per model, not per request (every request of the endpoint asks).
    return frozenset(
        name for field, info in model.model_fields.items() for name in _names(field, info.validation_alias)
    )


def _names(field: str, alias: Any) -> tuple[str, ...]:
    if isinstance(alias, AliasChoices):
        return tuple(str(choice) for choice in alias.choices)
    return (field,)


@cache
def _aliases(model: type[RequestModel]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple(
        (field, _names(field, info.validation_alias))
        for field, info in model.model_fields.items()
        if isinstance(info.validation_alias, AliasChoices)
    )


def _fold(body: dict[str, Any], name: str, names: tuple[str, ...]) -> None:
    """Put the value sent under any of ``names`` under ``name``; different values are a 422."""
    given = {key: body.pop(key) for key in names if key in body}
    if len(given) > 1 and len({json.dumps(v, sort_keys=True, default=str) for v in given.values()}) > 1:
        raise ValidationFailed(
            f"fields {', '.join(repr(n) for n in given)} name the same"
            " thing with different values: send one of them",
            details={"field": name, "conflicting": list(given)},
        )
    if given:
        body[name] = next(iter(given.values()))


def _failure(model: type[RequestModel], exc: ValidationError) -> ValidationFailed:
    errors = exc.errors(include_url=False, include_context=True, include_input=True)
    missing = [str(e["loc"][0]) for e in errors if e["type"] == "missing"]
    if missing:
        return ValidationFailed(
            f"missing required field{'s' if len(missing) > 1 else ''}: {', '.join(missing)}",
            details={"missing_fields": missing},
        )
    field = str(errors[0]["loc"][0])
    problem = _problem(model, field, [e for e in errors if e["loc"][0] == field])
    return ValidationFailed(f"field '{field}' {problem}", details={"field": field, "problem": problem})


def _problem(model: type[RequestModel], field: str, errors: list[ErrorDetails]) -> str:
    """What is wrong with one field, in the words the daemon has always used."""
    error = errors[0]
    kind, ctx, loc = error["type"], error.get("ctx") or {}, error["loc"]
    if len(loc) > 1 and isinstance(loc[1], int):  # an item of a list
        item = f"item {loc[1]}"
        if kind == "string_too_long":
            return f"{item} must be at most {ctx['max_length']} characters"
        expected = _item_type(model, field)
        return f"{item} must be {_article(expected)} {expected}"
    if kind.endswith("_type") or len(errors) > 1:  # a union answers one error per member
        expected = " or ".join(_types(model, field))
        got = JSON_TYPES.get(type(error["input"]), type(error["input"]).__name__)
        return f"must be {_article(expected)} {expected}, got {got}"
    if kind == "string_too_long":
        return f"must be at most {ctx['max_length']} characters"
    if kind == "string_pattern_mismatch" and ctx.get("pattern") in _MIN_LENGTH_OF:
        length = _MIN_LENGTH_OF[ctx["pattern"]]
        return "must not be empty" if length == 1 else f"must be at least {length} characters"
    if kind in ("greater_than_equal", "less_than_equal"):
        low, high = _bounds(model, field)
        return (
            f"must be between {low} and {high}"
            if low is not None and high is not None
            else f"must be at least {low}"
            if low is not None
            else f"must be at most {high}"
        )
    if kind == "literal_error":  # a value of a fixed list (Literal)
        choices = [str(v) for o in _options(_property(model, field)) for v in o.get("enum", ())]
        return f"must be one of: {', '.join(choices)}"
    if kind == "too_long":
        return f"must have at most {ctx['max_length']} items"
    return str(error["msg"])[:1].lower() + str(error["msg"])[1:]


def _article(noun: str) -> str:
    return "an" if noun[0] in "aeiou" else "a"


def _property(model: type[RequestModel], field: str) -> dict[str, Any]:
    return _json_schema(model)["properties"][field]


def _options(prop: dict[str, Any]) -> list[dict[str, Any]]:
    return [o for o in prop.get("anyOf", [prop]) if o.get("type") != "null"]


def _types(model: type[RequestModel], field: str) -> list[str]:
    return [o.get("type", "value") for o in _options(_property(model, field))]


def _item_type(model: type[RequestModel], field: str) -> str:
    items: dict[str, Any] = next(
        (o.get("items", {}) for o in _options(_property(model, field)) if "items" in o), {}
    )
    return items.get("type", "value")


def _bounds(model: type[RequestModel], field: str) -> tuple[Any, Any]:
    option = next((o for o in _options(_property(model, field)) if "minimum" in o or "maximum" in o), {})
    return option.get("minimum"), option.get("maximum")


@cache
def _json_schema(model: type[RequestModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)  # "Workspace Id" for workspace_id says nothing
        for option in prop.get("anyOf", [prop]):
            # pydantic 2.12 leaves the bounds of a nullable Int (its validator in a union) as
            # "ge"/"le", which JSON Schema does not know: bounds a fuzzer would never test.
            for ours, theirs in (("ge", "minimum"), ("le", "maximum")):
                if ours in option:
                    option[theirs] = option.pop(ours)
    schema.setdefault("properties", {})
    schema.setdefault("required", [])
    return schema


_DESCRIBED = (
    ("maxLength", "max_length"),
    ("minimum", "minimum"),
    ("maximum", "maximum"),
    ("maxItems", "max_items"),
    ("enum", "choices"),  # a value of a fixed list (Literal)
)


def _described_fields(model: type[RequestModel]) -> list[dict[str, Any]]:
    schema = _json_schema(model)
    out = []
    for field, info in model.model_fields.items():
        options = _options(schema["properties"][field])
        row: dict[str, Any] = {
            "name": field,
            "type": "|".join(o.get("type", "any") for o in options),
            "required": info.is_required(),
        }
        names = _names(field, info.validation_alias)
        if len(names) > 1:
            row["aliases"] = list(names[1:])
        default = info.get_default(call_default_factory=True)
        if default is not None and not info.is_required():
            row["default"] = default
        for option in options:
            for key, name in _DESCRIBED:
                if key in option:
                    row[name] = option[key]
            items = option.get("items")
            if items:
                row["items"] = items.get("type", "any")
                if "maxLength" in items:
                    row["max_length"] = items["maxLength"]
        if info.description:
            row["description"] = info.description
        out.append(row)
    return out
