"""Startup-item API happy paths that the e2e tests do not reach: legacy names, the agent
asking and the person deciding, refresh after a memory change."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines


@pytest.fixture
async def binding(api, tmp_path) -> tuple[str, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    probe = await api.post("/api/agent/project/probe", {"runtime": "cursor", "repo_root": str(repo)})
    return probe["project_binding_id"], repo


@pytest.mark.parametrize(
    "prefix, plan_schema, confirm_schema",
    [
        ("/api/agent/startup-items", "amp.startup-item-install-plan.v1", "amp.startup-item-confirm.v1"),
        ("/api/agent/native-hooks", "amp.native-hook-install-plan.v1", "amp.native-hook-confirm.v1"),
    ],
)
async def test_plan_approve_confirm(api, binding, prefix, plan_schema, confirm_schema):
    binding_id, repo = binding
    plan = await api.post(f"{prefix}/install-plan", {"runtime": "cursor", "project_binding_id": binding_id})
    assert plan["schema"] == plan_schema and plan["status"] == "pending_approval"
    assert plan["signature"].startswith("hmac-sha256:")
    assert {f["path"] for f in plan["files"]} >= {
        ".amp/memory-config.json",
        ".amp/launcher.py",
        ".cursor/rules/memorycloud.mdc",
    }
    assert not (repo / ".amp").exists()  # nothing is written before a person approves
    refused = await api.post(f"/api/local/startup/plans/{plan['plan_id']}/approve", {}, status=403)
    assert "only the owner" in refused["error"]["message"]
    approved = await api.post(f"/api/local/startup/plans/{plan['plan_id']}/approve", {}, key=api.owner_key)
    assert approved["status"] == "applied"
    confirmed = await api.post(
        f"{prefix}/confirm", {"startup_item_id": plan["plan_id"], "observed_signature": plan["signature"]}
    )
    assert confirmed["schema"] == confirm_schema
    assert confirmed["status"] == "fallback_active"  # Cursor has no hook that runs a launcher
    config = json.loads((repo / ".amp/memory-config.json").read_text())
    assert config["project_binding_id"] == binding_id and "api_key" not in json.dumps(config)


async def _wait_for_refresh(api, plan_id: str, before: str | None) -> None:
    """The refresh runs on the event loop shortly (debounced) after a write."""
    for _ in range(100):
        if api.store.startup.plan(plan_id)["last_refresh_at"] != before:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("no refresh after the memory changed")


async def _approved(api, binding_id: str, runtime: str = "cursor") -> dict:
    plan = await api.post(
        "/api/agent/startup-items/install-plan", {"runtime": runtime, "project_binding_id": binding_id}
    )
    approved = await api.post(f"/api/local/startup/plans/{plan['plan_id']}/approve", {}, key=api.owner_key)
    assert approved["status"] == "applied", approved
    return plan


async def test_the_cursor_rule_holds_no_memory_and_is_never_rewritten(api, binding):
    binding_id, repo = binding
    plan = await _approved(api, binding_id)
    rule = repo / ".cursor/rules/memorycloud.mdc"
    text = rule.read_text()
    assert text.startswith("---\ndescription:") and "alwaysApply: true\n" in text
    assert "`context_pack`" in text and "`remember`" in text and "receipt.json" not in text
    assert "wsp_" not in text and "pbind_" not in text and "Runtime Context Pack" not in text
    pack = await api.bootstrap(project_binding_id=binding_id)
    before = api.store.startup.plan(plan["plan_id"])["last_refresh_at"]
    await api.delta(pack["receipt_id"], summary="规则文件不再包含记忆", importance=5)
    await _wait_for_refresh(api, plan["plan_id"], before)
    assert rule.read_text() == text  # the memory changed; the rule did not
    cache = json.loads((repo / ".amp/cache/cursor.json").read_text())
    assert "规则文件不再包含记忆" in cache["summary_markdown"]  # the git-ignored cache did


def _startup(api):
    from daemon import keys

    return api.client.app[keys.SERVICES].startup


OLD_RULE = (
    "---\ndescription: MemoryCloud memory of this project (managed; refreshed by the daemon)\n"
    "alwaysApply: true\n---\n\n# MemoryCloud Runtime Context Pack\n\nworkspace wsp_old\n"
)


def _install_old_rule(api, repo: Path, text: str) -> None:
    """What an earlier daemon left: the dynamic rule on disk, its record matching it."""
    from startup_items.files import sha256_text

    (repo / ".cursor/rules/memorycloud.mdc").write_text(OLD_RULE)
    stored = api.store.startup.regions(str(repo))[(".cursor/rules/memorycloud.mdc", "rule:cursor")]
    record = {**stored["record"], "written_sha": sha256_text(OLD_RULE), "region_sha": sha256_text(OLD_RULE)}
    with api.store.transaction():
        api.store.startup.save_region(
            str(repo), ".cursor/rules/memorycloud.mdc", "rule:cursor", record, stored["owners"]
        )
    if text != OLD_RULE:
        (repo / ".cursor/rules/memorycloud.mdc").write_text(text)


async def test_an_untouched_old_dynamic_rule_is_upgraded_by_the_refresh(api, binding):
    binding_id, repo = binding
    plan = await _approved(api, binding_id)
    static = (repo / ".cursor/rules/memorycloud.mdc").read_text()
    _install_old_rule(api, repo, OLD_RULE)
    assert _startup(api).refresh(binding_id) == 1
    assert (repo / ".cursor/rules/memorycloud.mdc").read_text() == static
    assert api.store.conflicts.conflicts("open") == []
    # ... and the next approval finds nothing to change and no conflict
    await _approved(api, binding_id)  # asserts status applied
    assert (repo / ".cursor/rules/memorycloud.mdc").read_text() == static
    assert api.store.startup.plan(plan["plan_id"])["status"] == "applied"


async def test_approving_over_an_untouched_old_rule_is_no_conflict(api, binding):
    binding_id, repo = binding
    await _approved(api, binding_id)
    static = (repo / ".cursor/rules/memorycloud.mdc").read_text()
    _install_old_rule(api, repo, OLD_RULE)
    await _approved(api, binding_id)  # asserts status applied
    assert (repo / ".cursor/rules/memorycloud.mdc").read_text() == static


async def test_an_old_rule_edited_by_hand_is_kept_and_reported_at_approval(api, binding):
    binding_id, repo = binding
    await _approved(api, binding_id)
    edited = OLD_RULE + "\n- my own note\n"
    _install_old_rule(api, repo, edited)
    _startup(api).refresh(binding_id)
    assert (repo / ".cursor/rules/memorycloud.mdc").read_text() == edited
    assert api.store.conflicts.conflicts("open") == []  # not one conflict per refresh
    plan = await api.post(
        "/api/agent/startup-items/install-plan", {"runtime": "cursor", "project_binding_id": binding_id}
    )
    result = await api.post(f"/api/local/startup/plans/{plan['plan_id']}/approve", {}, key=api.owner_key)
    assert result["status"] == "conflict"
    assert [c["path"] for c in result["conflicts"]] == [".cursor/rules/memorycloud.mdc"]
    assert (repo / ".cursor/rules/memorycloud.mdc").read_text() == edited


async def test_the_plan_writes_local_json_and_shows_each_path_once(api, binding, paths):
    from daemon.cli.startup import plan_text
    from tui.panes.setup import plan_markdown

    binding_id, repo = binding
    plan = await api.post(
        "/api/agent/startup-items/install-plan", {"runtime": "codex", "project_binding_id": binding_id}
    )
    config_regions = [f for f in plan["files"] if f["path"] == ".amp/memory-config.json"]
    assert len(config_regions) == 2  # the shared keys and the runtime's: two regions ...
    text = plan_text(plan, contents=True)
    assert text.count(".amp/memory-config.json  (") == 1  # ... one line for the person
    local = next(f for f in plan["files"] if f["path"] == ".amp/local.json")
    assert json.loads(local["content"])["credentials_file"] == str(paths.config_dir / "credentials.json")
    assert "  create    .amp/local.json" in text
    await api.post(f"/api/local/startup/plans/{plan['plan_id']}/approve", {}, key=api.owner_key)
    assert json.loads((repo / ".amp/local.json").read_text())["memorycloud_home"]
    assert "local.json" in (repo / ".amp/.gitignore").read_text().splitlines()
    # Once applied, the person sees the files as written, not as still to create.
    installed = await api.get(f"/api/local/startup/plans/{plan['plan_id']}", key=api.owner_key)
    assert installed["status"] in ("applied", "installed")
    assert "  written   .amp/local.json" in plan_text(installed)
    assert "create" not in plan_text(installed)
    assert "**written** `.amp/local.json`" in plan_markdown(installed)
    assert "**create**" not in plan_markdown(installed)


LAUNCHER = {"X-MemoryCloud-Launcher": "session-start; runtime=codex"}


async def test_setup_shows_whether_the_hook_has_run(api, binding):
    binding_id, _ = binding
    plan = await _approved(api, binding_id, "codex")

    async def hook() -> dict:
        plans = (await api.get("/api/local/startup/plans", key=api.owner_key))["plans"]
        return next(p for p in plans if p["plan_id"] == plan["plan_id"])["hook"]

    waiting = await hook()
    assert waiting["ran"] is False and waiting["text"].startswith("hook has not run yet: start `codex`")
    assert "/hooks" in waiting["text"]
    # An agent asking for its context itself is not the hook.
    await api.bootstrap(project_binding_id=binding_id, runtime="codex")
    assert (await hook())["ran"] is False
    pack = await api.post(
        "/api/agent/bootstrap/context",
        {"project_binding_id": binding_id, "runtime": "codex", "reason": "session_resume"},
        headers=LAUNCHER,
    )
    ran = await hook()
    assert ran["ran"] is True and ran["source"] == "resume"
    assert ran["text"] == "hook last ran just now (resume)"
    shown = await api.get(f"/api/local/startup/plans/{plan['plan_id']}", key=api.owner_key)
    assert shown["hook"]["text"] == ran["text"]
    await api.post(
        "/api/agent/memory-delta",
        {"summary": "compacted", "delta_type": "checkpoint"},
        headers={
            "X-AMP-Context-Receipt": pack["receipt_id"],
            "X-MemoryCloud-Launcher": "pre-compact; runtime=codex",
        },
    )
    runs = (await hook())["runs"]
    assert runs["pre-compact"]["runs"] == 1 and runs["session-start"]["runs"] == 1


async def test_a_runtime_without_a_hook_says_how_memory_arrives(api, binding):
    binding_id, _ = binding
    await _approved(api, binding_id, "cursor")
    (plan,) = (await api.get("/api/local/startup/plans", key=api.owner_key))["plans"]
    assert plan["hook"]["has_hook"] is False and plan["hook"]["text"].startswith("no session hook:")
