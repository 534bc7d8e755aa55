"""Request bodies as pydantic models (daemon/request_models.py): what the document says is
what the server does, for the cases an outside fuzzer (schemathesis) found apart."""

from __future__ import annotations

import json
from typing import get_args

import pytest

from daemon.api import all_endpoints
from daemon.api.amp_adaptive import MemoryRoute, MemoryType
from daemon.api.amp_context import BootstrapContext, MemoryDelta
from daemon.api.mem1 import Mem1Search
from daemon.api.suites import MemorySuiteCreate
from daemon.runtime.memory_forms import FORMS_BY_TYPE
from state.errors import ValidationFailed

SUITE = {"title": "Ops Handbook", "summary": "How we ship"}


def refused(model, body) -> dict:
    with pytest.raises(ValidationFailed) as caught:
        model.parse_body(body)
    return caught.value.details


def test_null_is_absent_and_the_document_says_so():
    parsed = BootstrapContext.parse_body({"reason": None, "workspace_id": None})
    assert parsed["reason"] == "agent_startup" and parsed["workspace_id"] is None
    reason = BootstrapContext.json_schema()["properties"]["reason"]
    assert {"type": "null"} in reason["anyOf"] and reason["default"] == "agent_startup"
    # a required field sent as null is missing, and the document does not allow null there
    assert refused(MemoryDelta, {"summary": None}) == {"missing_fields": ["summary"]}
    assert MemoryDelta.json_schema()["properties"]["summary"]["type"] == "string"


@pytest.mark.parametrize(
    "field,limit", [("license", 80), ("dreams_md", 200_000), ("dreams_markdown", 200_000)]
)
def test_every_documented_maximum_length_is_enforced(field, limit):
    assert MemorySuiteCreate.parse_body({**SUITE, field: "x" * limit})
    details = refused(MemorySuiteCreate, {**SUITE, field: "x" * (limit + 1)})
    assert details["field"] == field.replace("markdown", "md")
    name = field.replace("markdown", "md")
    option = MemorySuiteCreate.json_schema()["properties"][name]["anyOf"][0]
    assert option["maxLength"] == limit


def test_types_are_json_schemas_integers_strings_and_booleans():
    assert BootstrapContext.parse_body({"max_items": 5.0})["max_items"] == 5
    for value in ("5", True, 2.5):
        assert refused(BootstrapContext, {"max_items": value})["field"] == "max_items"
    assert Mem1Search.parse_body({"query": "q", "threshold": 1})["threshold"] == 1.0
    assert refused(MemoryDelta, {"summary": "   "}) == {"field": "summary", "problem": "must not be empty"}


def test_ignored_fields_are_named_and_aliases_are_known():
    assert MemorySuiteCreate.ignored_fields({"dreams_markdown": "", "dreams_mdx": ""}) == ["dreams_mdx"]
    details = refused(MemorySuiteCreate, {**SUITE, "dreams_md": "a", "dreams_markdown": "b"})
    assert details["conflicting"] == ["dreams_md", "dreams_markdown"]


def test_every_body_schema_is_plain_json_schema():
    """Bounds are JSON Schema's minimum/maximum (a fuzzer tests them), never pydantic's own names."""
    for endpoint in all_endpoints():
        if endpoint.request is not None:
            text = json.dumps(endpoint.request.json_schema())
            assert '"ge"' not in text and '"le"' not in text, endpoint.path


def test_a_value_of_a_fixed_list_is_documented_and_refused_by_name():
    # The router's memory_type is one of the memory forms, listed in the document.
    assert get_args(MemoryType) == tuple(FORMS_BY_TYPE)
    assert MemoryRoute.json_schema()["properties"]["memory_type"]["anyOf"][0]["enum"] == list(FORMS_BY_TYPE)
    route = {"task": "ship it", "what_i_remember": "w"}
    details = refused(MemoryRoute, {**route, "memory_type": "bogus"})
    assert details == {"field": "memory_type", "problem": f"must be one of: {', '.join(FORMS_BY_TYPE)}"}
    assert MemoryRoute.parse_body({**route, "memory_type": "code_memory"})["memory_type"] == "code_memory"
    (described,) = [f for f in MemoryRoute.describe()["fields"] if f["name"] == "memory_type"]
    assert described["choices"] == list(FORMS_BY_TYPE)  # GET /api/protocol/schema lists them too
