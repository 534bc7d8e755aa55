"""Bad input on the platform-update, sync-intent, memory-tool and agent-navigation endpoints
(daemon/api/amp_updates.py) and their owner-only local counterparts (daemon/api/local.py):
status, amp.error.v1 envelope, and nothing stored (helpers.py; its row counts include updates,
acks and sync intents with their statuses).

Same scheme as test_api_errors.py: every endpoint is declared once (UPDATES) with a request that
succeeds in the world below, and each error test sends a variation of it. Four endpoints take
an optional key (manifest, autostart, discovery, navigation): a missing, unknown, revoked or
malformed key is not refused there, the caller is simply anonymous.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.daemon import helpers
from tests.daemon.helpers import (
    AUTH_VARIANTS,
    DEFAULT,
    GUARD,
    MALFORMED,
    OVER_ONE_MIB,
    OWNER,
    Ep,
    assert_envelope,
    base_world,
    fill,
    send,
    snapshot,
    world_fixtures,
)
from tests.daemon.test_updates_and_sync import blocked_write, publish

SKILL = "skill:install"
INTENTS = "/api/agent/sync-intents"

UPDATES = {
    "manifest": Ep("GET", "/api/agent/updates/manifest"),
    "check": Ep(
        "GET", "/api/agent/updates/check", headers={"X-MemoryCloud-Runtime-Version": "2026.06.01-old.1"}
    ),
    "ack": Ep("POST", "/api/agent/updates/ack", {"update_ids": ["{update}"], "seen_version": "v1"}),
    "intents": Ep("GET", INTENTS + "?status=blocked"),
    "intent": Ep("GET", INTENTS + "/{intent}"),
    "resume": Ep("POST", INTENTS + "/{intent}/resume", {}),
    "discard": Ep("POST", INTENTS + "/{intent}/discard", {}),
    "skills": Ep("GET", "/api/agent/skills"),  # public, as the reference's catalog
    "skill_manifest": Ep("GET", "/api/agent/skills/{skill}"),  # public too
    "skill_md": Ep("GET", "/api/agent/skills/{skill}/skill.md", scope=SKILL),
    "skill_pull": Ep("GET", "/api/agent/skills/{skill}/pull", scope=SKILL),
    "autostart": Ep("GET", "/api/agent/autostart"),
    "discovery": Ep("GET", "/api/agent/discovery"),
    "start_json": Ep("GET", "/agent/start.json"),  # the reference's paths of the same
    "discovery_json": Ep("GET", "/agent/discovery.json"),
    "navigation": Ep("GET", "/api/agent/navigation"),
    "local_updates": Ep("GET", "/api/local/updates", scope=OWNER),
    "publish": Ep(
        "POST", "/api/local/updates", {"title": "t", "summary": "s", "severity": "required"}, OWNER
    ),
    "agent_ack": Ep(
        "POST", "/api/local/agents/{agent_name}/updates/ack", {"update_ids": ["{update}"]}, OWNER
    ),
    "local_intents": Ep("GET", "/api/local/sync-intents?status=blocked", scope=OWNER),
}
OPTIONAL = [
    "manifest",
    "autostart",
    "discovery",
    "navigation",
    "skills",
    "skill_manifest",
    "start_json",
    "discovery_json",
]
AUTHED = [name for name in UPDATES if name not in OPTIONAL]
POSTS = [name for name, ep in UPDATES.items() if ep.method == "POST"]
OWNER_ONLY = [name for name, ep in UPDATES.items() if ep.scope == OWNER]


async def expect_error(api, world, name: str, status: int | tuple[int, ...], **kwargs) -> dict:
    return await helpers.expect_error(api, world, UPDATES[name], status, **kwargs)


async def build_world(api) -> dict[str, str]:
    """The base world, then a required update {update} published after every agent was
    created (so all of them have it pending); our agent's important brief event held back as
    {intent} and the same for "other-agent" ({other_intent}); then the owner acks the update
    for our agent, so {intent} can be resumed."""
    world = await base_world(api)
    update = await publish(api, version="2026.07.01-world.1")
    _, ours = await blocked_write(api)
    _, theirs = await blocked_write(api, key=world["other_key"])
    await api.post("/api/local/agents/test-agent/updates/ack", {}, key=api.owner_key)
    return world | {
        "update": update["update_id"],
        "intent": ours["sync_intent_id"],
        "other_intent": theirs["sync_intent_id"],
        "skill": "memory_tool_installer",
        "agent_name": "test-agent",
        "skill_key": api.new_agent("installer", scopes=[SKILL]),
    }


built_world, api, world = world_fixtures(build_world)
# -- the baseline: the declared requests succeed -------------------------------------------


@pytest.mark.parametrize("name", list(UPDATES))
async def test_declared_request_succeeds(api, world, name):
    status, data = await send(api, world, UPDATES[name])
    assert status == 200, data


# -- authentication, authorization and the Host/Origin guard --------------------------------


@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", AUTHED)
async def test_missing_or_invalid_key_is_401(api, world, name, variant):
    key = fill(AUTH_VARIANTS[variant], world)
    await expect_error(api, world, name, 401, key=key, mentions=("API key",))


@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", OPTIONAL)
async def test_optional_auth_treats_a_bad_key_as_anonymous(api, world, name, variant):
    """No 401 where the key is optional: the answer is exactly the anonymous one (no update
    notice, not a known agent), although our real key would get the notice there."""
    before = snapshot(api, world)
    anonymous = await send(api, world, UPDATES[name], key=None)
    status, data = await send(api, world, UPDATES[name], key=fill(AUTH_VARIANTS[variant], world))
    timeless = lambda d: {k: v for k, v in d.items() if k != "generated_at"}  # noqa: E731
    assert (status, timeless(data)) == (anonymous[0], timeless(anonymous[1]))
    # The onboarding documents carry the notice for anyone; it names no agent's updates.
    notice = data.get("platform_update_notice")
    assert status == 200 and (notice is None or notice["status"] == "check_after_connecting")
    if name == "autostart":
        assert data["known_agent"] is False
    if name == "navigation":
        assert [s["do"] for s in data["next"]] == ["connect"]
    helpers.assert_unchanged(before, snapshot(api, world))


@pytest.mark.parametrize("name", ["autostart", "discovery", "navigation"])
async def test_optional_auth_with_a_valid_key_knows_the_agent(api, world, name):
    """Control for the test above: the agent that still has an update pending gets the
    notice (other-agent: the owner acked only for ours)."""
    status, data = await send(api, world, UPDATES[name], key=world["other_key"])
    assert status == 200
    assert data["platform_update_notice"]["update_ids"] == [world["update"]]


@pytest.mark.parametrize(
    "key,scope",
    [("{read_key}", SKILL), ("{write_key}", SKILL), ("{skill_key}", "catalog:read")],
    ids=["read-only", "write-only", "skill-install-only"],
)
@pytest.mark.parametrize("name", ["skill_pull", "skill_md"])
async def test_missing_skill_scope_is_403(api, world, name, key, scope):
    """A pull needs skill:install and the skill's own scopes (memory_tool_installer:
    catalog:read)."""
    data = await expect_error(api, world, name, 403, key=fill(key, world), mentions=(scope,))
    assert data["detail"]["required_scope"] == scope


AGENT_KEYS = {
    "our-agent": "{agent_key}",
    "write-only": "{write_key}",
    "read-only": "{read_key}",
    "same-workspace": "{other_key}",
    "foreign-workspace": "{foreign_key}",
}


@pytest.mark.parametrize("agent", list(AGENT_KEYS))
@pytest.mark.parametrize("name", OWNER_ONLY)
async def test_no_agent_key_reaches_owner_endpoints(api, world, name, agent):
    world = world | {"agent_key": api.agent_key}
    await expect_error(api, world, name, 403, key=fill(AGENT_KEYS[agent], world), mentions=("owner",))


@pytest.mark.parametrize("variant", list(GUARD))
@pytest.mark.parametrize("name", list(UPDATES))
async def test_foreign_host_or_origin_is_403(api, world, name, variant):
    headers, mention = GUARD[variant]
    await expect_error(api, world, name, 403, headers=headers, mentions=(mention,))


@pytest.mark.parametrize(
    "method,name",
    [
        ("GET", "ack"),
        ("DELETE", "intent"),
        ("GET", "resume"),
        ("PUT", "publish"),
        ("POST", "check"),
        ("GET", "agent_ack"),
        ("POST", "skill_manifest"),
        ("DELETE", "skill_md"),
    ],
)
async def test_wrong_method_is_405(api, world, method, name):
    await expect_error(api, world, name, 405, method=method, mentions=(method,))


# -- malformed and oversized bodies ----------------------------------------------------------


@pytest.mark.parametrize("variant", list(MALFORMED))
@pytest.mark.parametrize("name", POSTS)
async def test_malformed_body_is_400(api, world, name, variant):
    raw, mention = MALFORMED[variant]
    await expect_error(
        api, world, name, 400, raw=raw, headers={"Content-Type": "application/json"}, mentions=(mention,)
    )


@pytest.mark.parametrize("name", POSTS)
async def test_body_over_one_mib_is_413(api, world, name):
    await expect_error(api, world, name, 413, raw=OVER_ONE_MIB, mentions=("1048576",))


@pytest.mark.parametrize(
    "name,fieldname", [("ack", "seen_version"), ("publish", "title"), ("agent_ack", "seen_version")]
)
async def test_lone_surrogate_is_400(api, world, name, fieldname):
    body = {**fill(UPDATES[name].body, world), fieldname: "\ud800 broken"}
    await expect_error(api, world, name, 400, body=body, mentions=("Unicode",))


# -- field validation (422) -----------------------------------------------------------------

PUBLISH = {"title": "t", "summary": "s", "severity": "required"}
INVALID = [
    # (endpoint, body, offending field, missing_fields or None)
    ("ack", {"update_ids": "x"}, "update_ids", None),
    ("ack", {"update_ids": "{update}"}, "update_ids", None),
    ("ack", {"update_ids": [1]}, "update_ids", None),
    ("ack", {"update_ids": ["{update}", 2]}, "update_ids", None),
    ("ack", {"update_ids": [True]}, "update_ids", None),
    ("ack", {"update_ids": [None]}, "update_ids", None),
    ("ack", {"update_ids": {"id": "{update}"}}, "update_ids", None),
    ("ack", {"update_ids": ["u"] * 101}, "update_ids", None),
    ("ack", {"update_ids": ["u" * 81]}, "update_ids", None),
    ("ack", {"update_ids": [], "seen_version": 5}, "seen_version", None),
    ("ack", {"update_ids": [], "seen_version": ["v"]}, "seen_version", None),
    ("ack", {"update_ids": [], "seen_version": "v" * 121}, "seen_version", None),
    ("publish", {}, "title", ["title", "summary"]),
    ("publish", {"title": "t"}, "summary", ["summary"]),
    ("publish", {**PUBLISH, "title": ""}, "title", None),
    ("publish", {**PUBLISH, "title": "   "}, "title", None),
    ("publish", {**PUBLISH, "title": "t" * 201}, "title", None),
    ("publish", {**PUBLISH, "summary": "s" * 4001}, "summary", None),
    ("publish", {**PUBLISH, "summary": 5}, "summary", None),
    ("publish", {**PUBLISH, "severity": "urgent"}, "severity", None),
    ("publish", {**PUBLISH, "severity": "Required"}, "severity", None),
    ("publish", {**PUBLISH, "severity": ""}, "severity", None),
    ("publish", {**PUBLISH, "severity": 1}, "severity", None),
    ("publish", {**PUBLISH, "version": 2}, "version", None),
    ("publish", {**PUBLISH, "version": "v" * 121}, "version", None),
    ("publish", {**PUBLISH, "requires_repull": "memory_tool_installer"}, "requires_repull", None),
    ("publish", {**PUBLISH, "requires_repull": [1]}, "requires_repull", None),
    ("publish", {**PUBLISH, "requires_repull": ["s"] * 21}, "requires_repull", None),
    ("publish", {**PUBLISH, "next_actions": [{"do": "x"}]}, "next_actions", None),
    ("publish", {**PUBLISH, "next_actions": ["a" * 501]}, "next_actions", None),
    ("agent_ack", {"update_ids": "x"}, "update_ids", None),
    ("agent_ack", {"update_ids": [1]}, "update_ids", None),
    ("agent_ack", {"seen_version": []}, "seen_version", None),
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


@pytest.mark.parametrize(
    "query", ["?status=bogus", "?status=BLOCKED", "?status=blocked,resumed", "?status=%20blocked"]
)
@pytest.mark.parametrize("name", ["intents", "local_intents"])
async def test_bad_status_filter_is_422(api, world, name, query):
    path = UPDATES[name].path.split("?")[0] + query
    data = await expect_error(api, world, name, 422, path=path, mentions=("'status'",))
    assert data["detail"]["field"] == "status"


@pytest.mark.parametrize("name", ["intents", "local_intents"])
async def test_empty_status_filter_lists_everything(api, world, name):
    status, data = await send(api, world, UPDATES[name], path=UPDATES[name].path.split("?")[0] + "?status=")
    assert status == 200
    assert world["intent"] in [i["sync_intent_id"] for i in data["sync_intents"]]


# -- unknown ids ------------------------------------------------------------------------------

NOT_FOUND = [
    # (id, endpoint, path or None, body or None, text the message must contain)
    ("agent-ack-unknown-agent", "agent_ack", "/api/local/agents/nobody/updates/ack", None, "nobody"),
    (
        "agent-ack-revoked-agent",
        "agent_ack",
        "/api/local/agents/revoked-agent/updates/ack",
        None,
        "revoked-agent",
    ),
    ("intent-unknown", "intent", INTENTS + "/syncint_nope", None, "syncint_nope"),
    ("resume-unknown", "resume", INTENTS + "/syncint_nope/resume", None, "syncint_nope"),
    ("discard-unknown", "discard", INTENTS + "/syncint_nope/discard", None, "syncint_nope"),
    ("skill-unknown", "skill_pull", "/api/agent/skills/nope/pull", None, "nope"),
    ("skill-manifest-unknown", "skill_manifest", "/api/agent/skills/nope", None, "nope"),
    ("skill-md-unknown", "skill_md", "/api/agent/skills/nope/skill.md", None, "nope"),
    ("unknown-intent-action", "intent", INTENTS + "/{intent}/nope", None, INTENTS + "/{intent}/nope"),
]


@pytest.mark.parametrize("name,path,body,mention", [c[1:] for c in NOT_FOUND], ids=[c[0] for c in NOT_FOUND])
async def test_unknown_id_is_404(api, world, name, path, body, mention):
    data = await expect_error(
        api, world, name, 404, path=path, body=DEFAULT if body is None else body, mentions=(mention,)
    )
    if name in ("ack", "agent_ack") and body:
        assert data["detail"]["unknown"] == ["upd_nope"]


@pytest.mark.parametrize(
    "body",
    [{"update_ids": ["upd_nope"]}, {"update_ids": ["{update}", "upd_nope"]}],
    ids=["unknown", "known-and-unknown"],
)
@pytest.mark.parametrize("name", ["ack", "agent_ack"])
async def test_ack_of_an_unknown_update_is_400_and_acks_nothing(api, world, body, name):
    """As the reference answers: the request names an update that does not exist."""
    data = await expect_error(api, world, name, 400, body=body, mentions=("upd_nope",))
    assert data["detail"]["unknown"] == ["upd_nope"]


O, F, ME = "{other_key}", "{foreign_key}", DEFAULT  # same-workspace agent, foreign workspace, us
CROSS = [
    # (id, endpoint, caller, path or None, text in the message)
    ("other-reads-our-intent", "intent", O, None, "{intent}"),
    ("other-resumes-our-intent", "resume", O, None, "{intent}"),
    ("other-discards-our-intent", "discard", O, None, "{intent}"),
    ("foreign-reads-our-intent", "intent", F, None, "{intent}"),
    ("foreign-resumes-our-intent", "resume", F, None, "{intent}"),
    ("foreign-discards-our-intent", "discard", F, None, "{intent}"),
    ("we-read-others-intent", "intent", ME, INTENTS + "/{other_intent}", "{other_intent}"),
    ("we-resume-others-intent", "resume", ME, INTENTS + "/{other_intent}/resume", "{other_intent}"),
    ("we-discard-others-intent", "discard", ME, INTENTS + "/{other_intent}/discard", "{other_intent}"),
]


@pytest.mark.parametrize("name,key,path,mention", [c[1:] for c in CROSS], ids=[c[0] for c in CROSS])
async def test_other_agents_intents_are_not_found(api, world, name, key, path, mention):
    key = key if key is DEFAULT else fill(key, world)
    await expect_error(api, world, name, 404, key=key, path=path, mentions=(mention,))


async def test_other_agents_do_not_list_our_intents(api, world):
    for key in (world["other_key"], world["foreign_key"]):
        status, data = await send(api, world, UPDATES["intents"], key=key)
        assert status == 200
        assert world["intent"] not in [i["sync_intent_id"] for i in data["sync_intents"]]


# -- state-dependent refusals -----------------------------------------------------------------


def _succeeds(name: str):
    async def step(api, world) -> None:
        status, data = await send(api, world, UPDATES[name])
        assert status == 200, data

    return step


async def _publish_another_required(api, world) -> None:
    await publish(api)


STATE_CONFLICTS = [
    # (id, steps that succeed first, endpoint, text in the message)
    ("resume-twice", [_succeeds("resume")], "resume", "already resumed"),
    ("resume-after-discard", [_succeeds("discard")], "resume", "already discarded"),
    ("resume-with-a-new-required-update", [_publish_another_required], "resume", "still pending"),
]


@pytest.mark.parametrize(
    "steps,name,mention", [c[1:] for c in STATE_CONFLICTS], ids=[c[0] for c in STATE_CONFLICTS]
)
async def test_wrong_state_is_409(api, world, steps, name, mention):
    for step in steps:
        await step(api, world)
    await expect_error(api, world, name, 409, mentions=(mention,))


async def test_resume_before_the_ack_is_409(api, world):
    """other-agent still has the update pending: its own intent is kept."""
    path = INTENTS + "/{other_intent}/resume"
    data = await expect_error(
        api, world, "resume", 409, key=world["other_key"], path=path, mentions=("still pending",)
    )
    assert data["detail"]["sync_intent_id"] == world["other_intent"]
    assert [u["update_id"] for u in data["detail"]["required_updates"]] == [world["update"]]


async def test_resume_after_expiry_is_410_and_marks_it_expired(api, world):
    with api.store.transaction():
        api.store.conn.execute(
            "update sync_intents set expires_at = '2001-01-01T00:00:00.000Z' where id = ?", (world["intent"],)
        )
    rows, files = snapshot(api, world)
    status, data = await send(api, world, UPDATES["resume"])
    assert status == 410, data
    assert_envelope(data, 410, fill(UPDATES["resume"].path, world))
    assert world["intent"] in data["error"]["message"] and "expired" in data["error"]["message"]
    # The only change: the intent is now marked expired (nothing was written).
    statuses = rows["intent_statuses"].replace(f"{world['intent']}:blocked", f"{world['intent']}:expired")
    helpers.assert_unchanged(({**rows, "intent_statuses": statuses}, files), snapshot(api, world))
    await expect_error(api, world, "resume", 409, mentions=("already expired",))
    status, kept = await send(api, world, UPDATES["discard"])  # as the reference: no error,
    assert status == 200 and kept["discarded"] is False and kept["status"] == "expired"


async def test_owner_cannot_ack_for_itself(api, world):
    await expect_error(api, world, "ack", 400, key=api.owner_key, mentions=("ack for an agent",))


# -- the 409 of the gate itself ----------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["memory_brief_event", "adaptive_memory_submit"])
async def test_gate_409_keeps_the_envelope(api, world, endpoint):
    """The interrupt is an amp.error.v1 envelope whose detail (also merged at the top level,
    like 428's) is the amp.sync-interrupt.v1 body; the only change is the stored intent."""
    _, data = await blocked_write(api, endpoint, key=world["other_key"])
    error = data["error"]
    assert error["status"] == 409 and error["type"] == "sync_interrupted"
    assert error["id"].startswith("err_") and error["message"].strip()
    assert data["detail"]["schema"] == data["schema"] == "amp.sync-interrupt.v1"
    assert data["detail"]["sync_intent_id"] == data["sync_intent_id"]
