"""Answers as models (daemon/response_models.py, daemon/responses/): every JSON answer has one,
the OpenAPI document and /api/protocol/schema are made from them, and a daemon in check mode
refuses to send an answer that differs from its model.

The models hold in every test that starts an app or a daemon (tests/conftest.CHECKED and
tests/e2e/conftest.checked_answers), and schemathesis checks them on its own requests
(tests/reliability/test_schemathesis.py); these tests check the machinery itself."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from aiohttp import web
from pydantic import Field

from daemon.api import all_endpoints
from daemon.app import create_app
from daemon.endpoints import Call, Endpoint, wrap
from daemon.response_models import ResponseModel, json_schema, wire_schema
from state.config import Settings
from tests.conftest import CHECKED

# The answers that are not JSON objects, so have no model: Markdown, a zip archive, and MCP's
# transport (JSON-RPC and event streams, made by the MCP SDK).
NOT_JSON = {
    ("GET", "/agent/start"),
    ("GET", "/api/agent/skills/{skill_id}/skill.md"),
    ("GET", "/api/catalog/{slug}/download"),
    ("POST", "/mcp"),
    ("GET", "/mcp"),
    ("DELETE", "/mcp"),
}


def every_endpoint() -> list[Endpoint]:
    seen: dict[tuple[str, str], Endpoint] = {}
    for role in ("local", "cloud"):
        for endpoint in all_endpoints(role, True):
            seen.setdefault((endpoint.method, endpoint.path), endpoint)
    return list(seen.values())


def test_every_json_answer_has_a_model():
    without = {(e.method, e.path) for e in every_endpoint() if e.response is None}
    assert without == NOT_JSON


def test_an_answer_s_schema_name_is_the_constant_of_its_model():
    for endpoint in every_endpoint():
        if endpoint.response is None:
            continue
        schema = json_schema(endpoint.response)
        const = schema["properties"].get("schema", {}).get("const")
        assert endpoint.response_schema == const, (endpoint.path, const)
    # The one name that was wrong while it was written by hand: the answer says -detail.
    (installed,) = [e for e in every_endpoint() if e.path.startswith("/api/agent/installed-open-memories/")]
    assert installed.response_schema == "amp.installed-open-memory-detail.v1"


class _Named(ResponseModel, title="t.one.v1"):
    schema_: Literal["t.one.v1"] = Field(alias="schema")


class _Either(ResponseModel, title="t.either"):
    schema_: Literal["t.a.v1", "t.b.v1"] = Field(alias="schema")


def test_wire_schema_is_a_single_constant_or_none():
    assert wire_schema(_Named) == "t.one.v1"
    assert wire_schema(_Either) is None


async def test_the_document_refers_every_answer_to_its_model_s_schema(aiohttp_client, paths):
    client = await aiohttp_client(create_app(CHECKED, paths))
    doc = await (await client.get("/api/openapi.json")).json()
    components = doc["components"]["schemas"]
    for endpoint in all_endpoints():
        ok = doc["paths"][endpoint.path][endpoint.method.lower()]["responses"]["200"]
        if endpoint.response is None:
            assert "content" not in ok
            continue
        ref = ok["content"]["application/json"]["schema"]["$ref"]
        assert ref == f"#/components/schemas/{endpoint.response.__name__}"
        assert components[endpoint.response.__name__] == json_schema(endpoint.response)
    protocol = await (await client.get("/api/protocol/schema")).json()
    names = {(e["method"], e["path"]): e.get("response_schema") for e in protocol["endpoints"]}
    assert names == {(e.method, e.path): e.response_schema for e in all_endpoints()}


class _Strict(ResponseModel, title="t.strict.v1"):
    schema_: Literal["t.strict.v1"] = Field(alias="schema")
    count: int
    note: str | None = None


async def _serve(aiohttp_client, paths, settings: Settings, answer: dict[str, Any]):
    async def planted(request: web.Request, call: Call) -> dict[str, Any]:
        return answer

    app = create_app(settings, paths)
    endpoint = Endpoint("GET", "/planted", planted, "a planted endpoint", auth="none", response=_Strict)
    app.router.add_route("GET", "/planted", wrap(endpoint))
    return await aiohttp_client(app)


@pytest.mark.parametrize(
    "answer, field",
    [
        ({"schema": "t.strict.v1"}, "count"),  # a required field left out
        ({"schema": "t.strict.v1", "count": "3"}, "count"),  # "3" is not an integer
        ({"schema": "t.strict.v1", "count": True}, "count"),  # nor is true
        ({"schema": "t.other.v1", "count": 3}, "schema"),  # another answer's name
        ({"schema": "t.strict.v1", "count": 3, "note": 5}, "note"),
    ],
)
async def test_check_mode_answers_500_naming_the_field_that_differs(aiohttp_client, paths, answer, field):
    client = await _serve(aiohttp_client, paths, CHECKED, answer)
    response = await client.get("/planted")
    assert response.status == 500
    body = await response.json()
    assert body["error"]["type"] == "response_mismatch"
    assert body["detail"]["field"] == field and body["detail"]["model"] == "_Strict"
    assert f"GET /planted differs from _Strict: {field}" in body["error"]["message"]


async def test_check_mode_lets_a_matching_answer_through_with_its_extras(aiohttp_client, paths):
    answer = {"schema": "t.strict.v1", "count": 3, "added_later": [1], "note": None}
    client = await _serve(aiohttp_client, paths, CHECKED, answer)
    response = await client.get("/planted")
    assert response.status == 200 and await response.json() == answer


async def test_without_check_mode_nothing_is_checked(aiohttp_client, paths):
    client = await _serve(aiohttp_client, paths, Settings(), {"schema": "t.strict.v1"})
    response = await client.get("/planted")
    assert response.status == 200 and await response.json() == {"schema": "t.strict.v1"}


def _json_types(prop: dict[str, Any]) -> set[str]:
    if "anyOf" in prop:
        return set().union(*(_json_types(p) for p in prop["anyOf"]))
    if "type" in prop:
        return {prop["type"]}
    return {"string"} if isinstance(prop.get("const"), str) else {"any"}


def test_the_models_hold_every_top_level_key_of_the_reference_contract():
    """The reference server's answers (tests/contract's fact sheet, recorded from its own
    calls): every top-level key it answers with is a field of our model, of the same JSON
    type, on every endpoint both serve."""
    import json
    from pathlib import Path

    sheet = json.loads(
        (Path(__file__).parents[1] / "contract/memorycloud-reference-contract.json").read_text()
    )
    ours = {(e.method, e.path): e for e in every_endpoint()}
    compared = 0
    for entry in sheet["endpoints"]:
        keys = (entry.get("response") or {}).get("top_level_keys") or {}
        for path in (entry["path"], *entry.get("aliases", [])):
            endpoint = ours.get((entry["method"], path))
            if endpoint is None or endpoint.response is None or not keys:
                continue
            properties = json_schema(endpoint.response)["properties"]
            for key, kind in keys.items():
                assert key in properties, (entry["method"], path, key)
                types = _json_types(properties[key])
                expected = set(kind.split("|")) | ({"number"} if "integer" in kind else set())
                assert "any" in types or types & expected, (entry["method"], path, key, kind, types)
            compared += 1
    assert compared >= 50
