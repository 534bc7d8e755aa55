"""Bad input on the sync extension (daemon/api/sync_feed.py: what downstream daemons call with
agent keys, on the caller's own workspace) and on the owner-only local upstream API
(daemon/api/local_upstream.py: connect this daemon to an upstream, sync, ack, discard).

Same scheme as test_api_errors.py: every endpoint is declared once (SYNC, UPSTREAM) with a
request that succeeds in the world below; each error test sends a variation of it and checks
the status, the amp.error.v1 envelope and that nothing changed: helpers.py's row counts, and
here also the upstream tables, the connection and its key in the secret store.

For an UPSTREAM endpoint (a test's ``name`` parameter) the world also holds a second real
daemon, in the cloud role, that this one is connected to (as in test_upstream_sync.py), a
required update pending there that the daemon cannot apply alone, and the brief event that
update held back: the interrupted outbox entry {seq}. That world costs two HTTP clients and a
sync round, so the variations of one kind (the AUTH_VARIANTS, GUARD, MALFORMED ...) run in a
loop inside one test per endpoint, each checked on its own (``variation`` names the failing
one), rather than one test each.

A background sync the daemon schedules ~1 s after local writes may run during a test; it
changes none of what is compared (the outbox has nothing pending then, the update stays
pending): checked by hand with a 1.6 s pause between the snapshots.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from daemon import keys
from state.config import Settings
from state.identities import AGENT_SCOPES, SYNC_SCOPE
from state.secrets import open_secret_store
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
    base_world,
    fill,
    send,
)
from tests.daemon.test_upstream_sync import start_side

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

RECORDS = "/api/sync/records"
SYNC = {
    "info": Ep("GET", "/api/sync/info", scope=READ),
    "changes": Ep("GET", "/api/sync/changes?cursor=0&limit=50", scope=READ),
    "create": Ep(
        "POST",
        RECORDS,
        {"origin_memory_id": "laptop-mem-1", "kind": "document", "content": "# Runbook: restart the worker"},
        SYNC_SCOPE,
    ),
    "change": Ep(
        "POST",
        RECORDS + "/{memory}",
        {"operation": "update", "base_version": 1, "content": "seed memory, edited"},
        SYNC_SCOPE,
    ),
    "redact": Ep("POST", RECORDS + "/{memory}/redact", {"content_sha256": "{memory_sha}"}, SYNC_SCOPE),
}
BASE = "/api/local/upstream"
UPSTREAM = {
    "status": Ep("GET", BASE, scope=OWNER),
    # the same upstream again, with the key this daemon got there
    "connect": Ep("POST", BASE + "/connect", {"url": "{cloud_url}", "api_key": "{cloud_key}"}, OWNER),
    "disconnect": Ep("POST", BASE + "/disconnect", scope=OWNER),
    "sync": Ep("POST", BASE + "/sync", scope=OWNER),
    "ack": Ep("POST", BASE + "/updates/ack", {"update_ids": ["{update}"]}, OWNER),
    "discard": Ep("POST", BASE + "/outbox/{seq}/discard", scope=OWNER),
}
ALL = {**SYNC, **UPSTREAM}
# disconnect, sync and discard have no request body (one sent there is not read)
BODIED = [name for name, ep in ALL.items() if ep.body is not None]

# What a failed request must also leave as it was (helpers.ROW_COUNTS has none of it).
UPSTREAM_ROWS = {
    # string_agg with its order: both engines have it (SQLite from 3.44).
    "outbox": "select string_agg(seq || ':' || status, ' ' order by seq) from upstream_outbox",
    "links": "select count(*) from upstream_links",
    "connection": "select string_agg(key || '=' || value, ' ' order by key) from upstream_state"
    " where key in ('url', 'credential_ref', 'local_workspace_id', 'upstream_identity_id',"
    " 'pending_updates', 'applied_updates')",
    "changelog": "select count(*) from sync_changelog",
    "idempotent_responses": "select count(*) from idempotent_responses",
}


def upstream_snapshot(api) -> dict[str, Any]:
    found = {name: api.store.conn.execute(sql).fetchone()[0] for name, sql in UPSTREAM_ROWS.items()}
    ref = api.store.upstream.get("credential_ref")
    secrets = open_secret_store(api.client.app[keys.PATHS].secrets_file)
    return found | {"upstream_key": ref and secrets.get(ref)}


async def expect_error(api, world, name: str, status: int | tuple[int, ...], **kwargs) -> dict:
    before = upstream_snapshot(api)
    data = await helpers.expect_error(api, world, ALL[name], status, **kwargs)
    now = upstream_snapshot(api)
    changed = {k: (before[k], now[k]) for k in before if before[k] != now[k]}
    assert not changed, f"a failed request changed the upstream state: {changed}"
    return data


@contextmanager
def variation(label: str) -> Iterator[None]:
    """One of several variations sent in one test: its failure names it."""
    try:
        yield
    except AssertionError as exc:
        raise AssertionError(f"[{label}] {exc}") from exc


# -- the world ------------------------------------------------------------------------------


async def connect_upstream(api, cloud, world: dict[str, str]) -> dict[str, str]:
    """Connect to `cloud` with a pairing code; then a required update there that only a person
    can apply, and our agent's important brief event, which it holds back (interrupted)."""
    with cloud.store.transaction():
        code = cloud.store.identities.create_pairing_code("laptop", "memorycloud_companion")
    await api.post(
        BASE + "/connect", {"url": cloud.url, "pairing_code": code["pairing_code"]}, key=api.owner_key
    )
    update = await cloud.local(
        "POST",
        "/api/local/updates",
        {"title": "Read the new policy", "summary": "a person must read it", "severity": "required"},
    )
    await api.post(
        f"/api/agent/memory-briefs/{world['brief']}/events",
        {"event_type": "decision", "summary": "freeze on Thursday", "importance": 5},
    )
    status = await api.post(BASE + "/sync", key=api.owner_key)
    (interrupted,) = status["interrupted"]
    assert [u["update_id"] for u in status["pending_updates"]] == [update["update_id"]], status
    (sent,) = api.store.upstream.entries("sent")  # base_world's memory delta
    secrets = open_secret_store(api.client.app[keys.PATHS].secrets_file)
    return {
        "cloud_url": cloud.url,
        "cloud_key": secrets.get(status["credential_ref"]),
        "update": update["update_id"],
        "seq": str(interrupted["seq"]),
        "sent_seq": str(sent["seq"]),
    }


@pytest.fixture
async def world(request, api, tmp_path):
    """The base world, the SHA-256 of {memory}'s content and {foreign_memory}, a record of the
    foreign workspace; if the test's `name` parameter is an UPSTREAM endpoint, also the
    connected cloud daemon (connect_upstream)."""
    # The fixture's agent is a companion daemon (sync:write), as a paired one would be.
    with api.store.transaction():
        api.agent, api.agent_key = api.store.identities.create_agent(
            "companion-daemon", "memorycloud_companion", scopes=[*AGENT_SCOPES, SYNC_SCOPE]
        )
    world = await base_world(api)
    with api.store.transaction():
        api.store.conn.execute(
            "update identities set scopes = ? where name = 'foreign-agent'",
            (json.dumps([*AGENT_SCOPES, SYNC_SCOPE]),),
        )
    foreign = await api.post(
        RECORDS,
        {"origin_memory_id": "f-1", "kind": "note", "content": "foreign workspace note"},
        key=world["foreign_key"],
    )
    world |= {
        "memory_sha": api.store.memories.get(world["memory"])["content_sha256"],
        "foreign_memory": foreign["record"]["memory_id"],
    }
    params = getattr(getattr(request.node, "callspec", None), "params", {})
    if params.get("name") not in UPSTREAM:
        yield world
        return
    cloud = await start_side(tmp_path / "cloud", Settings(role="cloud"), "teammate")
    try:
        yield world | await connect_upstream(api, cloud, world)
    finally:
        await cloud.client.close()


# -- the baseline: the declared requests succeed -------------------------------------------


@pytest.mark.parametrize("name", list(ALL))
async def test_declared_request_succeeds(api, world, name):
    status, data = await send(api, world, ALL[name])
    assert status == 200, data


# -- authentication, authorization and the Host/Origin guard --------------------------------


@pytest.mark.parametrize("name", list(ALL))
async def test_missing_or_invalid_key_is_401(api, world, name):
    for variant, key in AUTH_VARIANTS.items():
        with variation(variant):
            await expect_error(api, world, name, 401, key=fill(key, world), mentions=("API key",))


@pytest.mark.parametrize("name", list(SYNC))
async def test_missing_scope_is_403(api, world, name):
    scope = SYNC[name].scope
    # memory:write is not enough for the extension's writes: they need sync:write
    key = world["write_key"] if scope in (READ, SYNC_SCOPE) else world["read_key"]
    data = await expect_error(api, world, name, 403, key=key, mentions=(scope,))
    assert data["detail"]["required_scope"] == scope


AGENT_KEYS = {
    "our-agent": "{agent_key}",
    "write-only": "{write_key}",
    "read-only": "{read_key}",
    "same-workspace": "{other_key}",
    "foreign-workspace": "{foreign_key}",
}


@pytest.mark.parametrize("name", list(UPSTREAM))
async def test_no_agent_key_reaches_the_upstream_api(api, world, name):
    world = world | {"agent_key": api.agent_key}
    for agent, key in AGENT_KEYS.items():
        with variation(agent):
            await expect_error(api, world, name, 403, key=fill(key, world), mentions=("only the owner",))


@pytest.mark.parametrize("name", list(ALL))
async def test_foreign_host_or_origin_is_403(api, world, name):
    for variant, (headers, mention) in GUARD.items():
        with variation(variant):
            await expect_error(api, world, name, 403, headers=headers, mentions=(mention,))


@pytest.mark.parametrize(
    "method,name", [("GET", "create"), ("PUT", "change"), ("POST", "info"), ("DELETE", "discard")]
)
async def test_wrong_method_is_405(api, world, method, name):
    await expect_error(api, world, name, 405, method=method, mentions=(method,))


# -- malformed and oversized bodies ----------------------------------------------------------


@pytest.mark.parametrize("name", BODIED)
async def test_malformed_body_is_400(api, world, name):
    for variant, (raw, mention) in MALFORMED.items():
        with variation(variant):
            await expect_error(
                api,
                world,
                name,
                400,
                raw=raw,
                headers={"Content-Type": "application/json"},
                mentions=(mention,),
            )
    fieldname = {
        "create": "content",
        "change": "content",
        "redact": "content_sha256",
        "connect": "url",
        "ack": "update_ids",
    }[name]
    with variation("lone-surrogate"):
        body = {**fill(ALL[name].body, world), fieldname: "\ud800 broken"}
        await expect_error(api, world, name, 400, body=body, mentions=("Unicode",))


@pytest.mark.parametrize("name", BODIED)
async def test_body_over_one_mib_is_413(api, world, name):
    await expect_error(api, world, name, 413, raw=OVER_ONE_MIB, mentions=("1048576",))


# -- field validation (422) -----------------------------------------------------------------

NEW = {"origin_memory_id": "o-1", "kind": "note", "content": "c"}
UPDATE = {"operation": "update", "base_version": 1, "content": "x"}
INVALID = [
    # (endpoint, body, offending field, missing_fields or None)
    ("create", {}, "origin_memory_id", ["origin_memory_id", "kind", "content"]),
    ("create", {"origin_memory_id": "o-1", "kind": "note"}, "content", ["content"]),
    ("create", {**NEW, "origin_memory_id": "   "}, "origin_memory_id", None),
    ("create", {**NEW, "origin_memory_id": "o" * 81}, "origin_memory_id", None),
    ("create", {**NEW, "origin_memory_id": 7}, "origin_memory_id", None),
    ("create", {**NEW, "kind": ["note"]}, "kind", None),
    ("create", {**NEW, "kind": ""}, "kind", None),
    ("create", {**NEW, "content": 5}, "content", None),
    ("create", {**NEW, "title": "t" * 401}, "title", None),
    ("create", {**NEW, "importance": 6}, "importance", None),
    ("create", {**NEW, "importance": "3"}, "importance", None),
    ("create", {**NEW, "triggers": [1]}, "triggers", None),
    ("create", {**NEW, "triggers": ["t"] * 51}, "triggers", None),
    ("create", {**NEW, "provenance": "laptop"}, "provenance", None),
    ("change", {}, "operation", ["operation", "base_version"]),
    ("change", {"operation": "delete"}, "base_version", ["base_version"]),
    ("change", {**UPDATE, "operation": 1}, "operation", None),
    ("change", {**UPDATE, "base_version": 0}, "base_version", None),
    ("change", {**UPDATE, "base_version": "1"}, "base_version", None),
    ("change", {**UPDATE, "base_version": 2**31 + 1}, "base_version", None),
    ("change", {**UPDATE, "content": 5}, "content", None),
    ("change", {**UPDATE, "importance": 9}, "importance", None),
    ("redact", {}, "content_sha256", ["content_sha256"]),
    ("redact", {"content_sha256": "abc"}, "content_sha256", None),
    ("redact", {"content_sha256": "a" * 65}, "content_sha256", None),
    ("connect", {}, "url", ["url"]),
    ("connect", {"url": 5}, "url", None),
    ("connect", {"url": "{cloud_url}", "backfill": "no"}, "backfill", None),
    ("ack", {"update_ids": [1]}, "update_ids", None),
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
    "query,fieldname",
    [
        ("?cursor=-1", "cursor"),
        ("?cursor=1.5", "cursor"),
        ("?cursor=%E2%91%A0", "cursor"),
        ("?cursor=" + "9" * 20, "cursor"),
        ("?limit=0", "limit"),
        ("?limit=1001", "limit"),
    ],
)
async def test_bad_feed_query_is_422(api, world, query, fieldname):
    data = await expect_error(
        api, world, "changes", 422, path="/api/sync/changes" + query, mentions=(f"'{fieldname}'",)
    )
    assert data["detail"]["field"] == fieldname


@pytest.mark.parametrize(
    "body,mention",
    [
        ({**UPDATE, "operation": "merge"}, "'update' or 'delete'"),
        ({**UPDATE, "operation": "UPDATE"}, "'update' or 'delete'"),
        ({"operation": "update", "base_version": 1}, "needs 'content'"),
    ],
    ids=["merge", "upper-case", "update-without-content"],
)
async def test_bad_operation_is_400(api, world, body, mention):
    await expect_error(api, world, "change", 400, body=body, mentions=(mention,))


# -- unknown ids and other workspaces --------------------------------------------------------

O, F, ME = "{other_key}", "{foreign_key}", DEFAULT  # same-workspace agent, foreign workspace, us
NOT_FOUND = [
    # (id, endpoint, caller, path or None, text in the message)
    ("change-unknown", "change", ME, RECORDS + "/mem_nope", "mem_nope"),
    ("redact-unknown", "redact", ME, RECORDS + "/mem_nope/redact", "mem_nope"),
    ("foreign-changes-ours", "change", F, None, "{memory}"),
    ("foreign-redacts-ours", "redact", F, None, "{memory}"),
    ("we-change-foreign", "change", ME, RECORDS + "/{foreign_memory}", "{foreign_memory}"),
    ("we-redact-foreign", "redact", ME, RECORDS + "/{foreign_memory}/redact", "{foreign_memory}"),
    ("unknown-record-action", "redact", ME, RECORDS + "/{memory}/nope", RECORDS + "/{memory}/nope"),
]


@pytest.mark.parametrize("name,key,path,mention", [c[1:] for c in NOT_FOUND], ids=[c[0] for c in NOT_FOUND])
async def test_unknown_or_foreign_record_is_404(api, world, name, key, path, mention):
    key = key if key is DEFAULT else fill(key, world)
    await expect_error(api, world, name, 404, key=key, path=path, mentions=(mention,))


async def test_each_agent_sees_and_changes_its_own_workspace(api, world):
    """Control for the 404s above: the same-workspace agent sees {memory} in the feed, the
    foreign one only its own record, which it may change."""

    def ids(data: dict[str, Any]) -> set[str]:
        return {c["memory_id"] for c in data["changes"]}

    _, ours = await send(api, world, SYNC["changes"], key=world["other_key"])
    _, theirs = await send(api, world, SYNC["changes"], key=world["foreign_key"])
    assert world["memory"] in ids(ours) and world["foreign_memory"] not in ids(ours)
    assert ids(theirs) == {world["foreign_memory"]}
    status, data = await send(
        api, world, SYNC["change"], key=world["foreign_key"], path=RECORDS + "/{foreign_memory}"
    )
    assert status == 200 and data["changed"], data


# -- base versions (409) ----------------------------------------------------------------------


async def _update(api, world) -> None:
    status, data = await send(api, world, SYNC["change"])
    assert status == 200 and data["record"]["version"] == 2, data


async def _delete(api, world) -> None:
    status, data = await send(api, world, SYNC["change"], body={"operation": "delete", "base_version": 1})
    assert status == 200 and data["record"]["deleted"], data


STALE = [
    # (id, step that succeeds first, body, text in the message, details.current's version)
    ("update-on-a-stale-base", _update, {**UPDATE, "content": "another edit"}, "since version 1", 2),
    ("delete-on-a-stale-base", _update, {"operation": "delete", "base_version": 1}, "since version 1", 2),
    ("update-ahead-of-the-record", None, {**UPDATE, "base_version": 5}, "since version 5", 1),
    ("update-after-a-delete", _delete, {**UPDATE, "base_version": 2}, "was deleted", 2),
]


@pytest.mark.parametrize("step,body,mention,version", [c[1:] for c in STALE], ids=[c[0] for c in STALE])
async def test_stale_base_version_is_409_with_the_current_record(api, world, step, body, mention, version):
    if step:
        await step(api, world)
    data = await expect_error(api, world, "change", 409, body=body, mentions=(mention,))
    current = data["detail"]["current"]
    assert (current["memory_id"], current["version"]) == (world["memory"], version)


# -- the upstream: connecting, acking, the outbox ---------------------------------------------


@pytest.mark.parametrize("name", ["connect"])
async def test_connect_to_a_bad_url_is_400(api, world, name):
    for url in ("ftp://x", "memory.example.com", "http://", "https:///path", "file:///etc"):
        with variation(url):
            await expect_error(api, world, name, 400, body={"url": url}, mentions=("https://",))


async def _discard(api, world) -> None:
    status, data = await send(api, world, UPSTREAM["discard"])
    assert status == 200 and data["status"] == "discarded", data


REFUSED = [
    # (id, endpoint, step that succeeds first, parts of the request, text in the message)
    ("another-upstream", "connect", None, {"body": {"url": "http://127.0.0.1:9"}}, "disconnect first"),
    (
        "wrong-key-there",
        "connect",
        None,
        {"body": {"url": "{cloud_url}", "api_key": "mca_not-a-real-key"}},
        "refused",
    ),
    (
        "unknown-pairing-code",
        "connect",
        None,
        {"body": {"url": "{cloud_url}", "pairing_code": "0000-0000-0000"}},
        "refused",
    ),
    ("ack-an-unknown-update", "ack", None, {"body": {"update_ids": ["upd_nope"]}}, "refused the ack"),
    ("discard-a-sent-entry", "discard", None, {"path": BASE + "/outbox/{sent_seq}/discard"}, "already sent"),
    ("discard-twice", "discard", _discard, {}, "already discarded"),
]


@pytest.mark.parametrize("name,step,parts,mention", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
async def test_upstream_refusal_is_409(api, world, name, step, parts, mention):
    if step:
        await step(api, world)
    await expect_error(api, world, name, 409, mentions=(mention,), **parts)


@pytest.mark.parametrize("name", ["discard"])
async def test_unknown_outbox_entry_is_404(api, world, name):
    for seq in ("999999", "0", "abc", "-1", "1.5", "1e3"):
        with variation(seq):
            await expect_error(
                api,
                world,
                name,
                404,
                path=BASE + f"/outbox/{seq}/discard",
                mentions=(f"outbox entry {seq} not found",),
            )


@pytest.mark.parametrize("name", ["discard"])
async def test_odd_outbox_seq_is_404(api, world, name):
    for seq in ("\N{SUPERSCRIPT TWO}", "\N{ARABIC-INDIC DIGIT ONE}", "9" * 23):
        with variation(seq):
            await expect_error(api, world, name, 404, path=BASE + f"/outbox/{seq}/discard", mentions=(seq,))


# Without an upstream: the parameter is `endpoint`, not `name`, so this world is not connected.
@pytest.mark.parametrize(
    "endpoint,mention",
    [("ack", "memorycloud upstream connect"), ("disconnect", "memorycloud upstream connect")],
)
async def test_without_an_upstream_is_409(api, world, endpoint, mention):
    await expect_error(api, world, endpoint, 409, body={}, mentions=(mention,))


@pytest.mark.parametrize("endpoint", ["status", "sync"])
async def test_without_an_upstream_status_and_sync_say_so(api, world, endpoint):
    """Not errors: `memorycloud upstream status|sync` print "no upstream connected
    (memorycloud upstream connect URL)" from this answer."""
    before = helpers.snapshot(api, world), upstream_snapshot(api)
    status, data = await send(api, world, UPSTREAM[endpoint])
    assert status == 200 and data["connected"] is False, data
    assert data.get("outcome", "no upstream") == "no upstream"
    helpers.assert_unchanged(before[0], helpers.snapshot(api, world))
    assert upstream_snapshot(api) == before[1]
