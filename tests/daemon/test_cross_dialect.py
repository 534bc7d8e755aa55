"""One store, many dialects: what a Memory Stores client and an agent-memory1.0 client write
is found by AMP search, each in its own namespace only."""

from __future__ import annotations

from urllib.parse import quote


async def test_store_document_and_mem1_message_in_amp_search(api):
    store = await api.post("/api/v1/cloud/memory_stores", {"name": "alpha"})
    await api.post(f"/api/v1/cloud/memory_stores/{store['id']}/memories",
                   {"path": "decisions/queue.md", "content": "We chose RabbitMQ for the 订单 queue"})
    await api.post("/add_messages/", {"user_id": "alice", "scope_id": "edp_agent", "messages": [
        {"role": "user", "content": "The 订单 queue backs up every Monday"}]})
    mem1_ns = "mem1:alice:edp_agent"

    both = await api.get(f"/api/agent/search?q={quote('订单 queue')}&namespace={store['id']}"
                         f"&namespace={quote(mem1_ns)}")
    by_ns = {item["namespace"]: item for item in both["items"]}
    assert by_ns[store["id"]]["dialect"] == "memory_stores"
    assert by_ns[store["id"]]["path"] == "decisions/queue.md"
    assert by_ns[mem1_ns]["dialect"] == "agent_memory1"

    only_store = await api.get(f"/api/agent/search?q={quote('订单 queue')}&namespace={store['id']}")
    assert {i["namespace"] for i in only_store["items"]} == {store["id"]}
    only_mem1 = await api.get(f"/api/agent/search?q={quote('订单 queue')}&namespace={quote(mem1_ns)}")
    assert {i["namespace"] for i in only_mem1["items"]} == {mem1_ns}
    workspace = await api.get(f"/api/agent/search?q={quote('订单 queue')}")
    assert workspace["items"] == []  # neither lands in the agent's AMP workspace
    detail = await api.get(f"/api/agent/memories/{by_ns[store['id']]['id']}")
    assert detail["memory"]["content"].startswith("We chose RabbitMQ")
    pack = await api.bootstrap()
    assert "RabbitMQ" not in pack["summary_markdown"]


async def test_other_workspaces_stay_private(api):
    with api.store.transaction():
        other = api.store.identities.create_workspace("Other", owner_id=None)
    refused = await api.get(f"/api/agent/search?q=x&namespace={other['id']}", status=403)
    assert other["id"] in refused["error"]["message"]
