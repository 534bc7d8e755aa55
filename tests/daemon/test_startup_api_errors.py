"""Bad input on the startup-item endpoints: status, amp.error.v1 envelope, nothing stored and
no file written.

Agents ask for install plans and confirm them (daemon/api/amp_startup.py, also under the legacy
native-hooks names); only the owner lists, approves, rejects and removes them and reads the
conflicts (daemon/api/local.py). Same scheme as test_api_errors.py: every endpoint is declared
once (STARTUP) with a request that succeeds, and each error test sends a variation of it. On top
of the store, ``expect_error`` compares every file under the test's repositories ({repos}:
bytes and directories) before and after.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from daemon import keys
from daemon.jobs import CacheRefresher
from startup_items.credentials import read_credentials
from startup_items.runtimes import RUNTIMES
from tests.daemon import helpers
from tests.daemon.helpers import (
    AUTH_VARIANTS,
    DEFAULT,
    GUARD,
    MALFORMED,
    OVER_ONE_MIB,
    OWNER,
    READ,
    Ep,
    assert_envelope,
    assert_unchanged,
    base_world,
    fill,
    repo_files,
    send,
    snapshot,
)

PLANS = "/api/local/startup/plans"
README = b"# demo\n"  # the user's own file in our repository, before anything is installed

SKILL = "skill:install"
STARTUP = {
    # Planning needs skill:install and memory:read (the reference's scopes); confirming any
    # key of the workspace (the reference checks none).
    "plan": Ep(
        "POST",
        "/api/agent/startup-items/install-plan",
        {"runtime": "codex", "project_binding_id": "{repo_binding}"},
        SKILL,
    ),
    "confirm": Ep(
        "POST",
        "/api/agent/startup-items/confirm",
        {"plan_id": "{applied}", "observed_signature": "{applied_signature}"},
    ),
    "legacy_plan": Ep(
        "POST",
        "/api/agent/native-hooks/install-plan",
        {"runtime": "codex", "project_binding_id": "{repo_binding}"},
        SKILL,
    ),
    "legacy_confirm": Ep(
        "POST",
        "/api/agent/native-hooks/confirm",
        {"startup_item_id": "{applied}", "observed_signature": "{applied_signature}"},
    ),
    "plans": Ep("GET", PLANS, scope=OWNER),
    "plan_get": Ep("GET", PLANS + "/{plan}", scope=OWNER),
    "approve": Ep("POST", PLANS + "/{plan}/approve", {"overwrite": False}, OWNER),
    "reject": Ep("POST", PLANS + "/{plan}/reject", {}, OWNER),
    "remove": Ep("POST", PLANS + "/{applied}/remove", {}, OWNER),
    "conflicts": Ep("GET", "/api/local/conflicts", scope=OWNER),
}
POSTS = [name for name, ep in STARTUP.items() if ep.method == "POST"]
DECIDING = ["approve", "reject", "remove"]
OWNER_ONLY = [name for name, ep in STARTUP.items() if ep.scope == OWNER]
CONFIRMS = ["confirm", "legacy_confirm"]


async def expect_error(api, world, name: str, status: int | tuple[int, ...], **kwargs) -> dict:
    return await helpers.expect_error(api, world, STARTUP[name], status, **kwargs)


def aimed_at(name: str, plan: str) -> dict[str, Any]:
    """The parts that aim endpoint `name` at the plan world[plan] instead of its default."""
    if name in CONFIRMS:
        return {"body": {"plan_id": f"{{{plan}}}"}}
    return {"path": f"{PLANS}/{{{plan}}}/{name}"}


async def succeed(api, world, name: str, plan: str) -> dict[str, Any]:
    status, data = await send(api, world, STARTUP[name], **aimed_at(name, plan))
    assert status == 200, data
    return data


# -- the world: a repository with a pending plan and an applied one ------------------------


@pytest.fixture(autouse=True)
def no_background_refresh(monkeypatch):
    """The debounced cache refresh after a memory write (daemon/jobs.py) would rewrite
    .amp/cache/ while a test compares files; these tests are not about it."""
    monkeypatch.setattr(CacheRefresher, "on_change", lambda self, workspace_id, project_key: None)


@pytest.fixture
async def world(api, tmp_path) -> dict[str, str]:
    """The base world plus, under {repos}: our repository {repo} (bound as {repo_binding},
    holding a README, a generic plan {plan} pending approval and an approved codex plan
    {applied}); a foreign workspace's repository ({foreign_binding}); bindings whose repo_root
    does not exist ({missing_binding}) or is a file ({file_binding}); and the key the approval
    stored for the launcher ({launcher_key})."""
    world = await base_world(api)
    repos = tmp_path / "repos"
    repo, foreign_repo = repos / "ours", repos / "foreign"
    repo.mkdir(parents=True)
    foreign_repo.mkdir()
    (repo / "README.md").write_bytes(README)
    (repos / "file.txt").write_text("not a directory\n")

    async def probe(project_key: str, root: Path, key: str | None = None) -> str:
        body = {"project_key": project_key, "repo_root": str(root)}
        return (await api.post("/api/agent/project/probe", body, key=key))["project_binding_id"]

    async def install_plan(runtime: str, binding: str) -> dict[str, Any]:
        return await api.post(
            "/api/agent/startup-items/install-plan", {"runtime": runtime, "project_binding_id": binding}
        )

    repo_binding = await probe("startup-demo", repo)
    pending = await install_plan("generic", repo_binding)
    applied = await install_plan("codex", repo_binding)
    await api.post(f"{PLANS}/{applied['plan_id']}/approve", {}, key=api.owner_key)
    launcher_key = read_credentials(api.client.app[keys.PATHS])[applied["credential_ref"]]
    return world | {
        "repos": str(repos),
        "repo": str(repo),
        "repo_binding": repo_binding,
        "plan": pending["plan_id"],
        "plan_signature": pending["signature"],
        "applied": applied["plan_id"],
        "applied_signature": applied["signature"],
        "foreign_binding": await probe("foreign-demo", foreign_repo, world["foreign_key"]),
        "missing_binding": await probe("missing-demo", repos / "missing"),
        "file_binding": await probe("file-demo", repos / "file.txt"),
        "agent_key": api.agent_key,
        "launcher_key": launcher_key,
        "skill_key": api.new_agent("installer", scopes=[SKILL]),
    }


# -- the baseline: the declared requests succeed -------------------------------------------


@pytest.mark.parametrize("name", list(STARTUP))
async def test_declared_request_succeeds(api, world, name):
    status, data = await send(api, world, STARTUP[name])
    assert status == 200, data


async def test_remove_restores_the_repository_exactly(api, world):
    await succeed(api, world, "remove", "applied")
    assert repo_files(world["repo"]) == {"README.md": README}


# -- authentication, authorization and the Host/Origin guard --------------------------------


@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", list(STARTUP))
async def test_missing_or_invalid_key_is_401(api, world, name, variant):
    key = fill(AUTH_VARIANTS[variant], world)
    await expect_error(api, world, name, 401, key=key, mentions=("API key",))


SCOPE_CASES = [  # (endpoint, a key lacking a scope it needs, that scope)
    *[(name, "{read_key}", SKILL) for name in ("plan", "legacy_plan")],
    *[(name, "{skill_key}", READ) for name in ("plan", "legacy_plan")],
    *[(name, "{agent_key}", OWNER) for name in OWNER_ONLY],
]


@pytest.mark.parametrize("name,key,scope", SCOPE_CASES, ids=[f"{n}-without-{s}" for n, _, s in SCOPE_CASES])
async def test_missing_scope_is_403(api, world, name, key, scope):
    data = await expect_error(api, world, name, 403, key=fill(key, world), mentions=(scope,))
    if scope != OWNER:
        assert data["detail"]["required_scope"] == scope


@pytest.mark.parametrize("name", CONFIRMS)
@pytest.mark.parametrize("key", ["{read_key}", "{write_key}", "{skill_key}"])
async def test_any_key_of_the_workspace_may_confirm(api, world, name, key):
    status, data = await send(api, world, STARTUP[name], key=fill(key, world))
    assert (status, data.get("verified")) == (200, True), data


AGENT_KEYS = {
    "our-agent": "{agent_key}",
    "write-only": "{write_key}",
    "read-only": "{read_key}",
    "same-workspace": "{other_key}",
    "foreign-workspace": "{foreign_key}",
    "launcher-key": "{launcher_key}",
}


@pytest.mark.parametrize("agent", list(AGENT_KEYS))
@pytest.mark.parametrize("name", OWNER_ONLY)
async def test_no_agent_key_reaches_owner_endpoints(api, world, name, agent):
    """Approve, reject and remove (and the owner's lists) refuse every agent key, whatever
    its scopes, including the launcher's own key that approving stored."""
    await expect_error(api, world, name, 403, key=fill(AGENT_KEYS[agent], world), mentions=("owner",))


@pytest.mark.parametrize("name", DECIDING)
@pytest.mark.parametrize("plan", ["plan", "applied"])
async def test_agent_cannot_decide_even_with_a_valid_body(api, world, name, plan):
    await expect_error(
        api,
        world,
        name,
        403,
        key=api.agent_key,
        body={"overwrite": True},
        **aimed_at(name, plan),
        mentions=("owner",),
    )


@pytest.mark.parametrize("variant", list(GUARD))
@pytest.mark.parametrize("name", list(STARTUP))
async def test_foreign_host_or_origin_is_403(api, world, name, variant):
    headers, mention = GUARD[variant]
    await expect_error(api, world, name, 403, headers=headers, mentions=(mention,))


@pytest.mark.parametrize(
    "method,name", [("DELETE", "plan_get"), ("GET", "approve"), ("PUT", "plan"), ("GET", "confirm")]
)
async def test_wrong_method_is_405(api, world, method, name):
    await expect_error(api, world, name, 405, method=method, mentions=(method,))


# -- malformed and oversized bodies ----------------------------------------------------------

POST_CASES = [pytest.param(name, id=name) for name in POSTS]


@pytest.mark.parametrize("variant", list(MALFORMED))
@pytest.mark.parametrize("name", POST_CASES)
async def test_malformed_body_is_400(api, world, name, variant):
    raw, mention = MALFORMED[variant]
    await expect_error(
        api, world, name, 400, raw=raw, headers={"Content-Type": "application/json"}, mentions=(mention,)
    )


@pytest.mark.parametrize("name", POST_CASES)
async def test_body_over_one_mib_is_413(api, world, name):
    await expect_error(api, world, name, 413, raw=OVER_ONE_MIB, mentions=("1048576",))


@pytest.mark.parametrize("name,fieldname", [("plan", "credential_ref"), ("confirm", "notes")])
async def test_lone_surrogate_is_400(api, world, name, fieldname):
    body = {**fill(STARTUP[name].body, world), fieldname: "\ud800 broken"}
    await expect_error(api, world, name, 400, body=body, mentions=("Unicode",))


# -- field validation (422) -----------------------------------------------------------------

PLAN_BODY = {"runtime": "codex", "project_binding_id": "{repo_binding}"}
CONFIRM_BODY = {"plan_id": "{applied}"}
# Every plan field is optional, as in the reference (runtime generic, the workspace's default
# project): only a value of the wrong type or length is refused.
INVALID = [
    # (endpoint, body, offending field, missing_fields or None)
    ("plan", {**PLAN_BODY, "runtime": 5}, "runtime", None),
    ("plan", {**PLAN_BODY, "runtime": ["codex"]}, "runtime", None),
    ("plan", {**PLAN_BODY, "runtime": "x" * 81}, "runtime", None),
    ("plan", {**PLAN_BODY, "project_binding_id": 7}, "project_binding_id", None),
    ("plan", {**PLAN_BODY, "project_binding_id": {"id": "x"}}, "project_binding_id", None),
    ("plan", {**PLAN_BODY, "project_binding_id": "p" * 81}, "project_binding_id", None),
    ("plan", {**PLAN_BODY, "credential_ref": 5}, "credential_ref", None),
    ("plan", {**PLAN_BODY, "credential_ref": ""}, "credential_ref", None),
    ("plan", {**PLAN_BODY, "credential_ref": "c" * 121}, "credential_ref", None),
    ("plan", {**PLAN_BODY, "install_mode": 5}, "install_mode", None),
    ("plan", {**PLAN_BODY, "install_mode": "m" * 81}, "install_mode", None),
    ("plan", {"workspace_id": 5}, "workspace_id", None),
    ("plan", {"project_key": "k" * 161}, "project_key", None),
    ("legacy_plan", {**PLAN_BODY, "runtime": True}, "runtime", None),
    ("legacy_plan", {**PLAN_BODY, "credential_ref": []}, "credential_ref", None),
    ("confirm", {}, "startup_item_id", ["startup_item_id"]),
    ("confirm", {"status": "installed"}, "startup_item_id", ["startup_item_id"]),
    ("confirm", {"plan_id": None, "startup_item_id": None}, "startup_item_id", ["startup_item_id"]),
    ("confirm", {"plan_id": ""}, "startup_item_id", None),
    ("confirm", {"startup_item_id": "abc"}, "startup_item_id", None),
    ("confirm", {"plan_id": 5}, "startup_item_id", None),
    ("confirm", {"plan_id": ["{applied}"]}, "startup_item_id", None),
    ("confirm", {"plan_id": "s" * 81}, "startup_item_id", None),
    ("confirm", {"startup_item_id": 5}, "startup_item_id", None),
    ("confirm", {"hook_install_id": 5}, "startup_item_id", None),
    ("confirm", {"startup_item_id": "{applied}", "hook_install_id": "{plan}"}, "startup_item_id", None),
    ("confirm", {**CONFIRM_BODY, "observed_signature": 5}, "observed_signature", None),
    ("confirm", {**CONFIRM_BODY, "status": 5}, "status", None),
    ("confirm", {**CONFIRM_BODY, "status": "s" * 41}, "status", None),
    ("confirm", {**CONFIRM_BODY, "hook_active": "yes"}, "hook_active", None),
    ("confirm", {**CONFIRM_BODY, "hook_active": 1}, "hook_active", None),
    ("confirm", {**CONFIRM_BODY, "installed_paths": "AGENTS.md"}, "installed_paths", None),
    ("confirm", {**CONFIRM_BODY, "installed_paths": [1]}, "installed_paths", None),
    ("confirm", {**CONFIRM_BODY, "installed_paths": ["a"] * 51}, "installed_paths", None),
    ("confirm", {**CONFIRM_BODY, "notes": {"x": 1}}, "notes", None),
    ("confirm", {**CONFIRM_BODY, "notes": "n" * 1001}, "notes", None),
    ("legacy_confirm", {}, "startup_item_id", ["startup_item_id"]),
    ("legacy_confirm", {"startup_item_id": 5}, "startup_item_id", None),
    ("legacy_confirm", {"startup_item_id": "{applied}", "hook_active": "false"}, "hook_active", None),
    ("approve", {"overwrite": "yes"}, "overwrite", None),
    ("approve", {"overwrite": "true"}, "overwrite", None),
    ("approve", {"overwrite": 1}, "overwrite", None),
    ("approve", {"overwrite": 0}, "overwrite", None),
    ("approve", {"overwrite": []}, "overwrite", None),
]


def _invalid_id(case: Any) -> str:
    name, body, fieldname, _ = case
    value = repr(body.get(fieldname))[:12] if fieldname in body else "missing"
    return f"{name}-{fieldname}={value}"


@pytest.mark.parametrize("name,body,fieldname,missing", INVALID, ids=[_invalid_id(case) for case in INVALID])
async def test_invalid_field_is_422(api, world, name, body, fieldname, missing):
    data = await expect_error(api, world, name, 422, body=body, mentions=(fieldname,))
    if missing:
        assert data["detail"]["missing_fields"] == missing
    else:
        assert data["detail"]["field"] == fieldname


# -- what the plan is for: runtime, binding, repository ---------------------------------------


@pytest.mark.parametrize("runtime", ["emacs", "codex2", "generic;rm", "windsurf"])
@pytest.mark.parametrize("name", ["plan", "legacy_plan"])
async def test_unknown_runtime_plans_the_generic_startup_item(api, world, name, runtime):
    """As the reference does; the answer names the runtimes that have their own."""
    status, data = await send(api, world, STARTUP[name], body={**PLAN_BODY, "runtime": runtime})
    assert status == 200, data
    assert data["runtime"] == data["startup_item"]["runtime_type"] == "generic"
    (warning,) = data["warnings"]
    assert repr(runtime) in warning and all(r in warning for r in RUNTIMES)


REPO_PROBLEMS = [
    # (binding, text in the warning and in the refusal to approve)
    ("binding", "no repo_root"),  # probed without a repo_root
    ("missing_binding", "{repos}/missing does not exist on this machine"),
    ("file_binding", "{repos}/file.txt is not a directory on this machine"),
]


@pytest.mark.parametrize("binding,mention", REPO_PROBLEMS, ids=[c[0] for c in REPO_PROBLEMS])
@pytest.mark.parametrize("name", ["plan", "legacy_plan"])
async def test_a_repository_not_on_this_machine_gets_a_plan_that_cannot_be_approved(
    api, world, name, binding, mention
):
    """The reference returns the plan; it says the path is not here, and approving it is
    refused with a message naming it, nothing written."""
    status, data = await send(
        api, world, STARTUP[name], body={"runtime": "codex", "project_binding_id": f"{{{binding}}}"}
    )
    assert status == 200, data
    assert data["repo_root_exists"] is False and data["startup_item"]["repo_root_exists"] is False
    assert data["approval"]["possible"] is False
    assert any(fill(mention, world) in w for w in data["warnings"]), data["warnings"]
    assert "cannot be approved" in data["copy_for_agent"]
    refused = await expect_error(
        api,
        world,
        "approve",
        400,
        path=f"{PLANS}/{data['plan_id']}/approve",
        mentions=(fill(mention, world), "nothing was written"),
    )
    assert refused["detail"]["repo_root_exists"] is False
    assert api.store.startup.plan(data["plan_id"])["status"] == "pending_approval"


async def test_repo_root_deleted_after_probing_still_gets_a_plan(api, world):
    shutil.rmtree(world["repo"])
    status, data = await send(api, world, STARTUP["plan"])
    assert status == 200, data
    assert data["repo_root_exists"] is False
    assert any(f"{world['repo']} does not exist" in w for w in data["warnings"])


async def test_plan_for_a_repository_with_a_non_utf8_file_is_not_500(api, world):
    agents_md = Path(world["repo"]) / "AGENTS.md"
    agents_md.write_bytes(b"# \xff\xfe notes in Latin-1\n")
    before = repo_files(world["repos"])
    status, data = await send(api, world, STARTUP["plan"], body={**PLAN_BODY, "runtime": "generic"})
    if status == 200:
        errors = {f["path"]: f["error"] for f in data["files"]}
        assert errors["AGENTS.md"], data
    else:
        assert status in (400, 409), data
        assert_envelope(data, status, STARTUP["plan"].path)
        assert "AGENTS.md" in data["error"]["message"]
    assert repo_files(world["repos"]) == before


# -- unknown ids and other workspaces --------------------------------------------------------

NOT_FOUND = [
    # (id, endpoint, path or None, body or None, text the message must contain)
    ("plan-unknown-binding", "plan", None, {**PLAN_BODY, "project_binding_id": "pbind_nope"}, "pbind_nope"),
    (
        "legacy-plan-unknown-binding",
        "legacy_plan",
        None,
        {**PLAN_BODY, "project_binding_id": "pbind_nope"},
        "pbind_nope",
    ),
    ("confirm-unknown-plan_id", "confirm", None, {"plan_id": "splan_nope"}, "splan_nope"),
    ("confirm-unknown-startup_item_id", "confirm", None, {"startup_item_id": "splan_nope"}, "splan_nope"),
    ("confirm-binding-as-plan", "confirm", None, {"plan_id": "{repo_binding}"}, "{repo_binding}"),
    ("legacy-confirm-unknown-plan", "legacy_confirm", None, {"startup_item_id": "splan_nope"}, "splan_nope"),
    ("get-unknown-plan", "plan_get", PLANS + "/splan_nope", None, "splan_nope"),
    ("approve-unknown-plan", "approve", PLANS + "/splan_nope/approve", None, "splan_nope"),
    ("reject-unknown-plan", "reject", PLANS + "/splan_nope/reject", None, "splan_nope"),
    ("remove-unknown-plan", "remove", PLANS + "/splan_nope/remove", None, "splan_nope"),
    ("unknown-plan-action", "plan_get", PLANS + "/{plan}/nope", None, PLANS + "/{plan}/nope"),
]


@pytest.mark.parametrize("name,path,body,mention", [c[1:] for c in NOT_FOUND], ids=[c[0] for c in NOT_FOUND])
async def test_unknown_id_is_404(api, world, name, path, body, mention):
    await expect_error(
        api, world, name, 404, path=path, body=DEFAULT if body is None else body, mentions=(mention,)
    )


F, ME = "{foreign_key}", DEFAULT  # an agent of the foreign workspace, us
CROSS = [
    # (id, endpoint, caller, body or None, status, text in the message)
    # Another workspace's binding or plan looks missing (the reference: "not owned", 404).
    ("foreign-plans-on-our-binding", "plan", F, None, 404, "{repo_binding}"),
    ("foreign-legacy-plans-on-our-binding", "legacy_plan", F, None, 404, "{repo_binding}"),
    ("foreign-confirms-our-plan", "confirm", F, None, 404, "{applied}"),
    ("foreign-legacy-confirms-our-plan", "legacy_confirm", F, None, 404, "{applied}"),
    ("foreign-confirms-our-pending-plan", "confirm", F, {"plan_id": "{plan}"}, 404, "{plan}"),
    ("foreign-plans-in-our-workspace", "plan", F, {"workspace_id": "{workspace}"}, 403, "{workspace}"),
    (
        "foreign-plans-on-unknown-binding",
        "plan",
        F,
        {**PLAN_BODY, "project_binding_id": "pbind_nope"},
        404,
        "pbind_nope",
    ),
    (
        "we-plan-on-foreign-binding",
        "plan",
        ME,
        {**PLAN_BODY, "project_binding_id": "{foreign_binding}"},
        404,
        "{foreign_binding}",
    ),
    ("we-plan-in-an-unknown-workspace", "plan", ME, {"workspace_id": "wsp_nope"}, 404, "wsp_nope"),
]


@pytest.mark.parametrize("name,key,body,status,mention", [c[1:] for c in CROSS], ids=[c[0] for c in CROSS])
async def test_other_workspaces_are_refused(api, world, name, key, body, status, mention):
    key = key if key is DEFAULT else fill(key, world)
    await expect_error(
        api, world, name, status, key=key, body=DEFAULT if body is None else body, mentions=(mention,)
    )


# -- the plan's life: pending -> applied -> installed -> removed, or rejected -----------------

STATE_CONFLICTS = [
    # (id, steps that succeed first, endpoint, plan it is aimed at, text in the message)
    ("approve-twice", [("approve", "plan")], "approve", "plan", "is applied"),
    ("approve-installed", [("confirm", "applied")], "approve", "applied", "is installed"),
    ("approve-rejected", [("reject", "plan")], "approve", "plan", "is rejected"),
    ("approve-removed", [("remove", "applied")], "approve", "applied", "is removed"),
    ("reject-applied", [], "reject", "applied", "is applied"),
    ("reject-installed", [("confirm", "applied")], "reject", "applied", "is installed"),
    ("reject-twice", [("reject", "plan")], "reject", "plan", "is rejected"),
    ("reject-removed", [("remove", "applied")], "reject", "applied", "is removed"),
    ("remove-pending", [], "remove", "plan", "nothing of it is installed"),
    ("remove-rejected", [("reject", "plan")], "remove", "plan", "nothing of it is installed"),
    ("remove-twice", [("remove", "applied")], "remove", "applied", "nothing of it is installed"),
    ("confirm-pending", [], "confirm", "plan", "must be approved first"),
    ("confirm-rejected", [("reject", "plan")], "confirm", "plan", "must be approved first"),
    ("confirm-removed", [("remove", "applied")], "confirm", "applied", "must be approved first"),
    ("legacy-confirm-pending", [], "legacy_confirm", "plan", "must be approved first"),
]


@pytest.mark.parametrize(
    "steps,name,plan,mention", [c[1:] for c in STATE_CONFLICTS], ids=[c[0] for c in STATE_CONFLICTS]
)
async def test_wrong_state_is_409(api, world, steps, name, plan, mention):
    for step, step_plan in steps:
        await succeed(api, world, step, step_plan)
    await expect_error(api, world, name, 409, **aimed_at(name, plan), mentions=(f"{{{plan}}}", mention))


SIGNATURES = {  # variant: world -> the observed_signature sent for the applied plan
    "garbage": lambda world: "hmac-sha256:0000",
    "other-plans": lambda world: world["plan_signature"],
    "upper-case": lambda world: world["applied_signature"].upper(),
    "truncated": lambda world: world["applied_signature"][:-1],
}


async def expect_stale(api, world, name: str, body: Any = DEFAULT) -> dict[str, Any]:
    """A confirmation that does not match the approved plan: answered as the reference
    answers a wrong signature (200, status stale, verified false), and nothing changes."""
    before = snapshot(api, world)
    status, data = await send(api, world, STARTUP[name], body=body)
    assert status == 200, data
    assert (data["status"], data["verified"]) == ("stale", False), data
    assert data["startup_item"]["status"] == "stale" and data["problems"], data
    assert "Nothing was recorded" in data["message"]
    assert_unchanged(before, snapshot(api, world))
    return data


@pytest.mark.parametrize("variant", list(SIGNATURES))
@pytest.mark.parametrize("name", CONFIRMS)
async def test_confirm_with_wrong_signature_is_stale(api, world, name, variant):
    body = {"plan_id": "{applied}", "observed_signature": SIGNATURES[variant](world)}
    data = await expect_stale(api, world, name, body)
    assert "observed_signature does not match" in data["message"]


@pytest.mark.parametrize("name", CONFIRMS)
async def test_confirm_with_an_empty_signature_checks_the_files_only(api, world, name):
    status, data = await send(
        api, world, STARTUP[name], body={"plan_id": "{applied}", "observed_signature": ""}
    )
    assert (status, data["verified"], data["status"]) == (200, True, "installed"), data


Change = Callable[[Path], Any]  # something done to the files of a repository


def _edit(path: str, change: Callable[[str], str]) -> Change:
    def run(repo: Path) -> None:
        target = repo / path
        target.write_text(change(target.read_text()))

    return run


def _delete(path: str) -> Change:
    return lambda repo: (repo / path).unlink()


def _json(path: str, change: Callable[[Any], Any]) -> Change:
    return _edit(path, lambda text: json.dumps(change(json.loads(text))))


def _both(*changes: Change) -> Change:
    return lambda repo: [change(repo) for change in changes]


DRIFT = {
    # variant: (what a person or tool did to the applied codex installation, mismatched paths)
    "agents-block-edited": (
        _edit("AGENTS.md", lambda t: t.replace("## MemoryCloud", "## Our")),
        ["AGENTS.md"],
    ),
    "agents-md-deleted": (_delete("AGENTS.md"), ["AGENTS.md"]),
    "hooks-file-deleted": (_delete(".codex/hooks.json"), [".codex/hooks.json"]),
    "hook-entry-removed": (_json(".codex/hooks.json", lambda d: {"hooks": {}}), [".codex/hooks.json"]),
    "config-not-json": (_edit(".amp/memory-config.json", lambda t: t[:-5]), [".amp/memory-config.json"]),
    "config-url-changed": (
        _json(".amp/memory-config.json", lambda d: {**d, "daemon_url": "http://evil.example"}),
        [".amp/memory-config.json"],
    ),
    "launcher-edited": (
        _edit(".amp/launcher.py", lambda t: t + "\nprint('tampered')\n"),
        [".amp/launcher.py"],
    ),
    "gitignore-deleted": (_delete(".amp/.gitignore"), [".amp/.gitignore"]),
    "two-files": (
        _both(_delete(".amp/launcher.py"), _delete("AGENTS.md")),
        [".amp/launcher.py", "AGENTS.md"],
    ),
}


@pytest.mark.parametrize("variant", list(DRIFT))
@pytest.mark.parametrize("name", CONFIRMS)
async def test_confirm_after_files_changed_on_disk_is_stale(api, world, name, variant):
    change, mismatched = DRIFT[variant]
    change(Path(world["repo"]))
    data = await expect_stale(api, world, name)
    assert data["mismatched"] == mismatched
    assert "do not match" in data["message"]


async def test_confirm_tolerates_edits_outside_the_managed_regions(api, world):
    """Control for the test above: what is not the daemon's may change freely."""
    repo = Path(world["repo"])
    _edit("AGENTS.md", lambda t: "# Our agents\n\n" + t + "\nMore of our notes.\n")(repo)
    _json(".amp/memory-config.json", lambda d: {**d, "our_setting": True})(repo)
    (repo / "README.md").write_text("# changed readme\n")
    status, data = await send(api, world, STARTUP["confirm"])
    assert (status, data.get("status")) == (200, "installed"), data


async def test_remove_after_a_hand_edit_is_409_and_removes_nothing(api, world):
    repo = Path(world["repo"])
    _edit("AGENTS.md", lambda t: t.replace("## MemoryCloud", "## Our"))(repo)
    rows, files = snapshot(api, world)
    status, data = await send(api, world, STARTUP["remove"])
    assert status == 409, data
    assert_envelope(data, 409, fill(STARTUP["remove"].path, world))
    assert [c["path"] for c in data["detail"]["conflicts"]] == ["AGENTS.md"]
    # The refusal is recorded for the person (one open conflict); nothing else changes.
    conflicts = [c for c in api.store.conflicts.conflicts() if c["subject_id"] == world["applied"]]
    assert [c["path"] for c in conflicts] == ["AGENTS.md"]
    expected_rows = {**rows, "conflicts": rows["conflicts"] + 1, "open_conflicts": rows["open_conflicts"] + 1}
    assert_unchanged((expected_rows, files), snapshot(api, world))


@pytest.mark.parametrize("replacement", ["deleted", "a-file"])
async def test_approve_when_the_repository_is_gone_writes_nothing(api, world, replacement):
    # A repository of its own: in {repo}, the applied plan's regions would report the
    # deletion as drift (a 200 "conflict") before anything is written.
    repo = Path(world["repos"]) / "moved"
    repo.mkdir()
    probe = await api.post("/api/agent/project/probe", {"project_key": "moved-demo", "repo_root": str(repo)})
    plan = await api.post(
        "/api/agent/startup-items/install-plan",
        {"runtime": "generic", "project_binding_id": probe["project_binding_id"]},
    )
    shutil.rmtree(repo)
    if replacement == "a-file":
        repo.write_text("the repository moved away\n")
    await expect_error(
        api, world, "approve", (400, 409), path=f"{PLANS}/{plan['plan_id']}/approve", mentions=(str(repo),)
    )
