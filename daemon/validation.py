"""Declarative request schemas: one description drives validation and /api/protocol/schema.

Deliberately small instead of a dependency: AMP requests are flat JSON objects with a
handful of typed fields, and the messages must name the field and what was wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Callable

from aiohttp import web

from state.errors import InvalidRequest, ValidationFailed

# Python types as JSON Schema names: for error messages, /api/protocol/schema and the OpenAPI
# document (daemon/api/openapi.py).
JSON_TYPES = {str: "string", int: "integer", bool: "boolean", list: "array", dict: "object",
              float: "number", type(None): "null"}


@dataclass(frozen=True)
class Field:
    """One JSON field: type, whether required, default and bounds."""

    name: str
    type: type | tuple[type, ...]      # a tuple: any of these JSON types
    required: bool = False
    default: Any = None
    max_length: int | None = None
    min_length: int = 0
    minimum: int | None = None
    maximum: int | None = None
    items: type | None = None
    max_items: int | None = None
    description: str = ""
    # Other names a client may send this field under (the MemoryCloud reference's names, or
    # our earlier ones); the parsed body always carries it under ``name``.
    aliases: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def check(self, value: Any) -> Any:
        """Return the validated value or raise ValidationFailed naming this field."""
        if isinstance(self.type, tuple):
            for option in self.type:
                if _is_type(value, option):
                    return replace(self, type=option).check(value)
            expected = " or ".join(JSON_TYPES[t] for t in self.type)
            raise self._fail(f"must be {_article(expected)} {expected},"
                             f" got {JSON_TYPES.get(type(value), type(value).__name__)}")
        expected = JSON_TYPES[self.type]
        ok = _is_type(value, self.type)
        if self.type is float and ok:
            value = float(value)
        if not ok:
            raise self._fail(f"must be {_article(expected)} {expected},"
                             f" got {JSON_TYPES.get(type(value), type(value).__name__)}")
        if self.type is str:
            if len(value.strip()) < self.min_length:
                raise self._fail("must not be empty" if self.min_length == 1
                                 else f"must be at least {self.min_length} characters")
            if self.max_length is not None and len(value) > self.max_length:
                raise self._fail(f"must be at most {self.max_length} characters")
        if self.type is int:
            if self.minimum is not None and value < self.minimum or (
                self.maximum is not None and value > self.maximum
            ):
                raise self._fail(f"must be between {self.minimum} and {self.maximum}")
        if self.type is list:
            if self.max_items is not None and len(value) > self.max_items:
                raise self._fail(f"must have at most {self.max_items} items")
            if self.items is not None:
                for index, item in enumerate(value):
                    if not isinstance(item, self.items) or isinstance(item, bool):
                        raise self._fail(f"item {index} must be a {JSON_TYPES[self.items]}")
                    if self.items is str and self.max_length and len(item) > self.max_length:
                        raise self._fail(f"item {index} must be at most {self.max_length} characters")
        return value

    def _fail(self, problem: str) -> ValidationFailed:
        return ValidationFailed(f"field '{self.name}' {problem}",
                                details={"field": self.name, "problem": problem})

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": type_name(self.type),
                               "required": self.required}
        if self.aliases:
            out["aliases"] = list(self.aliases)
        if self.default is not None:
            out["default"] = self.default
        for key in ("max_length", "minimum", "maximum", "max_items"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.items is not None:
            out["items"] = JSON_TYPES[self.items]
        if self.description:
            out["description"] = self.description
        return out


def _is_type(value: Any, expected: type) -> bool:
    if isinstance(value, bool) and expected in (int, float):
        return False
    return isinstance(value, expected) or (expected is float and isinstance(value, int))


def _article(noun: str) -> str:
    return "an" if noun[0] in "aeiou" else "a"


def type_name(kind: type | tuple[type, ...]) -> str:
    """The JSON name of a field's type ("string", or "array|object" for a choice)."""
    if isinstance(kind, tuple):
        return "|".join(JSON_TYPES[t] for t in kind)
    return JSON_TYPES[kind]


@dataclass(frozen=True)
class RequestSchema:
    """The JSON body of one endpoint.

    A field that the schema does not know is not stored, and not silently either: the
    answer names it (``ignored_fields``), so a typo such as ``dreams_mdx`` never loses data
    without a word. ``open`` schemas pass every field through (bodies kept whole)."""

    name: str
    fields: tuple[Field, ...] = field(default_factory=tuple)
    open: bool = False

    def known_names(self) -> set[str]:
        return set(self._known)

    @cached_property
    def _known(self) -> frozenset[str]:
        # Made once per schema, not per request (every request of the endpoint asks).
        return frozenset(name for spec in self.fields for name in spec.names)

    def ignored_fields(self, body: dict[str, Any]) -> list[str]:
        """Top-level fields of ``body`` that this schema neither reads nor keeps."""
        if self.open:
            return []
        known = self._known
        return [key for key in body if key not in known]

    def parse(self, body: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = dict(body) if self.open else {}
        values = {spec.name: self._value(spec, body) for spec in self.fields}
        missing = [f.name for f in self.fields if f.required and values[f.name] is None]
        if missing:
            raise ValidationFailed(
                f"missing required field{'s' if len(missing) > 1 else ''}: {', '.join(missing)}",
                details={"missing_fields": missing},
            )
        for spec in self.fields:
            value = values[spec.name]
            if value is None:
                default = spec.default
                result[spec.name] = default.copy() if isinstance(default, (list, dict)) else default
            else:
                result[spec.name] = spec.check(value)
        return result

    @staticmethod
    def _value(spec: Field, body: dict[str, Any]) -> Any:
        """The field's value under its name or one alias; two different values are a 422."""
        if not spec.aliases:  # one name: nothing to disagree with (and no JSON to compare)
            return body.get(spec.name)
        given = {name: body[name] for name in spec.names if body.get(name) is not None}
        if len(given) <= 1:
            return next(iter(given.values()), None)
        if len({json.dumps(v, sort_keys=True, default=str) for v in given.values()}) > 1:
            raise ValidationFailed(f"fields {', '.join(repr(n) for n in given)} name the same"
                                   " thing with different values: send one of them",
                                   details={"field": spec.name, "conflicting": list(given)})
        return next(iter(given.values()), None)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "fields": [f.describe() for f in self.fields]}


async def read_json_object(request: web.Request) -> dict[str, Any]:
    """The request body as a JSON object, or InvalidRequest saying what is wrong with it."""
    raw = await request.read()
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except UnicodeDecodeError:
        raise InvalidRequest("request body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InvalidRequest(
            f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            details={"line": exc.lineno, "column": exc.colno},
        ) from None
    except RecursionError:
        raise InvalidRequest("JSON is nested too deeply") from None
    if not isinstance(data, dict):
        name = "null" if data is None else JSON_TYPES.get(type(data), type(data).__name__)
        raise InvalidRequest(f"request body must be a JSON object, got {name}")
    # A \ud800-style escape decodes to a lone surrogate, which is not valid Unicode and
    # cannot be stored; refuse it here instead of failing deep inside SQLite.
    if b"\\ud" in raw.lower():
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidRequest("request body contains invalid Unicode (a lone surrogate escape)") from None
    return data


@dataclass(frozen=True)
class Query:
    """One query parameter, declared on its endpoint (``Endpoint.query``): the OpenAPI document
    lists it from here, and the handler reads it through :meth:`read`, so the two cannot drift.

    Integers take ASCII digits only (a 422 naming the parameter otherwise); out of bounds they
    are refused (422), or with ``clamp`` brought into bounds, as the MemoryCloud reference does
    for its catalog. A value outside ``choices`` is a 422 listing them."""

    name: str
    type: type = str                  # str or int
    required: bool = False
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None
    clamp: bool = False
    choices: tuple[str, ...] = ()
    max_length: int | None = None
    repeated: bool = False            # ?namespace=a&namespace=b: read() gives the list
    description: str = ""
    # Checks a present value instead of the choice check, with the error of the value's own
    # domain (suite visibility is a 400 everywhere it is given, body or query).
    check: Callable[[str], Any] | None = None

    def read(self, request: web.Request) -> Any:
        """The parameter's value (its default when absent or empty), or ValidationFailed."""
        if self.repeated:
            return request.query.getall(self.name, [])
        raw = request.query.get(self.name)
        if raw is None or raw == "":
            return self.default
        if self.type is int:
            return self._integer(raw)
        if self.check is not None:
            return self.check(raw)
        if self.choices and raw not in self.choices:
            raise ValidationFailed(f"query parameter '{self.name}' must be one of:"
                                   f" {', '.join(self.choices)}", details={"field": self.name})
        return raw

    def absent(self, request: web.Request) -> bool:
        """Whether the request leaves this parameter out (or empty), before reading it."""
        return not request.query.get(self.name)

    def _integer(self, raw: str) -> int:
        low, high = self.minimum, self.maximum
        if not (raw.isascii() and raw.removeprefix("-").isdigit()):
            bounds = "" if self.clamp or low is None else f" between {low} and {high}"
            raise ValidationFailed(f"query parameter '{self.name}' must be an integer{bounds},"
                                   f" got {raw!r}", details={"field": self.name})
        value = int(raw)
        if self.clamp:
            return max(low, min(value, high)) if low is not None and high is not None else value
        if low is not None and value < low or high is not None and value > high:
            raise ValidationFailed(f"query parameter '{self.name}' must be between {low} and {high}",
                                   details={"field": self.name})
        return value

    def openapi(self) -> dict[str, Any]:
        """This parameter as an OpenAPI parameter object."""
        schema: dict[str, Any] = {"type": JSON_TYPES[self.type]}
        if self.type is int and not self.clamp:  # a clamped value is never refused for its size
            schema.update({k: v for k, v in (("minimum", self.minimum), ("maximum", self.maximum))
                           if v is not None})
        if self.choices:
            schema["enum"] = list(self.choices)
        if self.max_length is not None:
            schema["maxLength"] = self.max_length
        if self.required and self.type is str:
            schema["pattern"] = r"\S"  # blank counts as absent
        if self.default not in (None, "") and not self.required:
            schema["default"] = self.default
        if self.repeated:
            schema = {"type": "array", "items": schema}
        out: dict[str, Any] = {"name": self.name, "in": "query", "required": self.required,
                               "schema": schema}
        if self.repeated:
            out.update(style="form", explode=True)
        if self.description:
            out["description"] = self.description
        return out
