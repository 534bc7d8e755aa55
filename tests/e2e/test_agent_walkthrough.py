"""An agent's whole first session against the real daemon process, over real HTTP."""

from __future__ import annotations

import signal

import httpx


def test_agent_walkthrough(daemon, agent_key):
    http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {agent_key}"})

    profile = http.post(
        "/api/agent/runtime/profile",
        json={"runtime": "codex", "repo_root": "/home/demo/memory project", "supports_files": True},
    )
    assert profile.status_code == 200 and profile.json()["runtime"]["type"] == "codex"

    probe = http.post(
        "/api/agent/project/probe",
        json={
            "runtime": "codex",
            "repo_root": "/home/demo/memory project",
            "git_remote": "https://github.com/org/memory-project.git",
        },
    ).json()
    assert probe["schema"] == "amp.project-binding.v1"
    binding_id = probe["project_binding_id"]

    pack = http.post(
        "/api/agent/bootstrap/context",
        json={"project_binding_id": binding_id, "runtime": "codex", "reason": "agent_startup"},
    ).json()
    assert pack["schema"] == "amp.context-pack.v1"
    receipt = pack["receipt_id"]

    refused = http.post("/api/agent/memory-delta", json={"summary": "no receipt"})
    assert refused.status_code == 428
    assert refused.json()["schema"] == "amp.bootstrap-required.v1"

    delta = http.post(
        "/api/agent/memory-delta",
        headers={"X-AMP-Context-Receipt": receipt},
        json={
            "delta_type": "decision",
            "summary": "Runtime Context Pack is the startup summary.",
            "why_it_matters": "Future sessions inject the summary first.",
            "retrieval_triggers": ["启动 记忆 流程", "native memory"],
            "importance": 4,
        },
    )
    assert delta.status_code == 200, delta.text

    brief = http.post(
        "/api/agent/memory-brief",
        json={"task": "continue the startup work", "project_key": probe["project_key"]},
    ).json()
    event = http.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        json={
            "event_type": "decision",
            "summary": "Brief events reach the context pack too.",
            "importance": 4,
            "payload": {"files": ["daemon/app.py"]},
        },
    )
    assert event.status_code == 200, event.text

    fresh = http.post("/api/agent/bootstrap/context", json={"project_binding_id": binding_id}).json()
    assert "Runtime Context Pack is the startup summary." in fresh["summary_markdown"]
    assert "Brief events reach the context pack too." in fresh["summary_markdown"]
    handles = fresh["retrieval_handles"]
    chinese = [h for h in handles if h["title"] == "启动 记忆 流程"]
    assert chinese, handles
    for handle in handles:
        url = handle["detail_endpoint"]
        assert url.startswith(daemon.url) and " " not in url
        # Requested exactly as returned: no re-encoding by the client.
        answer = http.get(httpx.URL(url))
        assert answer.status_code == 200, (url, answer.text)
    found = http.get(httpx.URL(chinese[0]["detail_endpoint"])).json()
    assert found["items"][0]["title"] == "Runtime Context Pack is the startup summary."


def test_acknowledged_writes_survive_sigkill(daemon, agent_key):
    http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {agent_key}"})
    receipt = http.post("/api/agent/bootstrap/context", json={"project_key": "durable"}).json()["receipt_id"]
    written = []
    for i in range(25):
        answer = http.post(
            "/api/agent/memory-delta",
            headers={"X-AMP-Context-Receipt": receipt},
            json={"summary": f"durable fact number {i}", "importance": 3},
        )
        assert answer.status_code == 200
        written.append(answer.json()["delta"]["memory_id"])
    http.close()
    daemon.stop(signal.SIGKILL)  # no chance to checkpoint or close anything

    daemon.start()
    http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {agent_key}"})
    for memory_id in written:
        assert http.get(f"/api/agent/memories/{memory_id}").status_code == 200
    pack = http.post("/api/agent/bootstrap/context", json={"project_key": "durable"}).json()
    assert "durable fact number 24" in pack["summary_markdown"]
