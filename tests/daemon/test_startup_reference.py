"""Startup items, runtime profile and project probe under the MemoryCloud reference's contract
(issue #14 item 7): the reference's request fields, every documented key of the answers, a
plan for a repository that is not on this machine (returned, marked, never approvable), and
the confirmation as the reference answers it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from daemon.api.amp_identity import PROBE, PROFILE
from daemon.api.amp_startup import CONFIRM, PLAN
from daemon.runtime.surfaces import SURFACES
from startup_items.runtimes import RUNTIMES
from tests.contract import sheet
from tests.daemon.reference_shapes import request_field_names, shape_problems

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

PLANS = "/api/local/startup/plans"


@pytest.fixture
async def repo(api, tmp_path) -> tuple[str, Path]:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "README.md").write_text("# demo\n")
    probe = await api.post("/api/agent/project/probe", {"project_key": "demo", "repo_root": str(root)})
    return probe["project_binding_id"], root


@pytest.mark.parametrize(
    "schema,endpoint_id",
    [
        (PLAN, "startup_items_install_plan"),
        (CONFIRM, "startup_items_confirm"),
        (PROFILE, "runtime_profile"),
        (PROBE, "project_probe"),
    ],
)
def test_every_field_of_the_sheet_is_declared(schema, endpoint_id):
    assert schema.ignored_fields(dict.fromkeys(request_field_names(endpoint_id))) == []


# -- install plans ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prefix,endpoint_id,schema",
    [
        ("/api/agent/startup-items", "startup_items_install_plan", "amp.startup-item-install-plan.v1"),
        ("/api/agent/native-hooks", "native_hooks_install_plan", "amp.native-hook-install-plan.v1"),
    ],
)
async def test_plan_has_the_reference_keys(api, repo, prefix, endpoint_id, schema):
    binding, root = repo
    plan = await api.post(
        f"{prefix}/install-plan",
        {
            "runtime": "codex",
            "project_binding_id": binding,
            "credential_ref": "memorycloud_default",
            "install_mode": "append_managed_block",
            "workspace_id": None,
            "project_key": None,
        },
    )
    assert shape_problems(endpoint_id, plan) == []
    assert plan["schema"] == schema and plan["legacy_schema"] == "amp.native-hook-install-plan.v1"
    assert "warnings" not in plan
    item = plan["startup_item"]
    assert item["id"] == item["startup_item_id"] == plan["plan_id"]
    assert (item["install_path"], item["install_mode"]) == ("AGENTS.md", "append_managed_block")
    assert item["signature"] == item["startup_signature"] == plan["signature"]
    assert item["installed_at"] is None and item["last_verified_at"] is None
    assert plan["repo_root_exists"] is True and item["repo_root"] == str(root)
    agents_md = next(f for f in plan["files"] if f["path"] == "AGENTS.md")
    assert plan["managed_block"] == plan["startup_item_block"] == agents_md["content"]
    assert plan["memory_config"]["schema"] == "amp.memory-config.v1"
    assert plan["memory_config"]["project_binding_id"] == binding
    assert "api_key" not in json.dumps(plan["memory_config"])
    paths = [f["path"] for f in plan["install_manifest"]["write_files"]]
    assert paths == [f["path"] for f in plan["files"]] and "AGENTS.md" in paths
    assert plan["next"]["confirm_body"] == {
        "startup_item_id": plan["plan_id"],
        "status": "installed",
        "observed_signature": plan["signature"],
    }
    assert plan["legacy_aliases"]["confirm_body"]["hook_install_id"] == plan["plan_id"]
    assert plan["legacy_aliases"]["native_hook"]["hook_sig"] == plan["signature"]
    if prefix.endswith("native-hooks"):
        assert plan["superseded_by"].endswith("/api/agent/startup-items/install-plan")
        assert plan["native_hook"]["hook_install_id"] == plan["plan_id"]
    assert not (root / "AGENTS.md").exists()  # nothing is written before the person approves


@pytest.mark.parametrize("runtime", list(RUNTIMES))
async def test_the_startup_item_is_a_file_the_plan_writes(api, repo, runtime):
    binding, _ = repo
    plan = await api.post(
        "/api/agent/startup-items/install-plan", {"runtime": runtime, "project_binding_id": binding}
    )
    item = plan["startup_item"]
    planned = {f["path"]: f for f in plan["files"]}
    assert item["install_path"] == SURFACES[runtime].install_path in planned
    assert item["managed_block_id"] == planned[item["install_path"]]["region_id"]
    assert plan["managed_block"] == planned[item["install_path"]]["content"]


@pytest.mark.parametrize(
    "given,expected",
    [
        ("claude", "claude_code"),
        ("Claude Code", "claude_code"),
        ("gemini", "gemini_cli"),
        ("", "generic"),
        (None, "generic"),
    ],
)
async def test_runtime_names_are_normalized(api, repo, given, expected):
    binding, _ = repo
    body = {"project_binding_id": binding, **({} if given is None else {"runtime": given})}
    plan = await api.post("/api/agent/startup-items/install-plan", body)
    assert plan["runtime"] == plan["startup_item"]["runtime_type"] == expected
    assert "warnings" not in plan


async def test_an_install_mode_this_runtime_lacks_is_named(api, repo):
    binding, _ = repo
    plan = await api.post(
        "/api/agent/startup-items/install-plan",
        {"runtime": "cursor", "project_binding_id": binding, "install_mode": "append_managed_block"},
    )
    assert plan["startup_item"]["install_mode"] == "create_always_apply_rule"
    assert any("'append_managed_block' is not available for cursor" in w for w in plan["warnings"])


async def test_plan_by_project_key_uses_that_projects_binding(api, repo):
    binding, root = repo
    plan = await api.post(
        "/api/agent/startup-items/install-plan", {"runtime": "codex", "project_key": "demo"}
    )
    assert plan["project_binding_id"] == binding and plan["repo_root_exists"] is True
    assert plan["repo_root"] == str(root)


async def test_plan_with_nothing_but_defaults(api):
    """No binding, no project_key: the workspace's default project, which no repository here
    is bound to; the plan says so and cannot be approved."""
    plan = await api.post("/api/agent/startup-items/install-plan", {})
    assert shape_problems("startup_items_install_plan", plan) == []
    assert plan["runtime"] == "generic" and plan["repo_root"] == ""
    assert plan["repo_root_exists"] is False and plan["approval"]["possible"] is False
    assert any("no repo_root" in w for w in plan["warnings"])
    again = await api.post("/api/agent/startup-items/install-plan", {})
    assert again["project_binding_id"] == plan["project_binding_id"]
    refused = await api.post(f"{PLANS}/{plan['plan_id']}/approve", {}, key=api.owner_key, status=400)
    assert "has no repo_root" in refused["error"]["message"]


async def test_approving_a_plan_for_a_missing_repository_writes_nothing(api, tmp_path):
    missing = tmp_path / "elsewhere" / "repo"
    probe = await api.post("/api/agent/project/probe", {"project_key": "away", "repo_root": str(missing)})
    plan = await api.post(
        "/api/agent/startup-items/install-plan",
        {"runtime": "claude_code", "project_binding_id": probe["project_binding_id"]},
    )
    assert plan["repo_root_exists"] is False
    assert plan["install_manifest"]["repo_root_exists"] is False
    assert all(f["exists"] is False for f in plan["files"])
    refused = await api.post(f"{PLANS}/{plan['plan_id']}/approve", {}, key=api.owner_key, status=400)
    message = refused["error"]["message"]
    assert f"{missing} does not exist on this machine" in message and "nothing was written" in message
    missing.mkdir(parents=True)  # the repository turns up later: the same plan can be approved
    applied = await api.post(f"{PLANS}/{plan['plan_id']}/approve", {}, key=api.owner_key)
    assert applied["status"] == "applied" and (missing / ".claude/settings.json").exists()


async def test_a_relative_repo_root_is_not_a_directory_here(api):
    probe = await api.post("/api/agent/project/probe", {"project_key": "rel", "repo_root": "."})
    plan = await api.post(
        "/api/agent/startup-items/install-plan", {"project_binding_id": probe["project_binding_id"]}
    )
    assert plan["repo_root_exists"] is False
    assert any("is not an absolute path" in w for w in plan["warnings"])


# -- confirmation -------------------------------------------------------------------------------


async def _approved(api, binding: str, runtime: str = "codex") -> dict:
    plan = await api.post(
        "/api/agent/startup-items/install-plan", {"runtime": runtime, "project_binding_id": binding}
    )
    await api.post(f"{PLANS}/{plan['plan_id']}/approve", {}, key=api.owner_key)
    return plan


@pytest.mark.parametrize(
    "prefix,endpoint_id,body_from",
    [
        ("/api/agent/startup-items", "startup_items_confirm", lambda plan: plan["next"]["confirm_body"]),
        (
            "/api/agent/native-hooks",
            "native_hooks_confirm",
            lambda plan: plan["legacy_aliases"]["confirm_body"],
        ),
    ],
)
async def test_confirm_with_the_plans_confirm_body(api, repo, prefix, endpoint_id, body_from):
    binding, _ = repo
    plan = await _approved(api, binding)
    confirmed = await api.post(
        f"{prefix}/confirm", {**body_from(plan), "notes": "all there", "installed_paths": ["AGENTS.md"]}
    )
    assert shape_problems(endpoint_id, confirmed) == []
    assert "warnings" not in confirmed
    assert confirmed["verified"] is True and confirmed["status"] == "installed"
    item = confirmed["startup_item"]
    assert item["status"] == "installed" and item["id"] == plan["plan_id"]
    assert item["installed_at"] and item["last_verified_at"] and item["updated_at"] >= item["created_at"]
    if prefix.endswith("native-hooks"):
        assert confirmed["schema"] == "amp.native-hook-confirm.v1"
        assert confirmed["superseded_by"].endswith("/api/agent/startup-items/confirm")


async def test_confirming_the_fallback(api, repo):
    binding, _ = repo
    plan = await _approved(api, binding)
    confirmed = await api.post(
        "/api/agent/startup-items/confirm", {"startup_item_id": plan["plan_id"], "status": "fallback"}
    )
    assert (confirmed["status"], confirmed["verified"]) == ("fallback_active", True)


async def test_a_wrong_signature_is_stale_and_recorded_nowhere(api, repo):
    binding, _ = repo
    plan = await _approved(api, binding)
    stale = await api.post(
        "/api/agent/startup-items/confirm",
        {"startup_item_id": plan["plan_id"], "observed_signature": "sha256:" + "0" * 64},
    )
    # Never verified: last_verified_at stays null (the sheet shows it for a verified item).
    assert shape_problems("startup_items_confirm", stale, skip=("startup_item",)) == []
    assert set(stale["startup_item"]) >= set(
        sheet.endpoint("startup_items_confirm")["response"]["nested"]["startup_item"]["keys"]
    )
    assert stale["startup_item"]["last_verified_at"] is None
    assert (stale["verified"], stale["status"], stale["startup_item"]["status"]) == (False, "stale", "stale")
    assert api.store.startup.plan(plan["plan_id"])["status"] == "applied"


# -- runtime profile and project probe ---------------------------------------------------------

PROFILE_BODY = {
    "runtime": "Codex",
    "runtime_version": "0.42",
    "supports_files": True,
    "supports_mcp": True,
    "supports_project_rules": False,
    "cwd": "/work/repo/src",
    "repo_root": "/work/repo",
    "git_remote": "https://github.com/org/repo.git",
    "git_branch": "main",
    "git_head": "0123abcd",
    "project_files": ["AGENTS.md"],
    "metadata": {"shell": "bash"},
}


async def test_profile_has_the_reference_keys(api):
    data = await api.post("/api/agent/runtime/profile", PROFILE_BODY)
    assert shape_problems("runtime_profile", data) == []
    assert "warnings" not in data
    assert data["runtime"]["type"] == "codex" and data["runtime"]["supports_project_rules"] is False
    assert data["runtime"]["runtime_version"] == "0.42"
    recommended = data["recommended_startup_item"]
    assert (recommended["install_path"], recommended["install_mode"]) == ("AGENTS.md", "append_managed_block")
    assert data["legacy_aliases"]["recommended_hook"] == recommended
    stored = api.store.conn.execute("select capabilities from runtime_profiles").fetchone()[0]
    assert json.loads(stored)["git_head"] == "0123abcd"


@pytest.mark.parametrize("runtime", list(RUNTIMES))
async def test_profile_recommends_what_the_plan_writes(api, repo, runtime):
    binding, _ = repo
    recommended = (await api.post("/api/agent/runtime/profile", {"runtime": runtime}))[
        "recommended_startup_item"
    ]
    plan = await api.post(
        "/api/agent/startup-items/install-plan", {"runtime": runtime, "project_binding_id": binding}
    )
    item = plan["startup_item"]
    assert (recommended["surface"], recommended["install_path"], recommended["install_mode"]) == (
        item["startup_surface"],
        item["install_path"],
        item["install_mode"],
    )


async def test_profile_of_an_unknown_runtime_recommends_the_generic_item(api):
    data = await api.post("/api/agent/runtime/profile", {"runtime": "windsurf"})
    assert data["runtime"]["type"] == "windsurf"
    assert data["recommended_startup_item"]["install_path"] == SURFACES["generic"].install_path
    assert "'windsurf'" in data["recommended_startup_item"]["why"]


async def test_probe_has_the_reference_keys(api, tmp_path):
    body = {
        "runtime": "codex",
        "repo_root": str(tmp_path),
        "git_remote": "git@github.com:org/repo.git",
        "git_branch": "main",
        "git_head": "0123abcd",
        "project_files": ["README.md"],
        "environment": {"os": "linux"},
        "cwd": str(tmp_path),
    }
    data = await api.post("/api/agent/project/probe", body)
    assert shape_problems("project_probe", data) == []
    assert "warnings" not in data
    binding = data["project_binding"]
    assert binding["id"] == data["project_binding_id"] and binding["agent_id"] == api.agent["id"]
    assert binding["repo_root_hash"] == hashlib.sha256(str(tmp_path).encode()).hexdigest()
    assert (binding["git_branch"], binding["git_head"], binding["confidence"]) == ("main", "0123abcd", 0.92)
    assert binding["runtime_type"] == "codex" and binding["status"] == "active"
    assert data["context_pack_url"].endswith("/api/agent/bootstrap/context")


@pytest.mark.parametrize("body", [{}, {"project_key": ""}, {"runtime": "codex"}])
async def test_probe_with_nothing_to_go_by_binds_the_default_project(api, body):
    data = await api.post("/api/agent/project/probe", body)
    assert data["project_binding"]["confidence"] == 0.5
    assert data["project_key"] == data["workspace"]["slug"]
    again = await api.post("/api/agent/project/probe", body)
    assert again["project_binding_id"] == data["project_binding_id"]


@pytest.mark.parametrize(
    "body,confidence", [({"repo_root": "/x/repo"}, 0.78), ({"project_key": "explicit"}, 0.7)]
)
async def test_probe_confidence_follows_what_was_given(api, body, confidence):
    data = await api.post("/api/agent/project/probe", body)
    assert data["project_binding"]["confidence"] == confidence


async def test_probe_of_an_unknown_workspace_is_404(api):
    data = await api.post("/api/agent/project/probe", {"workspace_id": "wsp_nope"}, status=404)
    assert "wsp_nope" in data["error"]["message"]
