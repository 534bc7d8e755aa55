"""Reading a request: its JSON body as an object (which daemon/request_models.py then
validates) and its query parameters through their declarations (:class:`Query`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from daemon.request_models import JSON_TYPES, at_least
from state.errors import InvalidRequest, ValidationFailed


async def read_json_object(request: web.Request) -> dict[str, Any]:
    """The request body as a JSON object, or InvalidRequest saying what is wrong with it."""
    return parse_json_object(await request.read())


def parse_json_object(raw: bytes) -> dict[str, Any]:
    """A request body as a JSON object, or InvalidRequest saying what is wrong with it."""
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
    """One query parameter (or, with ``where="header"``, one request header), declared on its
    endpoint (``Endpoint.query``): the OpenAPI document lists it from here, and the handler
    reads it through :meth:`read`, so the two cannot drift.

    Integers take ASCII digits only (a 422 naming the parameter otherwise); out of bounds they
    are refused (422), or with ``clamp`` brought into bounds, as the MemoryCloud reference does
    for its catalog. A value outside ``choices`` is a 422 listing them."""

    name: str
    type: type = str  # str or int
    required: bool = False
    default: Any = None
    minimum: int | None = None
    maximum: int | None = None
    clamp: bool = False
    choices: tuple[str, ...] = ()
    max_length: int | None = None
    repeated: bool = False  # ?namespace=a&namespace=b: read() gives the list
    description: str = ""
    # Checks a present value instead of the choice check, with the error of the value's own
    # domain (suite visibility is a 400 everywhere it is given, body or query).
    check: Callable[[str], Any] | None = None
    where: str = "query"  # or "header"

    def read(self, request: web.Request) -> Any:
        """The parameter's value (its default when absent or empty), or ValidationFailed."""
        if self.repeated:
            return request.query.getall(self.name, [])
        raw = (request.headers if self.where == "header" else request.query).get(self.name)
        if raw is None or raw == "":
            return self.default
        if self.type is int:
            return self._integer(raw)
        if self.check is not None:
            return self.check(raw)
        if self.choices and raw not in self.choices:
            raise ValidationFailed(
                f"query parameter '{self.name}' must be one of: {', '.join(self.choices)}",
                details={"field": self.name},
            )
        return raw

    def absent(self, request: web.Request) -> bool:
        """Whether the request leaves this parameter out (or empty), before reading it."""
        return not request.query.get(self.name)

    def _integer(self, raw: str) -> int:
        low, high = self.minimum, self.maximum
        if not (raw.isascii() and raw.removeprefix("-").isdigit()):
            bounds = "" if self.clamp or low is None else f" between {low} and {high}"
            raise ValidationFailed(
                f"query parameter '{self.name}' must be an integer{bounds}, got {raw!r}",
                details={"field": self.name},
            )
        value = int(raw)
        if self.clamp:
            return max(low, min(value, high)) if low is not None and high is not None else value
        if low is not None and value < low or high is not None and value > high:
            raise ValidationFailed(
                f"query parameter '{self.name}' must be between {low} and {high}",
                details={"field": self.name},
            )
        return value

    def openapi(self) -> dict[str, Any]:
        """This parameter as an OpenAPI parameter object."""
        schema: dict[str, Any] = {"type": JSON_TYPES[self.type]}
        blank_allowed = not self.required  # an empty value counts as absent (the default)
        if self.type is int and not self.clamp:  # a clamped value is never refused for its size
            schema.update(
                {k: v for k, v in (("minimum", self.minimum), ("maximum", self.maximum)) if v is not None}
            )
        if self.choices:
            schema["enum"] = [*self.choices, *([""] if blank_allowed else [])]
        if self.max_length is not None:
            schema["maxLength"] = self.max_length
        if self.required and self.type is str:
            schema["pattern"] = at_least(1)  # blank counts as absent
        if self.default not in (None, "") and not self.required:
            schema["default"] = self.default
        if self.type is int and blank_allowed:
            schema = {"anyOf": [schema, {"const": ""}]}
        if self.repeated:
            schema = {"type": "array", "items": schema}
        out: dict[str, Any] = {
            "name": self.name,
            "in": self.where,
            "required": self.required,
            "schema": schema,
        }
        if self.repeated:
            out.update(style="form", explode=True)
        if self.description:
            out["description"] = self.description
        return out
