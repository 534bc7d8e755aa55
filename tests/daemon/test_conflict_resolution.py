"""Resolving each kind of conflict: keep current, take incoming, merge; the store changes
accordingly and nothing is lost (every change is a new version)."""

from __future__ import annotations

import pytest

from daemon import keys

BASE = "/api/v1/cloud/memory_stores"


async def _occ_conflict(api) -> tuple[str, str]:
    store = await api.post(BASE, {"name": "s"})
    memory = await api.post(f"{BASE}/{store['id']}/memories", {"path": "a.md", "content": "base"})
    await api.post(f"{BASE}/{store['id']}/memories/{memory['id']}", {"content": "winner"})
    await api.post(
        f"{BASE}/{store['id']}/memories/{memory['id']}",
        {"content": "loser", "content_sha256": memory["content_sha256"]},
        status=409,
    )
    (conflict,) = (await api.get("/api/local/conflicts", key=api.owner_key))["conflicts"]
    return conflict["id"], memory["id"]


async def test_side_by_side_shows_current_incoming_and_base(api):
    conflict_id, _ = await _occ_conflict(api)
    (conflict,) = (await api.get("/api/local/conflicts", key=api.owner_key))["conflicts"]
    assert (conflict["current"], conflict["incoming"], conflict["base"]) == ("winner", "loser", "base")


@pytest.mark.parametrize(
    "action, content, expected",
    [
        ("keep_current", None, "winner"),
        ("take_incoming", None, "loser"),
        ("merge", "winner + loser", "winner + loser"),
    ],
)
async def test_resolving_a_concurrency_loser(api, action, content, expected):
    conflict_id, memory_id = await _occ_conflict(api)
    body = {"action": action, **({"content": content} if content else {})}
    resolved = await api.post(f"/api/local/conflicts/{conflict_id}/resolve", body, key=api.owner_key)
    assert resolved["status"] == "resolved" and resolved["resolution"] == action
    assert api.store.memories.get(memory_id)["content"] == expected
    contents = [v["content"] for v in api.store.memories.versions(memory_id)]
    assert "base" in contents and "winner" in contents  # history keeps every side
    again = await api.post(f"/api/local/conflicts/{conflict_id}/resolve", body, key=api.owner_key, status=409)
    assert "already resolved" in again["error"]["message"]


async def test_taking_a_suite_fact_over_a_workspace_memory(api):
    pack = await api.bootstrap()
    delta = await api.delta(pack["receipt_id"], summary="Deploy to production only on Tuesdays after review")
    await api.post(
        "/api/memories",
        {
            "title": "Ops",
            "summary": "ops",
            "license": "MIT",
            "long_term_markdown": "- Deploy to production only on Fridays after review\n",
        },
    )
    await api.post("/api/agent/open-memories/install", {"slug": "ops"})
    (conflict,) = (await api.get("/api/local/conflicts", key=api.owner_key))["conflicts"]
    assert "Tuesdays" in conflict["current"] and "Fridays" in conflict["incoming"]
    await api.post(
        f"/api/local/conflicts/{conflict['id']}/resolve", {"action": "take_incoming"}, key=api.owner_key
    )
    assert "Fridays" in api.store.memories.get(delta["delta"]["memory_id"])["content"]


async def test_bad_resolutions(api):
    conflict_id, _ = await _occ_conflict(api)
    url = f"/api/local/conflicts/{conflict_id}/resolve"
    await api.post(url, {"action": "merge"}, key=api.owner_key, status=400)
    await api.post(url, {"action": "shrug"}, key=api.owner_key, status=400)
    await api.post(url, {"action": "keep_current"}, status=403)  # agents never decide
    await api.post(
        "/api/local/conflicts/conf_nope/resolve", {"action": "keep_current"}, key=api.owner_key, status=404
    )


async def test_agents_add_list_revoke(api):
    created = await api.post(
        "/api/local/agents", {"name": "cursor-laptop", "runtime": "cursor"}, key=api.owner_key
    )
    key = created["api_key"]
    assert (await api.get("/api/me", key=key))["user"]["handle"] == "cursor-laptop"
    listed = (await api.get("/api/local/agents", key=api.owner_key))["agents"]
    assert "cursor-laptop" in [a["name"] for a in listed]
    await api.post("/api/local/agents", {"name": "cursor-laptop"}, key=api.owner_key, status=409)
    await api.post("/api/local/agents/cursor-laptop/revoke", {}, key=api.owner_key)
    await api.get("/api/me", key=key, status=401)


async def test_a_conflict_that_names_no_memory_is_refused_and_stays_open(api):
    store = api.client.app[keys.STORE]
    with store.transaction():
        conflict = store.conflicts.add_conflict("memory_store_occ", None, None, {"losing_content": "x"})
    body = {"action": "take_incoming"}
    await api.post(f"/api/local/conflicts/{conflict['id']}/resolve", body, key=api.owner_key, status=409)
    assert store.conflicts.conflict(conflict["id"])["status"] == "open"
    kept = await api.post(
        f"/api/local/conflicts/{conflict['id']}/resolve", {"action": "keep_current"}, key=api.owner_key
    )
    assert kept["status"] == "resolved" and kept["subject_id"] is None


async def test_keeping_a_drifted_startup_file_answers_as_documented(api):
    """A startup file's conflict has no memory and no namespace: the answer says null (the
    app runs in check mode here, so an answer that differs from its model is a 500)."""
    store = api.client.app[keys.STORE]
    with store.transaction():
        conflict = store.conflicts.add_conflict("startup_item_drift", "plan_x", "AGENTS.md", {"region": "r"})
    kept = await api.post(
        f"/api/local/conflicts/{conflict['id']}/resolve", {"action": "keep_current"}, key=api.owner_key
    )
    assert (kept["status"], kept["namespace"], kept["current"]) == (
        "resolved",
        None,
        "your edit of AGENTS.md",
    )
