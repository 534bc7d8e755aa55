"""The daemon against the MemoryCloud reference server's wire contract, endpoint by endpoint.

Data-driven from the contract sheet (tests/contract/memorycloud-reference-contract.json):

* every endpoint of the sheet is either served or listed, with its reason, in
  daemon/api/reference_differences.py (and the README);
* every request field the sheet names is one the daemon reads (a renamed or lost field fails);
* one test per endpoint and documented status: the sheet's condition is brought about and the
  daemon must answer that status; a success also has the sheet's ``schema`` string and every
  top-level key with its JSON type, and names no ignored field. A status the daemon
  deliberately answers otherwise is listed in reference_differences.STATUS_DIFFERENCES.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from daemon.api import all_endpoints
from daemon.api.reference_differences import NOT_SERVED, STATUS_DIFFERENCES, absent_keys
from tests.contract import sheet
from tests.contract.cases import CONDITIONS, SUCCESS, Request, default_success
from tests.contract.world import World

README = Path(__file__).resolve().parents[2] / "README.md"
SERVED = {(e.method, e.path): e for e in all_endpoints()}
ENTRIES = sheet.endpoints()
SERVED_ENTRIES = [e for e in ENTRIES if (e["method"], e["path"]) in SERVED]
CONDITION_CASES = [(e["id"], status) for e in SERVED_ENTRIES for status in e["statuses"]]
UNKNOWN_ID = "contract-unknown-0000000000000000"


def _ours(entry: dict[str, Any]):
    return SERVED[(entry["method"], entry["path"])]


# -- the sheet and the list of differences ----------------------------------------------------

def test_sheet_is_the_shared_one():
    if not sheet.SHARED_COPY.exists():
        pytest.skip("shared/contracts is not beside this checkout")
    assert sheet.SHEET_PATH.read_bytes() == sheet.SHARED_COPY.read_bytes()


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["id"])
def test_endpoint_is_served_or_listed_as_not_served(entry):
    route = (entry["method"], entry["path"])
    assert (route in SERVED) != (route in NOT_SERVED), (
        f"{route} must be served, or listed with its reason in reference_differences.NOT_SERVED"
        " (and not both)")


def test_readme_lists_every_endpoint_not_served():
    text = README.read_text(encoding="utf-8")
    missing = [f"{m} {p}" for m, p in NOT_SERVED if f"`{m} {p}`" not in text]
    assert not missing, f"the README's list of what is not served lacks {missing}"


def test_every_listed_difference_names_a_sheet_status():
    known = {(e["id"], s) for e in ENTRIES for s in e["statuses"]}
    assert set(STATUS_DIFFERENCES) <= known
    assert all((m, p) in {(e["method"], e["path"]) for e in ENTRIES} for m, p in NOT_SERVED)


@pytest.mark.parametrize("entry", [e for e in SERVED_ENTRIES if sheet.request_fields(e)],
                         ids=lambda e: e["id"])
def test_every_request_field_of_the_sheet_is_read(entry):
    ours = _ours(entry)
    assert ours.request is not None, "the sheet documents a JSON body; the daemon reads none"
    unknown = ours.request.ignored_fields({f["name"]: None for f in sheet.request_fields(entry)})
    assert not unknown, f"fields of the reference the daemon would ignore: {unknown}"


# -- one test per endpoint and status ----------------------------------------------------------

@pytest.fixture
def world(api, tmp_path) -> World:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# contract repo\n")
    return World(api, repo)


async def send(world: World, request: Request) -> tuple[int, Any, aiohttp.ClientResponse]:
    key = await world.key(request.key)
    headers = {**request.headers, **({"Authorization": f"Bearer {key}"} if key else {})}
    kwargs: dict[str, Any] = {"headers": headers, "params": request.query}
    if request.multipart is not None:
        form = aiohttp.FormData()
        for name, data in request.multipart.items():
            form.add_field(name, data, filename=f"{name}.zip", content_type="application/zip")
        kwargs["data"] = form
    elif request.data is not None:
        kwargs["data"] = request.data
    elif request.json is not None:
        kwargs["json"] = request.json
    response = await world.api.client.request(request.method, request.path, **kwargs)
    raw = await response.read()
    try:
        data = json.loads(raw)
    except ValueError:
        data = raw
    return response.status, data, response


async def success_request(world: World, entry: dict[str, Any]) -> Request:
    return await SUCCESS.get(entry["id"], default_success)(world, entry)


def _too_long(entry: dict[str, Any], body: dict[str, Any]) -> dict[str, Any] | None:
    """The body with one field outside the sheet's limits, or without a required one."""
    fields = sheet.request_fields(entry)
    for spec in fields:
        if spec.get("required"):
            return {k: v for k, v in body.items() if k != spec["name"]}
    for spec in fields:
        if spec["type"] == "string" and spec.get("max_length"):
            return {**body, spec["name"]: "x" * (spec["max_length"] + 1)}
        if spec["type"] == "integer" and spec.get("max") is not None:
            return {**body, spec["name"]: spec["max"] + 1}
    for spec in fields:
        if spec["type"] in ("object", "array<string>", "array<object>", "integer", "boolean"):
            return {**body, spec["name"]: "not of its type"}
    for spec in fields:
        if spec["type"] == "string":
            return {**body, spec["name"]: 12345}
    return None


async def derived_request(world: World, entry: dict[str, Any], status: str) -> Request | None:
    """A request for the sheet's condition of ``status``, derived from the success request."""
    if (entry["id"], status) in CONDITIONS:
        return await CONDITIONS[(entry["id"], status)](world, entry)
    base = await success_request(world, entry)
    if status == "401":
        return replace(base, key="none")
    if status == "403" and _ours(entry).scope:
        return replace(base, key="scopeless_key")
    if status == "404" and "{" in entry["path"]:
        params = {p["name"]: UNKNOWN_ID for p in entry.get("path_params", [])}
        return replace(base, path=entry["path"].format(**params))
    if status == "422" and base.json is not None:
        broken = _too_long(entry, base.json)
        return None if broken is None else replace(base, json=broken)
    return None


@pytest.mark.parametrize("endpoint_id,status", CONDITION_CASES,
                         ids=[f"{e}-{s}" for e, s in CONDITION_CASES])
async def test_condition_answers_the_reference_status(world, endpoint_id, status):
    entry = sheet.endpoint(endpoint_id)
    if (endpoint_id, status) in STATUS_DIFFERENCES:
        pytest.skip(f"deliberate difference: {STATUS_DIFFERENCES[(endpoint_id, status)]}")
    if status == "200":
        request = await success_request(world, entry)
    else:
        request = await derived_request(world, entry, status)
        assert request is not None, (f"no case brings about {endpoint_id} {status}"
                                     f" ({entry['statuses'][status]}): add one to cases.py")
    code, data, response = await send(world, request)
    assert code == int(status), (entry["statuses"][status], data)
    if status != "200":
        return
    expected = entry["response"]
    if expected.get("content_type", "application/json") != "application/json":
        assert response.content_type == expected["content_type"]
        return
    problems = sheet.response_problems(entry, data, null_keys=absent_keys(endpoint_id))
    assert not problems, problems
    assert not data.get("warnings"), f"a documented field was ignored: {data['warnings']}"


KEYLESS = [e for e in SERVED_ENTRIES if e["auth"] in ("none", "optional")]


@pytest.mark.parametrize("entry", KEYLESS, ids=lambda e: e["id"])
async def test_endpoint_the_reference_serves_without_a_key_works_without_one(world, entry):
    """A client of the reference calls these with no Authorization header at all."""
    request = replace(await success_request(world, entry), key="none")
    code, data, _ = await send(world, request)
    assert 200 <= code < 300, (entry["auth"], data)
