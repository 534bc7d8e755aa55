"""Startup-item API happy paths that the e2e tests do not reach: legacy names, the agent
asking and the person deciding, refresh after a memory change."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest


@pytest.fixture
async def binding(api, tmp_path) -> tuple[str, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    probe = await api.post("/api/agent/project/probe", {"runtime": "cursor", "repo_root": str(repo)})
    return probe["project_binding_id"], repo


@pytest.mark.parametrize("prefix, plan_schema, confirm_schema", [
    ("/api/agent/startup-items", "amp.startup-item-install-plan.v1", "amp.startup-item-confirm.v1"),
    ("/api/agent/native-hooks", "amp.native-hook-install-plan.v1", "amp.native-hook-confirm.v1"),
])
async def test_plan_approve_confirm(api, binding, prefix, plan_schema, confirm_schema):
    binding_id, repo = binding
    plan = await api.post(f"{prefix}/install-plan", {"runtime": "cursor", "project_binding_id": binding_id})
    assert plan["schema"] == plan_schema and plan["status"] == "pending_approval"
    assert plan["signature"].startswith("hmac-sha256:")
    assert {f["path"] for f in plan["files"]} >= {".amp/memory-config.json", ".amp/launcher.py",
                                                 ".cursor/rules/memorycloud.mdc"}
    assert not (repo / ".amp").exists()  # nothing is written before a person approves
    refused = await api.post(f"/api/local/startup/plans/{plan['plan_id']}/approve", {}, status=403)
    assert "only the owner" in refused["error"]["message"]
    approved = await api.post(f"/api/local/startup/plans/{plan['plan_id']}/approve", {},
                              key=api.owner_key)
    assert approved["status"] == "applied"
    confirmed = await api.post(f"{prefix}/confirm", {"startup_item_id": plan["plan_id"],
                                                    "observed_signature": plan["signature"]})
    assert confirmed["schema"] == confirm_schema
    assert confirmed["status"] == "fallback_active"  # Cursor has no hook that runs a launcher
    config = json.loads((repo / ".amp/memory-config.json").read_text())
    assert config["project_binding_id"] == binding_id and "api_key" not in json.dumps(config)


async def test_a_memory_change_rewrites_the_cursor_rule(api, binding):
    binding_id, repo = binding
    plan = await api.post("/api/agent/startup-items/install-plan",
                          {"runtime": "cursor", "project_binding_id": binding_id})
    await api.post(f"/api/local/startup/plans/{plan['plan_id']}/approve", {}, key=api.owner_key)
    rule = repo / ".cursor/rules/memorycloud.mdc"
    assert rule.read_text().startswith("---\ndescription:") and "alwaysApply: true\n" in rule.read_text()
    pack = await api.bootstrap(project_binding_id=binding_id)
    await api.delta(pack["receipt_id"], summary="规则文件会自动刷新", importance=5)
    # The refresh runs on the event loop shortly (debounced) after the write.
    for _ in range(50):
        if "规则文件会自动刷新" in rule.read_text():
            break
        await asyncio.sleep(0.05)
    assert "规则文件会自动刷新" in rule.read_text()
    cache = json.loads((repo / ".amp/cache/cursor.json").read_text())
    assert "规则文件会自动刷新" in cache["summary_markdown"]
    assert api.store.startup.plan(plan["plan_id"])["last_refresh_at"]
