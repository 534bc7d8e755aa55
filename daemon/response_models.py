"""Answers as pydantic models: the one source of the response schemas in the OpenAPI document
(daemon/api/openapi.py), of the answer names in GET /api/protocol/schema, and of the check a
daemon in check mode (setting ``check_responses``) makes of every JSON answer it sends.

Each endpoint's answer is a :class:`ResponseModel` subclass in ``daemon/responses/<api
module>.py``. What every answer shares, decided here once:

- a model names the top-level fields an answer holds and their JSON types; a field that is
  not always there has a default (it is not ``required``), one that may be ``null`` says so;
- answers are open (``additionalProperties``): a field added to an answer is not a breaking
  change for a client, and ``warnings`` (daemon/endpoints.with_warnings) joins any answer;
- ``schema``, the wire name of an AMP answer (``amp.context-pack.v1``), is a constant of the
  model, and the endpoint's ``response_schema`` in /api/protocol/schema is read from it;
- types are JSON's, checked strictly on the JSON text that goes out (``1`` is a number, but
  ``true`` is not, and ``"5"`` is not an integer).

In check mode a daemon answers 500 ``response_mismatch`` instead of an answer that differs
from its model (the test suite and ``st run`` run in it); otherwise nothing is checked, so a
person's daemon never refuses to answer over its own document.
"""

from __future__ import annotations

from functools import cache
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from state.errors import MemoryCloudError


class ResponseMismatch(MemoryCloudError):
    """An answer that differs from its endpoint's model (only raised in check mode)."""

    code = "response_mismatch"


class ResponseModel(BaseModel):
    """Base of every answer's model (see the module's docstring). A subclass names its schema
    with ``title`` (``class BootstrapContextAnswer(ResponseModel, title="amp.context-pack.v1")``).
    It holds fields only: what is done with a model is done by this module's functions, so
    that no answer's field (``check``, ``json``) meets a method of the model's."""

    model_config = ConfigDict(strict=True, extra="allow")


def check(model: type[ResponseModel], body: bytes, where: str) -> None:
    """Raise ResponseMismatch naming the first field of ``body`` (JSON text) that differs."""
    try:
        model.model_validate_json(body)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        field = ".".join(str(part) for part in first["loc"]) or "(the answer)"
        raise ResponseMismatch(
            f"the answer of {where} differs from {model.__name__}: {field}: {first['msg']}",
            details={"model": model.__name__, "field": field, "problem": first["type"]},
        ) from None


@cache
def wire_schema(model: type[ResponseModel]) -> str | None:
    """The answer's ``schema`` value when the model fixes one (AMP's names), else None."""
    field = model.model_fields.get("schema_")
    if field is None or field.alias != "schema":
        return None
    values = get_args(field.annotation)
    return values[0] if len(values) == 1 and isinstance(values[0], str) else None


@cache
def json_schema(model: type[ResponseModel]) -> dict[str, Any]:
    """The answer's JSON Schema (for the OpenAPI document's components), made once per model."""
    return model.model_json_schema(by_alias=True, mode="validation")
