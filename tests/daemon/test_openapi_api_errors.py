"""GET /api/openapi.json: the OpenAPI document of every endpoint, and its refusals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from daemon.api import all_endpoints
from daemon.api.mem1 import MEM1_PATHS
from tests.daemon.helpers import GUARD, Ep, base_world, expect_error, send, world_fixtures

OPENAPI = {"openapi": Ep("GET", "/api/openapi.json")}


built_world, api, world = world_fixtures(base_world)


async def test_the_document_describes_every_endpoint_as_enforced(api, world):
    status, doc = await send(api, world, OPENAPI["openapi"], key=None)
    assert status == 200 and doc["openapi"].startswith("3.1")
    operations = {
        (method.upper(), path): op for path, item in doc["paths"].items() for method, op in item.items()
    }
    assert set(operations) == {(e.method, e.path) for e in all_endpoints()}
    for endpoint in all_endpoints():
        op = operations[(endpoint.method, endpoint.path)]
        assert op["x-auth"] == endpoint.auth
        assert ("security" in op and op["security"] == []) == (endpoint.auth == "none")
        assert op.get("x-owner-only", False) == endpoint.owner_only
        params = op.get("parameters", [])
        assert [p["name"] for p in params if p["in"] == "path"] == re.findall(r"\{(\w+)\}", endpoint.path)
        assert [(p["name"], p["in"], p["required"]) for p in params if p["in"] in ("query", "header")] == [
            (q.name, q.where, q.required) for q in endpoint.query
        ]
        if endpoint.request is not None:
            schema = op["requestBody"]["content"]["application/json"]["schema"]
            assert schema["required"] == [
                name for name, field in endpoint.request.model_fields.items() if field.is_required()
            ]
        envelope = op["responses"]["default"]["content"]["application/json"]["schema"]["$ref"]
        expected = (
            "MemoryStoresError"
            if endpoint.path.startswith("/api/v1/cloud/")
            else "Mem1Error"
            if endpoint.path in MEM1_PATHS
            else "AmpError"
        )
        assert envelope.endswith(expected), (endpoint.path, envelope)


async def test_query_parameters_carry_type_bounds_and_whether_required(api, world):
    status, doc = await send(api, world, OPENAPI["openapi"], key=None)
    search = {p["name"]: p for p in doc["paths"]["/api/agent/search"]["get"]["parameters"]}
    assert search["q"]["required"] is True and search["q"]["schema"]["type"] == "string"
    # an empty ?limit= is the default: the document allows it
    assert search["limit"]["schema"]["anyOf"] == [
        {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
        {"const": ""},
    ]
    assert search["namespace"]["schema"]["type"] == "array"
    catalog = {p["name"]: p for p in doc["paths"]["/api/catalog"]["get"]["parameters"]}
    assert "maximum" not in catalog["limit"]["schema"]["anyOf"][0]  # clamped, never refused for its size
    plans = doc["paths"]["/api/local/startup/plans"]["get"]["parameters"]
    assert "pending_approval" in plans[0]["schema"]["enum"]


def test_handlers_read_query_parameters_only_through_their_declarations():
    """A handler reads its query through an Endpoint.query declaration (daemon/validation.py
    Query.read), so the OpenAPI document cannot miss a parameter the handler reads."""
    api = Path(__file__).resolve().parents[2] / "daemon" / "api"
    readers = [
        path.name for path in api.glob("*.py") if re.search(r"request\.(rel_url\.)?query\.", path.read_text())
    ]
    assert readers == []


@pytest.mark.parametrize("variant", list(GUARD))
async def test_foreign_host_or_origin_is_403(api, world, variant):
    headers, mention = GUARD[variant]
    await expect_error(api, world, OPENAPI["openapi"], 403, headers=headers, mentions=(mention,))


async def test_wrong_method_is_405(api, world):
    await expect_error(
        api, world, OPENAPI["openapi"], 405, method="POST", mentions=("POST", "/api/openapi.json")
    )
