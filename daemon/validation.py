"""Declarative request schemas: one description drives validation and /api/protocol/schema.

Deliberately small instead of a dependency: AMP requests are flat JSON objects with a
handful of typed fields, and the messages must name the field and what was wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from state.errors import InvalidRequest, MemoryCloudError

_TYPE_NAMES = {str: "string", int: "integer", bool: "boolean", list: "array", dict: "object",
               float: "number", type(None): "null"}


class ValidationFailed(MemoryCloudError):
    """Fields are missing or of the wrong type (HTTP 422, like FastAPI-based AMP servers)."""

    status = 422
    code = "validation_error"


@dataclass(frozen=True)
class Field:
    """One JSON field: type, whether required, default and bounds."""

    name: str
    type: type
    required: bool = False
    default: Any = None
    max_length: int | None = None
    min_length: int = 0
    minimum: int | None = None
    maximum: int | None = None
    items: type | None = None
    max_items: int | None = None
    description: str = ""

    def check(self, value: Any) -> Any:
        """Return the validated value or raise ValidationFailed naming this field."""
        expected = _TYPE_NAMES[self.type]
        ok = isinstance(value, self.type) and not (self.type is int and isinstance(value, bool))
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            ok, value = True, float(value)
        if not ok:
            raise self._fail(f"must be {'an' if expected[0] in 'aeiou' else 'a'} {expected},"
                             f" got {_TYPE_NAMES.get(type(value), type(value).__name__)}")
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
                        raise self._fail(f"item {index} must be a {_TYPE_NAMES[self.items]}")
                    if self.items is str and self.max_length and len(item) > self.max_length:
                        raise self._fail(f"item {index} must be at most {self.max_length} characters")
        return value

    def _fail(self, problem: str) -> ValidationFailed:
        return ValidationFailed(f"field '{self.name}' {problem}",
                                details={"field": self.name, "problem": problem})

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": _TYPE_NAMES[self.type],
                               "required": self.required}
        if self.default is not None:
            out["default"] = self.default
        for key in ("max_length", "minimum", "maximum", "max_items"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.items is not None:
            out["items"] = _TYPE_NAMES[self.items]
        if self.description:
            out["description"] = self.description
        return out


@dataclass(frozen=True)
class RequestSchema:
    """The JSON body of one endpoint. Unknown fields are ignored (forward compatibility)."""

    name: str
    fields: tuple[Field, ...] = field(default_factory=tuple)

    def parse(self, body: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        missing = [f.name for f in self.fields if f.required and body.get(f.name) is None]
        if missing:
            raise ValidationFailed(
                f"missing required field{'s' if len(missing) > 1 else ''}: {', '.join(missing)}",
                details={"missing_fields": missing},
            )
        for spec in self.fields:
            value = body.get(spec.name)
            if value is None:
                default = spec.default
                result[spec.name] = default.copy() if isinstance(default, (list, dict)) else default
            else:
                result[spec.name] = spec.check(value)
        return result

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
        name = "null" if data is None else _TYPE_NAMES.get(type(data), type(data).__name__)
        raise InvalidRequest(f"request body must be a JSON object, got {name}")
    # A \ud800-style escape decodes to a lone surrogate, which is not valid Unicode and
    # cannot be stored; refuse it here instead of failing deep inside SQLite.
    if b"\\ud" in raw.lower():
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidRequest("request body contains invalid Unicode (a lone surrogate escape)") from None
    return data


def query_int(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter within bounds (ASCII digits only), or 422 naming it."""
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.lstrip("-").isdigit()):
        raise ValidationFailed(f"query parameter '{name}' must be an integer between {low} and"
                               f" {high}, got {raw!r}", details={"field": name})
    value = int(raw)
    if not low <= value <= high:
        raise ValidationFailed(f"query parameter '{name}' must be between {low} and {high}",
                               details={"field": name})
    return value


def query_choice(request: web.Request, name: str, allowed: tuple[str, ...]) -> str | None:
    """An optional query parameter from a fixed set, or 422 listing the set."""
    value = request.query.get(name) or None
    if value is not None and value not in allowed:
        raise ValidationFailed(f"query parameter '{name}' must be one of: {', '.join(allowed)}",
                               details={"field": name})
    return value
