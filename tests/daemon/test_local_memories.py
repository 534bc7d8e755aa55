"""The person's memory browser API: filters, history, diff, revert, redact, delete."""

from __future__ import annotations

from tests.daemon.neighbours import QUERY, only_matches, write_matches_and_neighbours


async def _memory(api) -> tuple[str, str]:
    pack = await api.bootstrap(project_key="demo")
    delta = await api.delta(pack["receipt_id"], summary="部署用 blue-green", delta_type="decision")
    return delta["delta"]["memory_id"], pack["workspace_id"]


async def test_search_with_filters(api):
    memory_id, workspace = await _memory(api)
    await api.post(
        "/add_messages/",
        {"user_id": "u1", "messages": [{"role": "user", "content": "blue-green 也用在 staging"}]},
    )
    found = await api.get("/api/local/memories?q=blue-green", key=api.owner_key)
    namespaces = {item["namespace"] for item in found["items"]}
    assert workspace in namespaces and any(n.startswith("mem1:") for n in namespaces)
    only_ws = await api.get(
        f"/api/local/memories?q=blue-green&namespace={workspace}&kind=decision", key=api.owner_key
    )
    assert [i["id"] for i in only_ws["items"]] == [memory_id]
    assert only_ws["items"][0]["written_by_name"] == "test-agent"
    by_agent = await api.get(f"/api/local/memories?agent={api.agent['id']}", key=api.owner_key)
    assert memory_id in [i["id"] for i in by_agent["items"]]
    await api.get("/api/local/memories?q=x", status=403)  # an agent key: owner only


async def test_a_search_ranks_its_page_as_the_index_does(api):
    """The browser fetches 4 x the page to filter; the extra hits continue the ranking
    (search(page=...)) instead of bringing vector neighbours into the page."""
    workspace = api.store.identities.default_workspace()["id"]
    write_matches_and_neighbours(api.store, workspace)
    found = await api.get(f"/api/local/memories?q={QUERY}&namespace={workspace}&limit=10", key=api.owner_key)
    contents = [item["content"] for item in found["items"]]
    assert len(contents) == 10 and only_matches(contents), contents


async def test_history_diff_revert_redact_delete(api):
    memory_id, _ = await _memory(api)
    with api.store.transaction():
        api.store.memories.update(memory_id, content="部署用 canary")
    history = await api.get(f"/api/local/memories/{memory_id}/history", key=api.owner_key)
    assert [v["operation"] for v in history["versions"]] == ["created", "updated"]
    diff = await api.get(f"/api/local/memories/{memory_id}/diff?from=1&to=2", key=api.owner_key)
    assert "-部署用 blue-green" in diff["diff"] and "+部署用 canary" in diff["diff"]
    reverted = await api.post(f"/api/local/memories/{memory_id}/revert", {"version": 1}, key=api.owner_key)
    assert reverted["version"] == 3 and reverted["content"].startswith("部署用 blue-green")
    redacted = await api.post(f"/api/local/memories/{memory_id}/redact", {"version": 2}, key=api.owner_key)
    assert [v["content"] is None for v in redacted["versions"]] == [False, True, False]
    refused = await api.post(
        f"/api/local/memories/{memory_id}/revert", {"version": 2}, key=api.owner_key, status=400
    )
    assert "no content" in refused["error"]["message"]
    await api.post(f"/api/local/memories/{memory_id}/delete", {}, key=api.owner_key)
    await api.get(f"/api/agent/memories/{memory_id}", status=404)
    history = await api.get(f"/api/local/memories/{memory_id}/history", key=api.owner_key)
    assert history["deleted_at"] and history["versions"][-1]["operation"] == "deleted"


async def test_namespaces_are_listed_by_name(api):
    """Each dialect's namespace with what a person calls it, the raw id beside the name."""
    _, workspace = await _memory(api)
    store = await api.post("/api/v1/cloud/memory_stores", {"name": "shop-web notes"})
    await api.post(
        "/add_messages/",
        {
            "user_id": "alice@example.com",
            "scope_id": "work app",
            "messages": [{"role": "user", "content": "blue-green 也用在 staging"}],
        },
    )
    listed = await api.get("/api/local/namespaces", key=api.owner_key)
    assert listed["schema"] == "memorycloud.namespaces.v1"
    by_id = {n["namespace"]: n for n in listed["namespaces"]}
    assert by_id[workspace] | {"is_default": True} == {
        "namespace": workspace,
        "kind": "workspace",
        "dialect": "amp",
        "name": "Personal",
        "is_default": True,
    }
    assert (by_id[store["id"]]["name"], by_id[store["id"]]["dialect"]) == ("shop-web notes", "memory_stores")
    (mem1,) = [n for n in listed["namespaces"] if n["kind"] == "mem1_scope"]
    # The namespace is percent-encoded; the person sees the user and scope as they were sent.
    assert mem1["namespace"] == "mem1:alice%40example.com:work%20app"
    assert (mem1["user_id"], mem1["scope_id"], mem1["dialect"]) == (
        "alice@example.com",
        "work app",
        "agent_memory1",
    )
    await api.get("/api/local/namespaces", status=403)  # an agent key: owner only


async def test_a_conflict_names_its_namespace(api):
    base = "/api/v1/cloud/memory_stores"
    store = await api.post(base, {"name": "s"})
    memory = await api.post(f"{base}/{store['id']}/memories", {"path": "a.md", "content": "base"})
    await api.post(f"{base}/{store['id']}/memories/{memory['id']}", {"content": "new"})
    await api.post(
        f"{base}/{store['id']}/memories/{memory['id']}",
        {"content": "lost", "content_sha256": memory["content_sha256"]},
        status=409,
    )
    (conflict,) = (await api.get("/api/local/conflicts", key=api.owner_key))["conflicts"]
    assert conflict["namespace"] == store["id"]
