"""Isolation holds across dialects: an agent of another workspace reaches none of our AMP
memory through any dialect (AMP, cross-dialect search, Memory Stores, agent-memory1.0, MCP),
and agent-memory1.0's user_id + scope_id keep users apart in every operation, the
scope-wide delete included."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from state.identities import AGENT_SCOPES, SYNC_SCOPE
from state.paths import Paths
from tests.conftest import cloud_settings, start_api

CANARY = "isolationcanaryzx"
# What must not be shown (queries may echo the canary itself).
OURS = f"our {CANARY} decision"
GARDEN = "in the garden"
STORES = "/api/v1/cloud/memory_stores"


async def mcp(api, key: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    init = await api.client.post(
        "/mcp",
        headers=api.auth(key),
        json={
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    )
    session = init.headers["Mcp-Session-Id"]
    answer = await api.client.post(
        "/mcp",
        headers={**api.auth(key), "Mcp-Session-Id": session},
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
    )
    return await answer.json()


async def refused(api, key: str, method: str, path: str, body: Any = None) -> str:
    """The status of a request by another workspace's ``key``, whose answer holds nothing of ours."""
    response = await api.client.request(method, path, json=body, headers=api.auth(key))
    text = await response.text()
    assert OURS not in text, (path, text[:200])
    return f"{response.status}"


async def amp_attempts(api, key: str, memory_id: str, workspace: str) -> dict[str, str]:
    """Another workspace's key at our memory through AMP's reads, searches and packs."""
    return {
        "amp memory": await refused(api, key, "GET", f"/api/agent/memories/{memory_id}"),
        "amp query": await refused(api, key, "GET", f"/api/workspaces/{workspace}/memory/query?q={CANARY}"),
        "search our namespace": await refused(
            api, key, "GET", f"/api/agent/search?q={CANARY}&namespace={workspace}"
        ),
        "search everywhere": await refused(api, key, "GET", f"/api/agent/search?q={CANARY}"),
        "bootstrap ours": await refused(
            api, key, "POST", "/api/agent/bootstrap/context", {"workspace_id": workspace}
        ),
        "own pack": await refused(api, key, "POST", "/api/agent/bootstrap/context", {"project_key": "ours"}),
        "local browser": await refused(api, key, "GET", f"/api/local/memories?q={CANARY}"),
    }


async def test_another_workspace_reaches_nothing_of_ours_through_any_dialect(api):
    pack = await api.bootstrap(project_key="ours")
    memory_id = (await api.delta(pack["receipt_id"], summary=f"our {CANARY} decision"))["delta"]["memory_id"]
    workspace = pack["workspace_id"]
    with api.store.transaction():
        foreign = api.store.identities.create_workspace("Foreign", owner_id=None)
        _, key = api.store.identities.create_agent("foreigner", "codex", workspace_id=foreign["id"])
    store_id = (await api.post(STORES, {"name": "theirs"}, key=key))["id"]

    attempts = await amp_attempts(api, key, memory_id, workspace)
    attempts |= {
        "stores read": await refused(api, key, "GET", f"{STORES}/{store_id}/memories/{memory_id}"),
        "stores update": await refused(
            api, key, "POST", f"{STORES}/{store_id}/memories/{memory_id}", {"content": "hijacked"}
        ),
        "stores delete": await refused(api, key, "DELETE", f"{STORES}/{store_id}/memories/{memory_id}"),
        "mem1 update": await refused(
            api, key, "POST", "/update_mem_by_id/", {"mem_id": memory_id, "memory": "hijacked"}
        ),
        "mem1 delete": await refused(api, key, "POST", "/delete_mem_by_id/", {"mem_id": memory_id}),
        "mem1 batch": await refused(api, key, "POST", "/batch_delete_mem/", {"mem_ids": [memory_id]}),
    }
    assert attempts["amp memory"] == attempts["stores read"] == "404"
    assert attempts["amp query"] == attempts["search our namespace"] == attempts["bootstrap ours"] == "403"
    assert attempts["local browser"] == "403"
    got = await mcp(api, key, "tools/call", {"name": "get_memory", "arguments": {"memory_id": memory_id}})
    assert OURS not in str(got) and (got.get("error") or got["result"].get("isError")), got
    found = await mcp(api, key, "tools/call", {"name": "search", "arguments": {"query": CANARY}})
    assert OURS not in str(found)
    # Nothing was changed on the way, and our agent still has its memory.
    ours = await api.get(f"/api/agent/memories/{memory_id}")
    assert ours["memory"]["content"] == OURS and ours["memory"]["version"] == 1


async def test_mem1_users_and_scopes_stay_apart_in_every_operation(api):
    alice = {"user_id": "alice", "scope_id": "edp_agent"}
    for who in (alice, {"user_id": "alice", "scope_id": "other"}):
        await api.post(
            "/add_messages/",
            {
                **who,
                "session_id": "s",
                "messages": [{"role": "user", "content": f"I keep {CANARY} {GARDEN}"}],
                "mem_variables": [{"name": "secret", "default": f"{GARDEN} value"}],
            },
        )
    bob = {"user_id": "bob", "scope_id": "edp_agent"}
    alice_other = {"user_id": "alice", "scope_id": "else"}
    for who in (bob, alice_other):
        for path, body in (
            ("/search_memory/", {"query": CANARY, "threshold": 0.0}),
            ("/search_user_history_summary/", {"query": CANARY, "threshold": 0.0}),
            ("/get_user_mem_by_page/", {"page_size": 100}),
            ("/get_user_mem_by_page_with_total/", {"page_size": 100}),
            ("/get_variables/", {}),
        ):
            answer = await api.post(path, {**who, **body})
            assert GARDEN not in str(answer), (who, path, answer)
        await api.post("/delete_mem_by_scope/", {**who})
    # Bob's scope-wide delete in alice's scope took nothing of hers.
    left = await api.post("/get_user_mem_by_page/", {**alice, "page_size": 100})
    assert any(GARDEN in item["content"] for item in left["results"]), left


@pytest.mark.both_engines
async def test_on_a_team_server_another_workspace_reaches_nothing_of_ours(
    request: pytest.FixtureRequest, aiohttp_client, paths: Paths, engine: str
) -> None:
    """The team server (the cloud role: AMP and the sync extension), on SQLite and on
    PostgreSQL: a daemon or agent of another workspace reads, finds, pulls, edits and redacts
    nothing of ours, and its own writes stay in its workspace."""
    api = await start_api(aiohttp_client, paths, settings=cloud_settings(request, check_responses=True))
    store = api.store
    with store.transaction():
        _, ours_sync = store.identities.create_agent(
            "our-laptop", "memorycloud_companion", scopes=[*AGENT_SCOPES, SYNC_SCOPE]
        )
        foreign = store.identities.create_workspace("Foreign", owner_id=None)
        _, key = store.identities.create_agent(
            "foreigner",
            "memorycloud_companion",
            scopes=[*AGENT_SCOPES, SYNC_SCOPE],
            workspace_id=foreign["id"],
        )
    pack = await api.bootstrap(project_key="ours")
    memory_id = (await api.delta(pack["receipt_id"], summary=OURS))["delta"]["memory_id"]
    workspace = pack["workspace_id"]
    version = (await api.get(f"/api/agent/memories/{memory_id}"))["memory"]["version"]
    content_sha = hashlib.sha256(OURS.encode()).hexdigest()

    attempts = await amp_attempts(api, key, memory_id, workspace)
    attempts |= {
        "feed": await refused(api, key, "GET", "/api/sync/changes?cursor=0"),
        "feed waiting": await refused(api, key, "GET", "/api/sync/changes?cursor=0&wait=1"),
        "sync update": await refused(
            api,
            key,
            "POST",
            f"/api/sync/records/{memory_id}",
            {"operation": "update", "base_version": version, "content": "hijacked"},
        ),
        "sync delete": await refused(
            api,
            key,
            "POST",
            f"/api/sync/records/{memory_id}",
            {"operation": "delete", "base_version": version},
        ),
        "sync redact": await refused(
            api, key, "POST", f"/api/sync/records/{memory_id}/redact", {"content_sha256": content_sha}
        ),
    }
    assert attempts["amp memory"] == attempts["sync update"] == attempts["sync redact"] == "404", attempts
    assert attempts["amp query"] == attempts["search our namespace"] == attempts["bootstrap ours"] == "403"
    assert attempts["local browser"] == "403"
    # Its own write lands in its own workspace: not in our feed, not in our search.
    await api.post(
        "/api/sync/records",
        {"origin_memory_id": "mem_theirs", "kind": "fact", "content": f"their {CANARY} plan"},
        key=key,
    )
    ours_feed = await api.get("/api/sync/changes?cursor=0", key=ours_sync)
    assert [c["content"] for c in ours_feed["changes"]] == [OURS]
    found = await api.get(f"/api/agent/search?q={CANARY}")
    assert f"their {CANARY} plan" not in str(found) and OURS in str(found)
    # Nothing was changed on the way.
    ours = await api.get(f"/api/agent/memories/{memory_id}")
    assert ours["memory"]["content"] == OURS and ours["memory"]["version"] == version
