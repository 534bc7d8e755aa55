"""`memorycloud updates ...` and `memorycloud intents`, as the owner runs them, against the real
daemon process; the held-back write comes from an agent over real HTTP."""

from __future__ import annotations

import json

import httpx

from daemon.runtime.updates import SHIPPED
from tests.e2e.conftest import cli


def _json(*args: str):
    return json.loads(cli(*args, "--json").stdout)


def test_publish_list_ack_and_intents(daemon, agent_key):
    http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {agent_key}"})
    assert {a["name"]: a["pending"] for a in _json("updates", "list")["agents"]} == {"e2e-agent": []}

    published = _json(
        "updates",
        "publish",
        "--severity",
        "required",
        "--title",
        "Receipts everywhere",
        "--summary",
        "Send X-AMP-Context-Receipt with every delta",
        "--version",
        "2026.07.01-e2e.1",
        "--repull",
        "memory_tool_installer",
        "--action",
        "send the receipt header",
    )
    update_id = published["update_id"]
    assert (published["severity"], published["version"], published["source"]) == (
        "required",
        "2026.07.01-e2e.1",
        "local",
    )
    assert published["requires_repull"] == ["memory_tool_installer"]
    assert published["next_actions"] == ["send the receipt header"]

    listed = _json("updates", "list")
    assert [u["update_id"] for u in listed["updates"]] == [*sorted(u["id"] for u in SHIPPED), update_id]
    assert {a["name"]: a["pending"] for a in listed["agents"]} == {"e2e-agent": [update_id]}
    text = cli("updates", "list").stdout
    assert f"agent e2e-agent: {update_id}" in text and "Receipts everywhere" in text

    # The agent's important brief event is held back: one blocked intent, nothing written.
    brief = http.post("/api/agent/memory-brief", json={"task": "release"}).json()
    answer = http.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        json={"event_type": "decision", "summary": "freeze main", "importance": 5},
    )
    assert answer.status_code == 409, answer.text
    intent_id = answer.json()["sync_intent_id"]
    (intent,) = _json("intents")
    assert (intent["sync_intent_id"], intent["status"], intent["endpoint"], intent["importance"]) == (
        intent_id,
        "blocked",
        "memory_brief_event",
        5,
    )
    assert intent["body"]["summary"] == "freeze main"
    assert [i["sync_intent_id"] for i in _json("intents", "--status", "blocked")] == [intent_id]
    assert _json("intents", "--status", "resumed") == []
    assert intent_id in cli("intents").stdout

    acked = _json("updates", "ack", "--agent", "e2e-agent", "--seen-version", "2026.07.01-e2e.1")
    assert acked["acked_now"] == [update_id] and acked["pending_updates"] == []
    assert acked["acks"][0]["seen_version"] == "2026.07.01-e2e.1"
    assert {a["name"]: a["pending"] for a in _json("updates", "list")["agents"]} == {"e2e-agent": []}
    again = cli("updates", "ack", "--agent", "e2e-agent").stdout
    assert "nothing new" in again and "up to date" in again
    assert "platform_update_notice" not in http.get("/api/me").json()

    resumed = http.post(f"/api/agent/sync-intents/{intent_id}/resume")
    assert resumed.status_code == 200, resumed.text
    assert [i["sync_intent_id"] for i in _json("intents", "--status", "resumed")] == [intent_id]
    events = http.get(f"/api/agent/memory-briefs/{brief['brief_id']}").json()["events"]
    assert [e["summary"] for e in events] == ["freeze main"]


def test_ack_for_an_unknown_agent_fails_clearly(daemon):
    result = cli("updates", "ack", "--agent", "nobody", check=False)
    assert result.returncode == 1
    assert "nobody" in result.stderr


def test_publish_refuses_an_unknown_severity(daemon):
    result = cli("updates", "publish", "--severity", "urgent", "--title", "t", "--summary", "s", check=False)
    assert result.returncode == 2 and "urgent" in result.stderr  # argparse: invalid choice
    assert len(_json("updates", "list")["updates"]) == len(SHIPPED)
