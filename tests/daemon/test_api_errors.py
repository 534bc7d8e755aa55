"""Bad input on every AMP endpoint: status, amp.error.v1 envelope, and nothing stored.

Every endpoint of daemon/api (except the public text routes /healthz and /agent/start) is
declared once (AUTHED, PUBLIC here; STARTUP in test_startup_api_errors.py; UPDATES in
test_updates_api_errors.py) with a request that succeeds; each error test sends a variation of
it and checks the status, the envelope and that no table changed (helpers.py).
test_every_endpoint_is_covered collects the tables of every tests/daemon/test_*errors.py.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from daemon.api import all_endpoints
from tests.daemon import helpers
from tests.daemon.helpers import (
    AUTH_VARIANTS,
    DEFAULT,
    GUARD,
    MALFORMED,
    OVER_ONE_MIB,
    OWNER,
    READ,
    WRITE,
    Ep,
    assert_envelope,
    base_world,
    fill,
    row_counts,
    send,
    world_fixtures,
)

DECISION = {
    "decision": "use SQLite",
    "context": "local daemon",
    "rationale": "no server",
    "retrieval_triggers": ["sqlite"],
}

AUTHED = {
    "me": Ep("GET", "/api/me"),
    "bindings": Ep("GET", "/api/agent/bindings/me"),
    "profile": Ep("POST", "/api/agent/runtime/profile", {"runtime": "codex"}),  # any key
    "probe": Ep("POST", "/api/agent/project/probe", {"project_key": "demo"}, READ),
    "bootstrap": Ep("POST", "/api/agent/bootstrap/context", {}, READ),
    "refresh": Ep("POST", "/api/agent/bootstrap/refresh", {}, READ),
    "verify": Ep("POST", "/api/agent/bootstrap/verify", {"receipt_id": "{receipt}"}, READ),
    "pack": Ep("GET", "/api/agent/context-packs/{pack}", scope=READ),
    "delta": Ep(
        "POST",
        "/api/agent/memory-delta",
        {"summary": "a change"},
        WRITE,
        {"X-AMP-Context-Receipt": "{receipt}"},
    ),
    "memory": Ep("GET", "/api/agent/memories/{memory}", scope=READ),
    "query": Ep("GET", "/api/workspaces/{workspace}/memory/query?q=seed", scope=READ),
    "brief": Ep("POST", "/api/agent/memory-brief", {"task": "a task"}, READ),
    "brief_get": Ep("GET", "/api/agent/memory-briefs/{brief}", scope=READ),
    "event": Ep("POST", "/api/agent/memory-briefs/{brief}/events", {"summary": "an event"}, WRITE),
    "select": Ep("POST", "/api/memory/router/select", {"task": "ship it", "what_i_remember": "w"}, WRITE),
    "submit": Ep("POST", "/api/memory/forms/{run}/submit", {"payload": DECISION}, WRITE),
    "form": Ep("GET", "/api/memory/forms/{run}"),  # any key of the workspace reads a run
    "status": Ep("GET", "/api/local/status", scope=OWNER),
}
PUBLIC = {
    "schema": Ep("GET", "/api/protocol/schema"),
    "session": Ep("GET", "/api/session"),
    "register": Ep("POST", "/api/agent/register", {"pairing_code": "{pairing_code}"}),
    "challenge": Ep("POST", "/api/agent/challenge", {"intent": "register"}),
    "templates": Ep("GET", "/api/memory/templates"),
}
ALL = {**AUTHED, **PUBLIC}
POSTS = [name for name, ep in ALL.items() if ep.method == "POST"]
SCOPED = [name for name, ep in AUTHED.items() if ep.scope]


async def expect_error(api, world, name: str, status: int, **kwargs) -> dict:
    return await helpers.expect_error(api, world, ALL[name], status, **kwargs)


built_world, api, world = world_fixtures(base_world)


# -- coverage and the baseline: the declared requests succeed ------------------------------


def error_tables() -> dict[str, list[Ep]]:
    """Every endpoint table of the API error tests: the module-level dicts of ``Ep`` rows in
    tests/daemon/test_*errors.py (AUTHED and PUBLIC here, STARTUP, UPDATES, ...)."""
    tables: dict[str, list[Ep]] = {}
    for path in sorted(Path(__file__).parent.glob("test_*errors.py")):
        module = importlib.import_module(f"tests.daemon.{path.stem}")
        for name, value in vars(module).items():
            if isinstance(value, dict) and value and all(isinstance(v, Ep) for v in value.values()):
                tables[f"{path.stem}.{name}"] = list(value.values())
    return tables


def test_every_endpoint_is_covered():
    def shape(method: str, path: str) -> tuple[str, str]:
        return method, re.sub(r"\{\w+\}", "{}", path.split("?")[0])

    tables = error_tables()
    assert {
        "test_api_errors.AUTHED",
        "test_startup_api_errors.STARTUP",
        "test_updates_api_errors.UPDATES",
    } <= set(tables)
    declared = {shape(e.method, e.path) for e in all_endpoints()}
    declared -= {("GET", "/healthz"), ("GET", "/agent/start")}
    covered = {shape(e.method, e.path) for eps in tables.values() for e in eps}
    assert sorted(declared - covered) == [], "endpoints without error tests"
    assert sorted(covered - declared) == [], "error tests for endpoints that do not exist"


@pytest.mark.parametrize("name", list(ALL))
async def test_declared_request_succeeds(api, world, name):
    status, data = await send(api, world, ALL[name])
    assert status == 200, data


# -- authentication, authorization and the Host/Origin guard --------------------------------


@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", list(AUTHED))
async def test_missing_or_invalid_key_is_401(api, world, name, variant):
    key = fill(AUTH_VARIANTS[variant], world)
    await expect_error(api, world, name, 401, key=key, mentions=("API key",))


@pytest.mark.parametrize("variant", ["wrong-key", "revoked-key"])
async def test_session_reports_invalid_key_without_401(api, world, variant):
    status, data = await send(api, world, PUBLIC["session"], key=fill(AUTH_VARIANTS[variant], world))
    assert (status, data["authenticated"]) == (200, False)


@pytest.mark.parametrize("name", SCOPED)
async def test_missing_scope_is_403(api, world, name):
    scope = AUTHED[name].scope
    key = {READ: world["write_key"], WRITE: world["read_key"], OWNER: api.agent_key}[scope]
    data = await expect_error(api, world, name, 403, key=key, mentions=(scope,))
    if scope != OWNER:
        assert data["detail"]["required_scope"] == scope


@pytest.mark.parametrize("variant", list(GUARD))
@pytest.mark.parametrize("name", list(ALL))
async def test_foreign_host_or_origin_is_403(api, world, name, variant):
    headers, mention = GUARD[variant]
    await expect_error(api, world, name, 403, headers=headers, mentions=(mention,))


# -- malformed bodies -----------------------------------------------------------------------


@pytest.mark.parametrize("variant", list(MALFORMED))
@pytest.mark.parametrize("name", POSTS)
async def test_malformed_body_is_400(api, world, name, variant):
    raw, mention = MALFORMED[variant]
    await expect_error(
        api, world, name, 400, raw=raw, headers={"Content-Type": "application/json"}, mentions=(mention,)
    )


@pytest.mark.parametrize("raw,json_type", [(b"null", "null"), (b"[]", "array")], ids=["null", "array"])
async def test_non_object_body_message_uses_json_type_names(api, world, raw, json_type):
    await expect_error(api, world, "delta", 400, raw=raw, mentions=(f"got {json_type}",))


@pytest.mark.parametrize("name", POSTS)
async def test_body_over_one_mib_is_413(api, world, name):
    await expect_error(api, world, name, 413, raw=OVER_ONE_MIB, mentions=("1048576",))


async def test_deeply_nested_json_is_400(api, world):
    raw = b'{"summary": "x", "detail_payload": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    await expect_error(api, world, "delta", 400, raw=raw, mentions=("JSON",))


@pytest.mark.parametrize("name", ["delta", "event", "select", "brief"])
async def test_lone_surrogate_in_text_is_rejected(api, world, name):
    body = dict(fill(ALL[name].body, world))
    body[next(iter(body))] = "\ud800 broken"
    before = row_counts(api)
    status, data = await send(api, world, ALL[name], body=body)
    assert status in (400, 422), data  # 422 naming the field, or 400 from the JSON reader
    assert_envelope(data, status, fill(ALL[name].path, world))
    assert row_counts(api) == before


# -- field validation (422) -----------------------------------------------------------------

LONG = "x" * 5001
INVALID = [
    # (endpoint, body, offending field, missing_fields or None)
    ("profile", {"supports_files": "yes"}, "supports_files", None),
    ("profile", {"metadata": []}, "metadata", None),
    ("profile", {"runtime": 5}, "runtime", None),
    ("profile", {"cwd": "/" * 1001}, "cwd", None),
    ("probe", {"project_key": 5}, "project_key", None),
    ("probe", {"project_key": "p" * 161}, "project_key", None),
    ("probe", {"environment": "x"}, "environment", None),
    ("bootstrap", {"max_items": 0}, "max_items", None),
    ("bootstrap", {"max_items": 101}, "max_items", None),
    ("bootstrap", {"max_items": "5"}, "max_items", None),
    ("bootstrap", {"max_items": 2.5}, "max_items", None),
    ("bootstrap", {"environment": []}, "environment", None),
    ("bootstrap", {"task": LONG}, "task", None),
    ("refresh", {"max_items": True}, "max_items", None),
    ("refresh", {"workspace_id": 42}, "workspace_id", None),
    ("verify", {}, "receipt_id", ["receipt_id"]),
    ("verify", {"receipt_id": None}, "receipt_id", ["receipt_id"]),
    ("verify", {"receipt_id": 7}, "receipt_id", None),
    ("verify", {"receipt_id": ""}, "receipt_id", None),
    ("delta", {}, "summary", ["summary"]),
    ("delta", {"summary": "   "}, "summary", None),
    ("delta", {"summary": "x" * 4001}, "summary", None),
    ("delta", {"summary": "s", "importance": "high"}, "importance", None),
    ("delta", {"summary": "s", "importance": 0}, "importance", None),
    ("delta", {"summary": "s", "importance": 6}, "importance", None),
    ("delta", {"summary": "s", "retrieval_triggers": "x"}, "retrieval_triggers", None),
    ("delta", {"summary": "s", "retrieval_triggers": [1]}, "retrieval_triggers", None),
    ("delta", {"summary": "s", "retrieval_triggers": ["t"] * 21}, "retrieval_triggers", None),
    ("delta", {"summary": "s", "retrieval_triggers": ["t" * 201]}, "retrieval_triggers", None),
    ("delta", {"summary": "s", "detail_payload": []}, "detail_payload", None),
    ("delta", {"summary": "s", "delta_type": ""}, "delta_type", None),
    ("delta", {"summary": "s", "context_receipt_id": 5}, "context_receipt_id", None),
    ("brief", {}, "task", ["task"]),
    ("brief", {"task": "t", "max_items": 51}, "max_items", None),
    ("brief", {"task": "t", "environment": []}, "environment", None),
    ("event", {}, "summary", ["summary"]),
    ("event", {"summary": "s", "importance": "high"}, "importance", None),
    ("event", {"summary": "s", "payload": []}, "payload", None),
    ("event", {"summary": "s", "event_type": " "}, "event_type", None),
    ("select", {}, "task", ["task", "what_i_remember"]),
    ("select", {"task": "ship it"}, "what_i_remember", ["what_i_remember"]),
    ("select", {"task": "abc", "what_i_remember": "w"}, "task", None),
    ("select", {"task": "ship it", "what_i_remember": "w", "project_key": "p" * 121}, "project_key", None),
    ("select", {"task": "ship it", "what_i_remember": "w", "memory_type": "bogus"}, "memory_type", None),
    ("select", {"task": "ship it", "what_i_remember": "w", "environment": []}, "environment", None),
    ("submit", {}, "payload", ["payload"]),
    ("submit", {"payload": []}, "payload", None),
    ("submit", {"payload": "x"}, "payload", None),
    ("submit", {"payload": DECISION, "importance": "high"}, "importance", None),
    ("submit", {"payload": DECISION, "importance": 9}, "importance", None),
    ("submit", {"payload": {}}, "decision", ["decision", "context", "rationale", "retrieval_triggers"]),
    ("submit", {"payload": {**DECISION, "rationale": ""}}, "rationale", ["rationale"]),
    pytest.param(
        "submit",
        {"payload": {**DECISION, "retrieval_triggers": 5}},
        "payload.retrieval_triggers",
        None,
        id="submit-payload.retrieval_triggers=5",
    ),
    ("register", {"pairing_code": 123}, "pairing_code", None),
    ("register", {"pairing_code": "A" * 41}, "pairing_code", None),
]


def _invalid_id(case: Any) -> str:
    name, body, fieldname, _ = case
    return f"{name}-{fieldname}=" + (repr(body.get(fieldname))[:12] if fieldname in body else "missing")


@pytest.mark.parametrize(
    "name,body,fieldname,missing",
    [case if hasattr(case, "marks") else pytest.param(*case, id=_invalid_id(case)) for case in INVALID],
)
async def test_invalid_field_is_422(api, world, name, body, fieldname, missing):
    data = await expect_error(api, world, name, 422, body=body, mentions=(fieldname,))
    if missing:
        assert data["detail"]["missing_fields"] == missing
    else:
        assert data["detail"]["field"] == fieldname


# -- unknown ids and other callers' resources -----------------------------------------------

NOT_FOUND = [
    # (endpoint, path or None, body or None, text the message must contain)
    ("pack", "/api/agent/context-packs/ctxp_nope", None, "ctxp_nope"),
    ("memory", "/api/agent/memories/mem_nope", None, "mem_nope"),
    ("brief_get", "/api/agent/memory-briefs/brief_nope", None, "brief_nope"),
    ("event", "/api/agent/memory-briefs/brief_nope/events", None, "brief_nope"),
    ("submit", "/api/memory/forms/arun_nope/submit", None, "arun_nope"),
    ("form", "/api/memory/forms/arun_nope", None, "arun_nope"),
    ("query", "/api/workspaces/wsp_nope/memory/query?q=x", None, "wsp_nope"),
    ("verify", None, {"receipt_id": "amp_receipt_nope"}, "amp_receipt_nope"),
    ("bootstrap", None, {"project_binding_id": "pbd_nope"}, "pbd_nope"),
    ("refresh", None, {"workspace_id": "wsp_nope"}, "wsp_nope"),
    ("probe", None, {"workspace_id": "wsp_nope"}, "wsp_nope"),
    ("brief", None, {"task": "t", "handoff_code": "bevt_nope"}, "bevt_nope"),
    ("brief", None, {"task": "t", "workspace_id": "wsp_nope"}, "wsp_nope"),
    ("select", None, {"task": "ship it", "what_i_remember": "w", "workspace_id": "wsp_nope"}, "wsp_nope"),
    ("register", None, {"pairing_code": "AAAA-BBBB-CCCC"}, "pairing code"),
    ("me", "/api/no-such-endpoint", None, "/api/no-such-endpoint"),
]


@pytest.mark.parametrize("name,path,body,mention", NOT_FOUND, ids=[f"{c[0]}-{c[3]}" for c in NOT_FOUND])
async def test_unknown_id_is_404(api, world, name, path, body, mention):
    await expect_error(
        api, world, name, 404, path=path, body=DEFAULT if body is None else body, mentions=(mention,)
    )


async def test_wrong_method_is_405(api, world):
    await expect_error(api, world, "me", 405, method="DELETE", mentions=("DELETE", "/api/me"))


O, F, ME = "{other_key}", "{foreign_key}", DEFAULT  # same-workspace agent, foreign workspace, us
CROSS = [
    # (id, endpoint, caller, path or None, body or None, status, text in the message)
    ("other-verifies-our-receipt", "verify", O, None, None, 404, "{receipt}"),
    ("other-reads-our-pack", "pack", O, None, None, 404, "{pack}"),
    ("foreign-verifies-our-receipt", "verify", F, None, None, 404, "{receipt}"),
    ("foreign-reads-our-pack", "pack", F, None, None, 404, "{pack}"),
    ("foreign-reads-our-memory", "memory", F, None, None, 404, "{memory}"),
    ("foreign-reads-our-brief", "brief_get", F, None, None, 404, "{brief}"),
    ("foreign-writes-our-brief", "event", F, None, None, 404, "{brief}"),
    (
        "foreign-hands-off-our-brief",
        "brief",
        F,
        None,
        {"task": "t", "handoff_code": "{brief}"},
        404,
        "{brief}",
    ),
    ("foreign-queries-our-workspace", "query", F, None, None, 403, "{workspace}"),
    ("foreign-submits-our-form", "submit", F, None, None, 403, "{run}"),
    ("foreign-reads-our-form", "form", F, None, None, 403, "{run}"),
    (
        "foreign-bootstraps-our-workspace",
        "bootstrap",
        F,
        None,
        {"workspace_id": "{workspace}"},
        403,
        "{workspace}",
    ),
    (
        "foreign-bootstraps-our-binding",
        "bootstrap",
        F,
        None,
        {"project_binding_id": "{binding}"},
        403,
        "{workspace}",
    ),
    (
        "foreign-refreshes-our-workspace",
        "refresh",
        F,
        None,
        {"workspace_id": "{workspace}"},
        403,
        "{workspace}",
    ),
    ("foreign-probes-our-workspace", "probe", F, None, {"workspace_id": "{workspace}"}, 403, "{workspace}"),
    (
        "foreign-briefs-our-workspace",
        "brief",
        F,
        None,
        {"task": "t", "workspace_id": "{workspace}"},
        403,
        "{workspace}",
    ),
    (
        "foreign-routes-into-our-workspace",
        "select",
        F,
        None,
        {"task": "ship it", "what_i_remember": "w", "workspace_id": "{workspace}"},
        403,
        "{workspace}",
    ),
    (
        "we-verify-others-receipt",
        "verify",
        ME,
        None,
        {"receipt_id": "{other_receipt}"},
        404,
        "{other_receipt}",
    ),
    ("we-read-others-pack", "pack", ME, "/api/agent/context-packs/{other_pack}", None, 404, "{other_pack}"),
    (
        "we-query-foreign-workspace",
        "query",
        ME,
        "/api/workspaces/{foreign_workspace}/memory/query?q=x",
        None,
        403,
        "{foreign_workspace}",
    ),
]


@pytest.mark.parametrize(
    "name,key,path,body,status,mention", [c[1:] for c in CROSS], ids=[c[0] for c in CROSS]
)
async def test_other_callers_resources_are_refused(api, world, name, key, path, body, status, mention):
    key = key if key is DEFAULT else fill(key, world)
    await expect_error(
        api,
        world,
        name,
        status,
        key=key,
        path=path,
        body=DEFAULT if body is None else body,
        mentions=(mention,),
    )


# -- memory-delta receipts (428) -------------------------------------------------------------

RECEIPTS = [
    # (variant, headers, body, reason, mention)
    (
        "no-receipt",
        {"X-AMP-Context-Receipt": ""},
        {"summary": "s"},
        "receipt_missing",
        "X-AMP-Context-Receipt",
    ),
    (
        "blank-header",
        {"X-AMP-Context-Receipt": "   "},
        {"summary": "s"},
        "receipt_missing",
        "X-AMP-Context-Receipt",
    ),
    (
        "unknown-header",
        {"X-AMP-Context-Receipt": "amp_receipt_nope"},
        {"summary": "s"},
        "receipt_unknown",
        "amp_receipt_nope",
    ),
    (
        "unknown-body-field",
        {"X-AMP-Context-Receipt": ""},
        {"summary": "s", "context_receipt_id": "amp_receipt_nope"},
        "receipt_unknown",
        "amp_receipt_nope",
    ),
    (
        "other-agents-receipt",
        {"X-AMP-Context-Receipt": "{other_receipt}"},
        {"summary": "s"},
        "receipt_unknown",
        "{other_receipt}",
    ),
    ("expired", {}, {"summary": "s"}, "receipt_expired", "{receipt}"),
]


@pytest.mark.parametrize("variant,headers,body,reason,mention", RECEIPTS, ids=[c[0] for c in RECEIPTS])
async def test_delta_without_usable_receipt_is_428(api, world, variant, headers, body, reason, mention):
    if variant == "expired":
        with api.store.transaction():
            api.store.conn.execute(
                "update receipts set expires_at = ? where id = ?", ("2000-01-01T00:00:00Z", world["receipt"])
            )
    data = await expect_error(api, world, "delta", 428, headers=headers, body=body, mentions=(mention,))
    assert data["detail"]["schema"] == "amp.bootstrap-required.v1"
    assert data["reason"] == data["detail"]["reason"] == reason
    assert data["bootstrap_url"] == "/api/agent/bootstrap/context"


async def test_delta_with_foreign_agents_receipt_is_428(api, world):
    await expect_error(api, world, "delta", 428, key=world["foreign_key"], mentions=("{receipt}",))


# -- query parameters -------------------------------------------------------------------------

# Without q the query lists the newest records, and a limit outside 1..30 is clamped, as the
# reference does (test_workspace_reads_api_errors.py): only these are refused.
QUERY_PARAMS = [
    ("?q=" + "x" * 2001, 400, "'q'"),
    ("?q=x&limit=abc", 422, "'limit'"),
    ("?q=x&limit=2.5", 422, "'limit'"),
]


@pytest.mark.parametrize(
    "query,status,mention", QUERY_PARAMS, ids=[f"{c[1]}-{c[0][:20] or 'no-q'}" for c in QUERY_PARAMS]
)
async def test_bad_query_parameter(api, world, query, status, mention):
    await expect_error(
        api,
        world,
        "query",
        status,
        path="/api/workspaces/{workspace}/memory/query" + query,
        mentions=(mention,),
    )


# -- state-dependent refusals -----------------------------------------------------------------


async def test_form_submitted_twice_is_409(api, world):
    status, _ = await send(api, world, AUTHED["submit"])
    assert status == 200
    await expect_error(api, world, "submit", 409, mentions=("{run}", "already submitted"))


@pytest.mark.parametrize(
    "body", [{}, {"pairing_code": ""}, {"pairing_code": None}], ids=["no-code", "empty-code", "null-code"]
)
async def test_register_without_pairing_code_is_403(api, world, body):
    data = await expect_error(api, world, "register", 403, key=None, body=body, mentions=("pairing code",))
    assert data["detail"]["pairing_required"] is True


@pytest.mark.parametrize("variant", ["used", "expired"])
async def test_register_with_spent_pairing_code_is_410(api, world, variant):
    if variant == "used":
        status, _ = await send(api, world, PUBLIC["register"], key=None)
        assert status == 200
    else:
        with api.store.transaction():
            api.store.conn.execute("update pairing_codes set expires_at = '2000-01-01T00:00:00Z'")
    await expect_error(api, world, "register", 410, key=None, mentions=(variant,))


async def test_register_for_a_taken_agent_name_is_409(api, world):
    with api.store.transaction():
        code = api.store.identities.create_pairing_code("test-agent", "codex")["pairing_code"]
    await expect_error(
        api, world, "register", 409, key=None, body={"pairing_code": code}, mentions=("test-agent",)
    )
