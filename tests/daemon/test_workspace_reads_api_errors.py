"""Bad requests to the workspace read endpoints (daemon/api/amp_workspaces.py), same scheme as
test_api_errors.py: each endpoint once (READS) with a request that succeeds, then variations
of it with their status, the amp.error.v1 envelope and nothing stored. The memory query is
declared in test_api_errors.AUTHED; its contract-specific parameters are checked here too.

Statuses as the reference's contract sheet gives them: 401 without a valid key, 403 without
memory:read or for another workspace, 404 for a workspace that does not exist; limits are
clamped, so only a non-integer one is refused (422)."""

from __future__ import annotations

import pytest

from tests.daemon import helpers
from tests.daemon.helpers import AUTH_VARIANTS, GUARD, READ, Ep, base_world, fill, send, world_fixtures

READS = {
    "workspaces": Ep("GET", "/api/me/workspaces"),
    "me_map": Ep("GET", "/api/me/memory-map", scope=READ),
    "map": Ep("GET", "/api/workspaces/{workspace}/memory-map", scope=READ),
    "code": Ep("GET", "/api/projects/{project}/code-memory/context", scope=READ),
}
QUERY = Ep("GET", "/api/workspaces/{workspace}/memory/query", scope=READ)
ALL = {**READS, "query": QUERY}


async def build_world(api) -> dict[str, str]:
    return await base_world(api) | {"project": "demo"}


built_world, api, world = world_fixtures(build_world)


async def expect_error(api, world, name: str, status: int, **kwargs) -> dict:
    return await helpers.expect_error(api, world, ALL[name], status, **kwargs)


@pytest.mark.parametrize("name", list(ALL))
async def test_declared_request_succeeds(api, world, name):
    status, data = await send(api, world, ALL[name])
    assert status == 200, data


@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", list(ALL))
async def test_missing_or_invalid_key_is_401(api, world, name, variant):
    await expect_error(api, world, name, 401, key=fill(AUTH_VARIANTS[variant], world), mentions=("API key",))


@pytest.mark.parametrize("name", [n for n, ep in ALL.items() if ep.scope])
async def test_missing_memory_read_is_403(api, world, name):
    data = await expect_error(api, world, name, 403, key=world["write_key"], mentions=(READ,))
    assert data["detail"]["required_scope"] == READ


async def test_my_workspaces_needs_no_scope(api, world):
    status, data = await send(api, world, READS["workspaces"], key=world["write_key"])
    assert status == 200 and len(data["items"]) == 1


@pytest.mark.parametrize("name", ["map", "query"])
async def test_another_workspace_is_403_and_an_unknown_one_404(api, world, name):
    await expect_error(api, world, name, 403, key=world["foreign_key"], mentions=("{workspace}",))
    path = ALL[name].path.replace("{workspace}", "wsp_nope")
    await expect_error(api, world, name, 404, path=path, mentions=("wsp_nope",))


@pytest.mark.parametrize("variant", list(GUARD))
@pytest.mark.parametrize("name", list(READS))
async def test_foreign_host_or_origin_is_403(api, world, name, variant):
    headers, mention = GUARD[variant]
    await expect_error(api, world, name, 403, headers=headers, mentions=(mention,))


@pytest.mark.parametrize("name", list(READS))
async def test_wrong_method_is_405(api, world, name):
    await expect_error(api, world, name, 405, method="POST", mentions=("POST",))


@pytest.mark.parametrize("name", [n for n in ALL if n != "workspaces"])
@pytest.mark.parametrize("limit", ["abc", "2.5", "1e3", "%E2%91%A0", "--5"])
async def test_a_limit_that_is_no_integer_is_422(api, world, name, limit):
    path = ALL[name].path + f"?limit={limit}"
    data = await expect_error(api, world, name, 422, path=path, mentions=("'limit'",))
    assert data["detail"]["field"] == "limit"


@pytest.mark.parametrize("query", ["", "?q=", "?q=%20%20", "?limit=0", "?limit=51", "?q=sqlite&limit=-1"])
async def test_the_memory_query_takes_what_the_reference_takes(api, world, query):
    """No q lists the newest; a limit out of 1..30 is clamped, not refused."""
    status, data = await send(api, world, QUERY, path=QUERY.path + query)
    assert status == 200 and 1 <= len(data["items"]) <= 30, data
