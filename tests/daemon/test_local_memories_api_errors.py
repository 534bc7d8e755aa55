"""Bad input on the owner's memory browser API (daemon/api/local_memories.py), in the
scheme of test_api_errors.py: the LOCAL_MEMORIES table, variations, envelope, nothing stored."""

from __future__ import annotations

import pytest

from tests.daemon import helpers
from tests.daemon.helpers import (
    AUTH_VARIANTS,
    GUARD,
    MALFORMED,
    OWNER,
    Ep,
    base_world,
    fill,
    send,
    world_fixtures,
)

BASE = "/api/local/memories"
LOCAL_MEMORIES = {
    "search": Ep("GET", BASE + "?q=sqlite", scope=OWNER),
    "namespaces": Ep("GET", "/api/local/namespaces", scope=OWNER),
    "history": Ep("GET", BASE + "/{memory}/history", scope=OWNER),
    "diff": Ep("GET", BASE + "/{memory}/diff?from=1&to=1", scope=OWNER),
    "revert": Ep("POST", BASE + "/{memory}/revert", {"version": 1}, OWNER),
    "redact": Ep("POST", BASE + "/{memory}/redact", {"version": 1}, OWNER),
    "delete": Ep("POST", BASE + "/{memory}/delete", {}, OWNER),
    "resolve": Ep("POST", "/api/local/conflicts/{conflict}/resolve", {"action": "keep_current"}, OWNER),
    "agents": Ep("GET", "/api/local/agents", scope=OWNER),
    "agent_add": Ep("POST", "/api/local/agents", {"name": "new-agent", "runtime": "codex"}, OWNER),
    "agent_revoke": Ep("POST", "/api/local/agents/{revoke_target}/revoke", {}, OWNER),
}
POSTS = [n for n, ep in LOCAL_MEMORIES.items() if ep.method == "POST"]


async def build_world(api) -> dict[str, str]:
    """The base world plus an open conflict {conflict}: a Memory Store write that lost."""
    world = await base_world(api)
    store = await api.post("/api/v1/cloud/memory_stores", {"name": "s"})
    memory = await api.post(
        f"/api/v1/cloud/memory_stores/{store['id']}/memories", {"path": "a.md", "content": "base"}
    )
    await api.post(f"/api/v1/cloud/memory_stores/{store['id']}/memories/{memory['id']}", {"content": "new"})
    await api.post(
        f"/api/v1/cloud/memory_stores/{store['id']}/memories/{memory['id']}",
        {"content": "lost", "content_sha256": memory["content_sha256"]},
        status=409,
    )
    (conflict,) = api.store.conflicts.conflicts("open")
    return world | {"conflict": conflict["id"], "revoke_target": "other-agent"}


built_world, api, world = world_fixtures(build_world)


async def expect_error(api, world, name: str, status, **kwargs) -> dict:
    return await helpers.expect_error(api, world, LOCAL_MEMORIES[name], status, **kwargs)


@pytest.mark.parametrize("name", list(LOCAL_MEMORIES))
async def test_declared_request_succeeds(api, world, name):
    status, data = await send(api, world, LOCAL_MEMORIES[name])
    assert status == 200, data


@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", list(LOCAL_MEMORIES))
async def test_missing_or_invalid_key_is_401(api, world, name, variant):
    await expect_error(api, world, name, 401, key=fill(AUTH_VARIANTS[variant], world))


@pytest.mark.parametrize("name", list(LOCAL_MEMORIES))
async def test_agent_keys_are_refused(api, world, name):
    await expect_error(api, world, name, 403, key=api.agent_key, mentions=("only the owner",))


@pytest.mark.parametrize("variant", list(GUARD))
@pytest.mark.parametrize("name", list(LOCAL_MEMORIES))
async def test_foreign_host_or_origin_is_403(api, world, name, variant):
    headers, mention = GUARD[variant]
    await expect_error(api, world, name, 403, headers=headers, mentions=(mention,))


@pytest.mark.parametrize("variant", list(MALFORMED))
@pytest.mark.parametrize("name", POSTS)
async def test_malformed_body_is_400(api, world, name, variant):
    raw, mention = MALFORMED[variant]
    await expect_error(
        api, world, name, 400, raw=raw, headers={"Content-Type": "application/json"}, mentions=(mention,)
    )


@pytest.mark.parametrize(
    "name, body, field",
    [
        ("resolve", {}, "action"),
        ("resolve", {"action": 1}, "action"),
        ("agent_add", {}, "name"),
        ("agent_add", {"name": ""}, "name"),
        ("agent_add", {"name": "x", "scopes": "all"}, "scopes"),
        ("resolve", {"action": "merge", "content": 5}, "content"),
        ("revert", {}, "version"),
        ("revert", {"version": "1"}, "version"),
        ("revert", {"version": 0}, "version"),
        ("redact", {"version": None}, "version"),
        ("redact", {"version": 1.5}, "version"),
    ],
)
async def test_bad_fields_are_422(api, world, name, body, field):
    await expect_error(api, world, name, 422, body=body, mentions=(field,))


@pytest.mark.parametrize(
    "name, path, status, mention",
    [
        ("history", BASE + "/mem_nope/history", 404, "mem_nope"),
        ("diff", BASE + "/{memory}/diff?from=1&to=9", 404, "no version 9"),
        ("diff", BASE + "/{memory}/diff?from=1", 422, "'from' and 'to'"),
        ("diff", BASE + "/{memory}/diff?from=x&to=1", 422, "'from'"),
        ("revert", BASE + "/mem_nope/revert", 404, "mem_nope"),
        ("delete", BASE + "/mem_nope/delete", 404, "mem_nope"),
        ("search", BASE + "?limit=0", 422, "'limit'"),
        ("resolve", "/api/local/conflicts/conf_nope/resolve", 404, "conf_nope"),
        ("agent_revoke", "/api/local/agents/nobody/revoke", 404, "nobody"),
    ],
)
async def test_unknown_ids_and_bad_queries(api, world, name, path, status, mention):
    await expect_error(api, world, name, status, path=path, mentions=(mention,))


async def test_redacting_twice_is_409(api, world):
    status, _ = await send(api, world, LOCAL_MEMORIES["redact"])
    assert status == 200
    await expect_error(api, world, "redact", 409, mentions=("already redacted",))
