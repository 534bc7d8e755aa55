"""An agent's important write is interrupted by a required update and resumed exactly once,
against the real daemon process over real HTTP."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.e2e.conftest import cli


def _interrupted_write(http: httpx.Client) -> tuple[str, dict]:
    """Publish nothing here: the caller did. Write an important brief event; expect a 409."""
    brief = http.post("/api/agent/memory-brief", json={"task": "ship the release"}).json()
    answer = http.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        json={"event_type": "decision", "summary": "发布前冻结主分支 (freeze main)", "importance": 5},
    )
    assert answer.status_code == 409, answer.text
    body = answer.json()
    assert body["schema"] == "amp.sync-interrupt.v1"
    assert body["status"] == "blocked_for_runtime_update"
    return brief["brief_id"], body


@pytest.mark.parametrize("who_acks", ["agent", "owner via CLI"])
def test_interrupted_write_is_resumed_exactly_once(daemon, agent_key, who_acks):
    http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {agent_key}"})
    published = json.loads(
        cli(
            "updates",
            "publish",
            "--severity",
            "required",
            "--title",
            "Receipts everywhere",
            "--summary",
            "Send X-AMP-Context-Receipt with every delta",
            "--repull",
            "memory_tool_installer",
            "--json",
        ).stdout
    )
    brief_id, interrupt = _interrupted_write(http)
    assert [u["update_id"] for u in interrupt["required_updates"]] == [published["update_id"]]
    intent_id = interrupt["sync_intent_id"]

    # Resuming before the ack is refused and the intent is kept.
    early = http.post(interrupt["resume"]["after_ack"])
    assert early.status_code == 409
    assert http.get(f"/api/agent/sync-intents/{intent_id}").json()["status"] == "blocked"

    check = http.get(
        "/api/agent/updates/check", headers={"X-MemoryCloud-Runtime-Version": "2026.06.01-old.1"}
    ).json()
    assert check["has_pending_updates"] is True
    (pending,) = check["pending_updates"]
    for skill in pending["requires_repull"]:
        pulled = http.get(f"/api/agent/skills/{skill}/pull")
        assert pulled.status_code == 200 and pulled.json()["skill_markdown"].startswith(f"# {skill}")
    if who_acks == "agent":
        acked = http.post(
            "/api/agent/updates/ack",
            json={"update_ids": [pending["update_id"]], "seen_version": "2026.06.07-startup-item-primary.1"},
        )
        assert acked.json()["has_pending_updates"] is False
    else:
        result = json.loads(cli("updates", "ack", "--agent", "e2e-agent", "--json").stdout)
        assert result["acked_now"] == [pending["update_id"]]

    resumed = http.post(interrupt["resume"]["after_ack"])
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["schema"] == "amp.sync-intent-resume.v1"
    assert resumed.json()["result"]["event"]["summary"] == "发布前冻结主分支 (freeze main)"
    assert http.post(interrupt["resume"]["after_ack"]).status_code == 409  # never twice
    events = http.get(f"/api/agent/memory-briefs/{brief_id}").json()["events"]
    assert [e["summary"] for e in events] == ["发布前冻结主分支 (freeze main)"]
    pack = http.post("/api/agent/bootstrap/context", json={}).json()
    assert pack["summary_markdown"].count("发布前冻结主分支") == 1
