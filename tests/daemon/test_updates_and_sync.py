"""Platform updates, the sync gate and its intents, update notices and the job board, against
the real app and store (the ``api`` fixture of tests/conftest.py).

Policy under test (daemon/runtime/updates.py): an update is pending for an agent created before
this installation learned of it, until the agent acks it at the update's own version (or, for
the check only, reports it applied or reports a runtime version at least as new). With a
*required* update pending, an agent's write of importance >= 4 to a gated endpoint is held back
as a sync intent (409 amp.sync-interrupt.v1); a less important one is written with a warning; a
person's (the owner key's) writes are never gated. After the ack, resuming replays the held
write exactly once.

Note on timing: the ``api`` fixture's app loads the shipped updates when it starts, before it
creates "test-agent", so the shipped updates are not pending for that agent; tests publish
their own updates (after the agents exist), or backdate an agent to simulate one that predates
the shipped manifest.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from multidict import CIMultiDict

from daemon import keys
from daemon.jobs import JobBoard
from daemon.runtime.constants import RUNTIME_VERSION
from daemon.runtime.updates import SHIPPED, UpdateService
from state import update_records
from state.ids import iso_from_datetime, now_iso, parse_iso

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

DECISION = {
    "decision": "use SQLite",
    "context": "local daemon",
    "rationale": "no server",
    "retrieval_triggers": ["sqlite"],
}
OLD_TIME = "2000-01-01T00:00:00.000Z"
UPDATE_VERSION = "2026.07.01-receipts.1"


def path_of(url: str) -> str:
    """The path of an absolute URL the daemon gave (the test client takes paths)."""
    return urlsplit(url).path


# -- helpers -------------------------------------------------------------------------------


async def after_existing_identities(api) -> None:
    """Bounded wait until the clock is past the newest identity's creation millisecond, so an
    update published next is unambiguously newer than every existing agent."""
    newest = api.store.conn.execute("select max(created_at) from identities").fetchone()[0]
    deadline = time.monotonic() + 2
    while now_iso() <= newest:
        assert time.monotonic() < deadline, "the clock did not advance"
        await asyncio.sleep(0.001)


async def publish(api, severity: str = "required", **fields: Any) -> dict[str, Any]:
    await after_existing_identities(api)
    body = {"title": f"{severity} update", "summary": "apply it", "severity": severity, **fields}
    return await api.post("/api/local/updates", body, key=api.owner_key)


async def check(api, headers: dict[str, str] | None = None, key: str | None = None) -> dict[str, Any]:
    response = await api.client.get("/api/agent/updates/check", headers={**api.auth(key), **(headers or {})})
    data = await response.json()
    assert response.status == 200, data
    return data


def pending_ids(data: dict[str, Any]) -> list[str]:
    return [u["update_id"] for u in data["pending_updates"]]


def ack_rows(api, identity_id: str | None = None) -> list[tuple]:
    identity_id = identity_id or api.agent["id"]
    return [
        tuple(r)
        for r in api.store.conn.execute(
            "select update_id, update_version, seen_version, acked_by from update_acks"
            " where identity_id = ? order by update_id",
            (identity_id,),
        )
    ]


def count(api, table: str) -> int:
    return api.store.conn.execute(f"select count(*) from {table}").fetchone()[0]


def intent_status(api, intent_id: str) -> str:
    return api.store.conn.execute("select status from sync_intents where id = ?", (intent_id,)).fetchone()[0]


def backdate(api, identity_id: str, when: str = OLD_TIME) -> None:
    """Make an identity look as if it was created before this installation learned of any
    update (an agent from an older release)."""
    with api.store.transaction():
        api.store.conn.execute("update identities set created_at = ? where id = ?", (when, identity_id))


_ID = re.compile(r"\b[a-z]+_[0-9a-f]{32}\b")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def normalized(value: Any) -> Any:
    """A response with ids, timestamps and content hashes replaced by placeholders, so two
    equivalent writes compare equal."""
    if isinstance(value, dict):
        return {k: "<hash>" if k == "content_sha256" else normalized(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if isinstance(value, str):
        return _TIME.sub("<time>", _ID.sub("<id>", value))
    return value


class Writes:
    """The two gated endpoints, as (setup, send, stored-count) per endpoint."""

    def __init__(self, api) -> None:
        self.api = api

    async def target(self, endpoint: str, key: str | None = None) -> str:
        """A fresh brief (events) or memory-form run (submit) owned by the key's caller."""
        if endpoint == "memory_brief_event":
            return (await self.api.post("/api/agent/memory-brief", {"task": "ship it"}, key=key))["brief_id"]
        run = await self.api.post(
            "/api/memory/router/select",
            {"task": "ship it", "what_i_remember": "w", "memory_type": "decision_memory"},
            key=key,
        )
        return run["run_id"]

    @staticmethod
    def path(endpoint: str, target: str) -> str:
        return (
            f"/api/agent/memory-briefs/{target}/events"
            if endpoint == "memory_brief_event"
            else f"/api/memory/forms/{target}/submit"
        )

    @staticmethod
    def body(endpoint: str, importance: int) -> dict[str, Any]:
        if endpoint == "memory_brief_event":
            return {
                "summary": f"freeze main (importance {importance})",
                "event_type": "decision",
                "importance": importance,
                "payload": {"branch": "main"},
            }
        return {"payload": dict(DECISION), "importance": importance}

    def stored(self, endpoint: str) -> int:
        table = "brief_events" if endpoint == "memory_brief_event" else "memory_records"
        return count(self.api, table)

    async def send(
        self, endpoint: str, target: str, importance: int, key: str | None = None, status: int | None = None
    ):
        response = await self.api.client.post(
            self.path(endpoint, target), json=self.body(endpoint, importance), headers=self.api.auth(key)
        )
        data = await response.json()
        if status is not None:
            assert response.status == status, data
        return response.status, data


GATED = ["memory_brief_event", "adaptive_memory_submit"]


async def blocked_write(
    api, endpoint: str = "memory_brief_event", importance: int = 5, key: str | None = None
) -> tuple[str, dict[str, Any]]:
    """An important write held back by a pending required update: (target, 409 body)."""
    writes = Writes(api)
    target = await writes.target(endpoint, key)
    _, data = await writes.send(endpoint, target, importance, key=key, status=409)
    return target, data


# -- check: every header variant -------------------------------------------------------------


async def test_check_lists_a_published_update_with_what_to_do(api):
    update = await publish(
        api, requires_repull=["memory_tool_installer"], next_actions=["send receipts"], version=UPDATE_VERSION
    )
    data = await check(api)
    assert data["schema"] == "amp.platform-update-check.v1"
    assert data["has_pending_updates"] is True
    assert data["client_runtime_version"] is None and data["client_applied_updates"] == []
    (pending,) = data["pending_updates"]
    assert pending["update_id"] == update["update_id"] and pending["version"] == UPDATE_VERSION
    assert pending["severity"] == "required" and pending["source"] == "local"
    assert data["next_actions"] == [
        "re-pull skill memory_tool_installer: GET /api/agent/skills/memory_tool_installer/pull",
        "send receipts",
        "POST /api/agent/updates/ack with the update_ids you applied",
    ]
    assert data["ack"] == {
        "endpoint": "/api/agent/updates/ack",
        "body": {"update_ids": [update["update_id"]], "seen_version": RUNTIME_VERSION},
    }
    assert data["acked_updates"] == {} and data["acks"] == []
    assert ack_rows(api) == []  # checking writes nothing


RUNTIME_NAMES = [
    "X-MemoryCloud-Runtime-Version",
    "X-Cloudmemory-Runtime-Version",
    "x-memorycloud-runtime-version",
    "X-CLOUDMEMORY-RUNTIME-VERSION",
]
VERSIONS = {  # client runtime version -> is UPDATE_VERSION (2026.07.01-receipts.1) still pending?
    "2026.06.07-startup-item-primary.1": True,  # older (the shipped runtime)
    "2026.07.01-receipts.0": True,  # older in the last part
    "2026.07.01": True,  # a prefix is older
    "2026.07.01-receipts.1": False,  # equal
    "2026.07.01-receipts.2": False,  # newer in the last part
    "2026.07.01-receipts.10": False,  # numbers compare as numbers, not text
    "2026.12.31-later.1": False,  # newer
    "  2027.01.01-later.1  ": False,  # surrounding spaces are ignored
}


@pytest.mark.parametrize("version,pending", list(VERSIONS.items()), ids=[v.strip() for v in VERSIONS])
@pytest.mark.parametrize("name", RUNTIME_NAMES)
async def test_check_with_runtime_version_header(api, name, version, pending):
    update = await publish(api, version=UPDATE_VERSION)
    data = await check(api, {name: version})
    assert data["client_runtime_version"] == version.strip()
    assert pending_ids(data) == ([update["update_id"]] if pending else [])
    assert data["has_pending_updates"] is pending


async def test_runtime_version_compares_against_each_updates_own_version(api):
    old = await publish(api, version="2026.06.20-a.1")
    new = await publish(api, severity="recommended", version="2026.07.20-b.1")
    data = await check(api, {"X-MemoryCloud-Runtime-Version": "2026.07.01-between.1"})
    assert pending_ids(data) == [new["update_id"]]
    assert pending_ids(await check(api)) == [old["update_id"], new["update_id"]]


@pytest.mark.parametrize(
    "new,legacy,pending",
    [
        ("2099.01.01-future.1", "2000.01.01-past.1", False),
        ("2000.01.01-past.1", "2099.01.01-future.1", True),
        ("", "2099.01.01-future.1", False),  # an empty new header falls back to the legacy one
    ],
    ids=["new-newer", "new-older", "new-empty"],
)
async def test_new_runtime_header_takes_precedence_over_legacy(api, new, legacy, pending):
    update = await publish(api, version=UPDATE_VERSION)
    data = await check(api, {"X-MemoryCloud-Runtime-Version": new, "X-Cloudmemory-Runtime-Version": legacy})
    assert pending_ids(data) == ([update["update_id"]] if pending else [])


APPLIED_NAMES = [
    "X-MemoryCloud-Applied-Updates",
    "X-Cloudmemory-Applied-Updates",
    "x-cloudmemory-applied-updates",
]
APPLIED_VALUES = {
    # header value ({u} = the published update) -> (u still pending?, client_applied_updates)
    "{u}": (False, ["{u}"]),
    "  {u}  ": (False, ["{u}"]),
    "{u},upd_other": (False, ["{u}", "upd_other"]),
    "upd_other , {u} ,": (False, ["{u}", "upd_other"]),
    "upd_a,  upd_b ,{u},,": (False, ["{u}", "upd_a", "upd_b"]),
    "upd_other": (True, ["upd_other"]),
    "{u}x": (True, ["{u}x"]),  # ids match exactly, not by prefix
    " , ,": (True, []),
}


@pytest.mark.parametrize("value", list(APPLIED_VALUES), ids=list(APPLIED_VALUES))
@pytest.mark.parametrize("name", APPLIED_NAMES)
async def test_check_with_applied_updates_header(api, name, value):
    update = (await publish(api, version=UPDATE_VERSION))["update_id"]
    pending, applied = APPLIED_VALUES[value]
    data = await check(api, {name: value.format(u=update)})
    assert pending_ids(data) == ([update] if pending else [])
    assert data["client_applied_updates"] == sorted(a.format(u=update) for a in applied)
    assert ack_rows(api) == []  # reporting an update applied is not an ack


async def test_applied_headers_new_and_legacy_are_combined(api):
    first = (await publish(api))["update_id"]
    second = (await publish(api, severity="recommended"))["update_id"]
    third = (await publish(api))["update_id"]
    data = await check(
        api,
        {"X-MemoryCloud-Applied-Updates": f"{first}, upd_x", "X-Cloudmemory-Applied-Updates": f" {second} "},
    )
    assert pending_ids(data) == [third]
    assert data["client_applied_updates"] == sorted([first, second, "upd_x"])


@pytest.mark.parametrize("name", ["X-MemoryCloud-Applied-Updates", "X-Cloudmemory-Applied-Updates"])
async def test_applied_updates_header_sent_as_several_lines(api, name):
    first = (await publish(api))["update_id"]
    second = (await publish(api))["update_id"]
    headers = CIMultiDict([*api.auth().items(), (name, first), (name, second)])
    response = await api.client.get("/api/agent/updates/check", headers=headers)
    data = await response.json()
    assert data["client_applied_updates"] == sorted([first, second])
    assert pending_ids(data) == []


async def test_runtime_and_applied_headers_together(api):
    old = (await publish(api, version="2026.06.20-a.1"))["update_id"]
    new = (await publish(api, version="2026.07.20-b.1"))["update_id"]
    newest = (await publish(api, version="2026.08.20-c.1"))["update_id"]
    data = await check(
        api, {"X-Cloudmemory-Runtime-Version": "2026.07.01-x.1", "X-MemoryCloud-Applied-Updates": new}
    )
    assert pending_ids(data) == [newest]
    assert old not in pending_ids(data)


# -- ack: idempotence and per-update versions --------------------------------------------------


async def test_ack_is_stored_at_the_updates_own_version_and_is_idempotent(api):
    update = await publish(api, version=UPDATE_VERSION)
    first = await api.post(
        "/api/agent/updates/ack", {"update_ids": [update["update_id"]], "seen_version": "client-1"}
    )
    assert first["acked_now"] == [update["update_id"]]
    assert first["has_pending_updates"] is False and first["pending_updates"] == []
    assert [(a["update_id"], a["version"], a["seen_version"]) for a in first["acks"]] == [
        (update["update_id"], UPDATE_VERSION, "client-1")
    ]

    second = await api.post(
        "/api/agent/updates/ack", {"update_ids": [update["update_id"]], "seen_version": "client-2"}
    )
    assert second["acked_now"] == []
    assert ack_rows(api) == [(update["update_id"], UPDATE_VERSION, "client-1", api.agent["id"])]
    assert second["acks"] == first["acks"]  # the first ack's seen_version is kept


async def test_ack_with_duplicate_ids_stores_one_row(api):
    update = (await publish(api))["update_id"]
    result = await api.post("/api/agent/updates/ack", {"update_ids": [update, update]})
    assert result["acked_now"] == [update]
    assert len(ack_rows(api)) == 1


async def test_ack_without_ids_acks_every_pending_update(api):
    required = (await publish(api))["update_id"]
    recommended = (await publish(api, severity="recommended"))["update_id"]
    result = await api.post("/api/agent/updates/ack", {})
    assert sorted(result["acked_now"]) == sorted([required, recommended])
    # Only what was pending: the shipped updates predate this agent, so they are not acked.
    assert sorted(r[0] for r in ack_rows(api)) == sorted([required, recommended])
    assert (await api.post("/api/agent/updates/ack", {}))["acked_now"] == []


async def test_ack_with_an_unknown_id_acks_nothing(api):
    update = (await publish(api))["update_id"]
    data = await api.post("/api/agent/updates/ack", {"update_ids": [update, "upd_nope"]}, status=400)
    assert data["detail"]["unknown"] == ["upd_nope"]
    assert ack_rows(api) == []
    assert pending_ids(await check(api)) == [update]


async def test_acks_survive_a_runtime_bump_per_update_version(api):
    """An agent from the previous release (backdated) acks the shipped updates; a later release
    ships a new update with a newer version: the first stay acked at their own version (with the
    seen_version the agent reported), only the new one is pending."""
    backdate(api, api.agent["id"])
    shipped = [u["id"] for u in SHIPPED]
    assert sorted(pending_ids(await check(api))) == sorted(shipped)
    # A client already on this runtime version has nothing to do for the shipped updates.
    assert pending_ids(await check(api, {"X-MemoryCloud-Runtime-Version": RUNTIME_VERSION})) == []

    acked = await api.post("/api/agent/updates/ack", {"update_ids": shipped, "seen_version": RUNTIME_VERSION})
    assert sorted(acked["acked_now"]) == sorted(shipped)

    next_version = "2026.09.01-next-release.1"
    with api.store.transaction():  # what load_shipped of the next release would insert
        api.store.updates.upsert_update(
            {
                "id": "upd_20260901_next_release",
                "version": next_version,
                "severity": "required",
                "title": "Next release",
                "summary": "something new",
                "source": "builtin",
                "requires_repull": [],
                "next_actions": [],
            }
        )
    data = await check(api)
    assert pending_ids(data) == ["upd_20260901_next_release"]
    assert {(a["update_id"], a["version"], a["seen_version"]) for a in data["acks"]} == {
        (u["id"], u["version"], RUNTIME_VERSION) for u in SHIPPED
    }
    # The old runtime version header does not hide the newer update; the new one does.
    assert pending_ids(await check(api, {"X-MemoryCloud-Runtime-Version": RUNTIME_VERSION})) == [
        "upd_20260901_next_release"
    ]
    assert pending_ids(await check(api, {"X-MemoryCloud-Runtime-Version": next_version})) == []

    await api.post("/api/agent/updates/ack", {"update_ids": [], "seen_version": next_version})
    assert {(r[0], r[1], r[2]) for r in ack_rows(api)} == {
        *((u["id"], u["version"], RUNTIME_VERSION) for u in SHIPPED),
        ("upd_20260901_next_release", next_version, next_version),
    }
    assert (await check(api))["has_pending_updates"] is False


async def test_shipped_updates_load_once(api):
    services = api.client.app[keys.SERVICES]
    assert services.updates.load_shipped() == 0  # the app loaded them at start
    builtin = [u for u in api.store.updates.updates() if u["source"] == "builtin"]
    assert sorted(u["id"] for u in builtin) == sorted(u["id"] for u in SHIPPED)


async def test_agent_created_after_an_update_has_nothing_pending(api):
    await publish(api)
    await publish(api, severity="recommended")
    later_key = api.new_agent("later-agent")
    data = await check(api, key=later_key)
    assert data["has_pending_updates"] is False and data["pending_updates"] == []
    assert "platform_update_notice" not in await api.get("/api/me", key=later_key)  # none pending
    # ... so its important writes are not gated either.
    writes = Writes(api)
    brief = await writes.target("memory_brief_event", later_key)
    _, written = await writes.send("memory_brief_event", brief, 5, key=later_key, status=200)
    assert "update_notice" not in written


async def test_owner_check_has_nothing_and_owner_cannot_ack_for_itself(api):
    await publish(api)
    data = await check(api, key=api.owner_key)
    assert data["has_pending_updates"] is False
    refused = await api.post("/api/agent/updates/ack", {}, key=api.owner_key, status=400)
    assert "ack for an agent" in refused["error"]["message"]
    assert count(api, "update_acks") == 0


# -- owner acks for an agent (local API) ------------------------------------------------------


@pytest.mark.parametrize("by", ["name", "id"])
async def test_owner_acks_for_an_agent(api, by):
    required = (await publish(api))["update_id"]
    recommended = (await publish(api, severity="recommended"))["update_id"]
    other_key = api.new_agent("other-agent")
    listed = await api.get("/api/local/updates", key=api.owner_key)
    pending = {a["name"]: a["pending"] for a in listed["agents"]}
    assert pending == {"test-agent": [required, recommended], "other-agent": []}

    agent = api.agent["name"] if by == "name" else api.agent["id"]
    result = await api.post(
        f"/api/local/agents/{agent}/updates/ack",
        {"update_ids": [required], "seen_version": "by-hand"},
        key=api.owner_key,
    )
    assert result["acked_now"] == [required]
    assert pending_ids(result) == [recommended]
    owner_id = api.store.identities.owner()["id"]
    assert ack_rows(api) == [(required, result["acks"][0]["version"], "by-hand", owner_id)]
    assert pending_ids(await check(api)) == [recommended]
    assert count(api, "update_acks") == 1  # nothing for other agents
    assert (await check(api, key=other_key))["has_pending_updates"] is False

    everything = await api.post(f"/api/local/agents/{agent}/updates/ack", {}, key=api.owner_key)
    assert everything["acked_now"] == [recommended] and everything["has_pending_updates"] is False
    listed = await api.get("/api/local/updates", key=api.owner_key)
    assert {a["name"]: a["pending"] for a in listed["agents"]} == {"test-agent": [], "other-agent": []}


async def test_local_updates_list_has_its_own_schema(api):
    listed = await api.get("/api/local/updates", key=api.owner_key)
    assert listed["schema"] == "memorycloud.updates.v1"


# -- the gate: importance 3, 4 and 5, agent and person, both gated endpoints --------------------


@pytest.mark.parametrize("importance", [3, 4, 5])
@pytest.mark.parametrize("endpoint", GATED)
async def test_gate_for_an_agent(api, endpoint, importance):
    required = await publish(api, requires_repull=["memory_tool_installer"])
    recommended = await publish(api, severity="recommended")
    writes = Writes(api)
    target = await writes.target(endpoint)
    before, intents_before = writes.stored(endpoint), count(api, "sync_intents")
    status, data = await writes.send(endpoint, target, importance)

    if importance < 4:  # written, with a warning
        assert status == 200, data
        assert writes.stored(endpoint) == before + 1
        assert count(api, "sync_intents") == intents_before
        warning = data["update_notice"]
        assert warning["schema"] == "amp.runtime-update-warning.v1"
        # As the reference answers below the threshold: every pending update is listed as
        # recommended, the required one first.
        assert warning["status"] == "recommended_update_available"
        assert warning["required_updates"] == []
        assert [u["update_id"] for u in warning["recommended_updates"]] == [
            required["update_id"],
            recommended["update_id"],
        ]
        assert warning["recommended_updates"][0]["requires_repull"] == ["memory_tool_installer"]
        return

    assert status == 409, data  # held back: nothing written, the write kept as an intent
    assert writes.stored(endpoint) == before
    assert data["schema"] == "amp.sync-interrupt.v1"
    assert data["error"]["status"] == 409 and data["error"]["type"] == "sync_interrupted"
    assert data["detail"]["sync_intent_id"] == data["sync_intent_id"]
    assert data["status"] == "blocked_for_runtime_update"
    assert data["importance"] == importance and data["endpoint"] == endpoint
    assert [u["update_id"] for u in data["required_updates"]] == [required["update_id"]]
    assert [u["update_id"] for u in data["recommended_updates"]] == [recommended["update_id"]]
    base = str(api.client.make_url(""))  # absolute URLs, as the reference's
    assert data["update_check"] == f"{base}/api/agent/updates/check"
    assert data["ack"] == f"{base}/api/agent/updates/ack"
    intent_id = data["sync_intent_id"]
    assert data["resume"] == {
        "after_ack": f"{base}/api/agent/sync-intents/{intent_id}/resume",
        "method": "POST",
        "expires_in": "24h",
    }
    intent = await api.get(f"/api/agent/sync-intents/{intent_id}")
    assert intent["schema"] == "amp.sync-intent.v1" and intent["status"] == "blocked"
    assert intent["endpoint"] == endpoint and intent["importance"] == importance
    assert intent["path"] == writes.path(endpoint, target) and intent["method"] == "POST"
    assert intent["identity_id"] == api.agent["id"]
    assert intent["blocking_updates"] == [
        {"update_id": required["update_id"], "version": required["version"]}
    ]
    sent = writes.body(endpoint, importance)
    assert {k: intent["body"][k] for k in sent} == sent  # kept whole (plus the defaults)
    created, expires = parse_iso(intent["created_at"]), parse_iso(intent["expires_at"])
    assert round((expires - created).total_seconds()) == 24 * 3600


@pytest.mark.parametrize("importance", [3, 4, 5])
@pytest.mark.parametrize("endpoint", GATED)
async def test_gate_never_blocks_a_person(api, endpoint, importance):
    await publish(api)
    writes = Writes(api)
    target = await writes.target(endpoint, api.owner_key)
    before = writes.stored(endpoint)
    _, data = await writes.send(endpoint, target, importance, key=api.owner_key, status=200)
    assert "update_notice" not in data and "platform_update_notice" not in data
    assert writes.stored(endpoint) == before + 1
    assert count(api, "sync_intents") == 0


@pytest.mark.parametrize("endpoint", GATED)
async def test_only_required_updates_gate(api, endpoint):
    await publish(api, severity="recommended")
    writes = Writes(api)
    _, data = await writes.send(endpoint, await writes.target(endpoint), 5, status=200)
    # Written, with the reference's warning that a recommended update is available.
    assert data["update_notice"]["status"] == "recommended_update_available"
    assert count(api, "sync_intents") == 0


async def test_adaptive_submit_defaults_to_importance_4_and_is_held_back(api):
    await publish(api)
    run = await Writes(api).target("adaptive_memory_submit")
    data = await api.post(f"/api/memory/forms/{run}/submit", {"payload": DECISION}, status=409)
    assert data["importance"] == 4


async def test_the_gate_comes_before_the_brief_is_looked_up(api):
    """As the reference orders it (seed_vs_reference): a gated agent's important event for an
    unknown brief is held back too (409), and resuming it then answers 404, writing nothing.
    (A form submit is gated first as well: see test_adaptive_reference.py.)"""
    await publish(api)
    data = await api.post(
        "/api/agent/memory-briefs/brief_nope/events", {"summary": "s", "importance": 5}, status=409
    )
    assert count(api, "sync_intents") == 1
    await api.post("/api/agent/updates/ack", {})
    await api.post(f"/api/agent/sync-intents/{data['sync_intent_id']}/resume", status=404)
    assert count(api, "brief_events") == 0


# -- resume, discard, expiry ---------------------------------------------------------------------


async def test_resume_before_the_ack_is_refused_and_keeps_the_intent(api):
    update = await publish(api)
    brief, interrupt = await blocked_write(api)
    intent_id = interrupt["sync_intent_id"]
    data = await api.post(path_of(interrupt["resume"]["after_ack"]), status=409)
    assert data["detail"]["sync_intent_id"] == intent_id
    assert [u["update_id"] for u in data["detail"]["required_updates"]] == [update["update_id"]]
    assert intent_status(api, intent_id) == "blocked"
    assert count(api, "brief_events") == 0
    # Acking only a recommended update does not unblock it either.
    recommended = (await publish(api, severity="recommended"))["update_id"]
    await api.post("/api/agent/updates/ack", {"update_ids": [recommended]})
    await api.post(path_of(interrupt["resume"]["after_ack"]), status=409)
    assert intent_status(api, intent_id) == "blocked"


@pytest.mark.parametrize("endpoint", GATED)
async def test_resume_after_the_ack_replays_exactly_once(api, endpoint):
    await publish(api)
    writes = Writes(api)
    target, interrupt = await blocked_write(api, endpoint)
    before = writes.stored(endpoint)
    await api.post("/api/agent/updates/ack", {})

    resumed = await api.post(path_of(interrupt["resume"]["after_ack"]))
    assert resumed["schema"] == "amp.sync-intent-resume.v1"
    assert resumed["status"] == "resumed" and resumed["endpoint"] == endpoint
    assert resumed["sync_intent_id"] == interrupt["sync_intent_id"]
    assert writes.stored(endpoint) == before + 1

    # The result is what the endpoint itself returns for the same write (now ungated).
    direct_target = await writes.target(endpoint)
    _, direct = await writes.send(endpoint, direct_target, 5, status=200)
    result = resumed["result"]
    assert normalized(result) == normalized(direct)
    if endpoint == "memory_brief_event":
        events = (await api.get(f"/api/agent/memory-briefs/{target}"))["events"]
        assert events == [result["event"]]
        assert result["event"]["summary"] == "freeze main (importance 5)"
    else:
        memory = (await api.get(f"/api/agent/memories/{result['memory']['id']}"))["memory"]
        assert memory == result["memory"] and result["run_id"] == target

    intent = await api.get(f"/api/agent/sync-intents/{interrupt['sync_intent_id']}")
    assert intent["status"] == "resumed" and intent["result"] == result and intent["finished_at"]

    again = await api.post(path_of(interrupt["resume"]["after_ack"]), status=409)
    assert "already resumed" in again["error"]["message"]
    assert writes.stored(endpoint) == before + 2  # the resumed write and the direct one, no more
    # Discarding a resumed intent changes nothing and says so (discarded false).
    kept = await api.post(f"/api/agent/sync-intents/{interrupt['sync_intent_id']}/discard")
    assert kept["discarded"] is False and kept["status"] == "resumed"


async def test_resumed_brief_event_reaches_the_next_context_pack_once(api):
    await publish(api)
    _, interrupt = await blocked_write(api)
    await api.post("/api/agent/updates/ack", {})
    await api.post(path_of(interrupt["resume"]["after_ack"]))
    await api.post(path_of(interrupt["resume"]["after_ack"]), status=409)
    pack = await api.bootstrap()
    assert pack["summary_markdown"].count("freeze main (importance 5)") == 1


async def test_owner_ack_lets_the_agent_resume(api):
    await publish(api)
    _, interrupt = await blocked_write(api)
    await api.post("/api/local/agents/test-agent/updates/ack", {}, key=api.owner_key)
    await api.post(path_of(interrupt["resume"]["after_ack"]))
    assert count(api, "brief_events") == 1


async def test_discard(api):
    await publish(api)
    _, interrupt = await blocked_write(api)
    intent_id = interrupt["sync_intent_id"]
    discarded = await api.post(f"/api/agent/sync-intents/{intent_id}/discard")
    assert discarded["status"] == "discarded" and discarded["finished_at"]
    await api.post("/api/agent/updates/ack", {})
    refused = await api.post(path_of(interrupt["resume"]["after_ack"]), status=409)
    assert "already discarded" in refused["error"]["message"]
    # As the reference: discarding twice is no error, and says it is discarded.
    assert (await api.post(f"/api/agent/sync-intents/{intent_id}/discard"))["discarded"] is True
    assert count(api, "brief_events") == 0
    assert intent_status(api, intent_id) == "discarded"


def expire_now(api, intent_id: str) -> None:
    with api.store.transaction():
        api.store.conn.execute(
            "update sync_intents set expires_at = ? where id = ?", ("2001-01-01T00:00:00.000Z", intent_id)
        )


async def test_resume_after_expiry_is_410(api):
    await publish(api)
    _, interrupt = await blocked_write(api)
    intent_id = interrupt["sync_intent_id"]
    await api.post("/api/agent/updates/ack", {})
    expire_now(api, intent_id)
    data = await api.post(path_of(interrupt["resume"]["after_ack"]), status=410)
    assert data["error"]["type"] == "gone" and intent_id in data["error"]["message"]
    assert intent_status(api, intent_id) == "expired"
    assert (await api.get(f"/api/agent/sync-intents/{intent_id}"))["status"] == "expired"
    assert count(api, "brief_events") == 0
    await api.post(path_of(interrupt["resume"]["after_ack"]), status=409)  # stays expired
    kept = await api.post(f"/api/agent/sync-intents/{intent_id}/discard")  # no error; stays expired
    assert kept["discarded"] is False and kept["status"] == "expired"


async def test_expire_marks_only_intents_past_their_expiry(api):
    await publish(api)
    ids = [(await blocked_write(api))[1]["sync_intent_id"] for _ in range(4)]
    expire_now(api, ids[0])
    expire_now(api, ids[1])
    await api.post(f"/api/agent/sync-intents/{ids[3]}/discard")
    expire_now(api, ids[3])  # already discarded: stays discarded
    assert api.client.app[keys.SERVICES].gate.expire() == 2
    assert [intent_status(api, i) for i in ids] == ["expired", "expired", "blocked", "discarded"]
    assert api.client.app[keys.SERVICES].gate.expire() == 0


async def test_expire_job_of_the_daemon_marks_intents(api):
    await publish(api)
    _, interrupt = await blocked_write(api)
    expire_now(api, interrupt["sync_intent_id"])
    board: JobBoard = api.client.app[keys.JOBS]
    job = board.scheduler.get_job("expire_sync_intents")
    await board.run(*job.args)  # the scheduled job, run now
    state = board.states["expire_sync_intents"]
    assert state.last_result == "ok: 1 expired" and state.failures == 0
    assert intent_status(api, interrupt["sync_intent_id"]) == "expired"


async def test_other_agents_cannot_see_or_touch_your_intents(api):
    await publish(api)
    other_key = api.new_agent("other-agent")
    backdate(api, api.store.identities.identity_for_key(other_key)["id"])  # has the update pending
    _, ours = await blocked_write(api)
    _, theirs = await blocked_write(api, key=other_key)
    intent_id = ours["sync_intent_id"]
    await api.post("/api/agent/updates/ack", {}, key=other_key)
    await api.post("/api/agent/updates/ack", {})

    for path, method in [
        (f"/api/agent/sync-intents/{intent_id}", "GET"),
        (f"/api/agent/sync-intents/{intent_id}/resume", "POST"),
        (f"/api/agent/sync-intents/{intent_id}/discard", "POST"),
    ]:
        response = await api.client.request(method, path, headers=api.auth(other_key))
        data = await response.json()
        assert response.status == 404, data
        assert intent_id in data["error"]["message"]
    assert intent_status(api, intent_id) == "blocked"
    listed = await api.get("/api/agent/sync-intents", key=other_key)
    assert [i["sync_intent_id"] for i in listed["sync_intents"]] == [theirs["sync_intent_id"]]
    mine = await api.get("/api/agent/sync-intents?status=blocked")
    assert [i["sync_intent_id"] for i in mine["sync_intents"]] == [intent_id]
    assert count(api, "brief_events") == 0


async def test_owner_lists_every_agents_intents(api):
    await publish(api)
    other_key = api.new_agent("other-agent")
    backdate(api, api.store.identities.identity_for_key(other_key)["id"])
    _, ours = await blocked_write(api)
    _, theirs = await blocked_write(api, "adaptive_memory_submit", key=other_key)
    await api.post(f"/api/agent/sync-intents/{theirs['sync_intent_id']}/discard", key=other_key)

    everything = await api.get("/api/local/sync-intents", key=api.owner_key)
    assert everything["schema"] == "amp.sync-intents.v1"
    assert {(i["sync_intent_id"], i["status"], i["endpoint"]) for i in everything["sync_intents"]} == {
        (ours["sync_intent_id"], "blocked", "memory_brief_event"),
        (theirs["sync_intent_id"], "discarded", "adaptive_memory_submit"),
    }
    blocked = await api.get("/api/local/sync-intents?status=blocked", key=api.owner_key)
    assert [i["sync_intent_id"] for i in blocked["sync_intents"]] == [ours["sync_intent_id"]]
    assert (await api.get("/api/local/sync-intents?status=resumed", key=api.owner_key))["sync_intents"] == []
    # The agent endpoint lists only the caller's own.
    assert len((await api.get("/api/agent/sync-intents"))["sync_intents"]) == 1


# -- the notice on every return path ----------------------------------------------------------

NOTICE_PATHS = [
    "/api/me",
    "/api/session",
    "/api/agent/bindings/me",
    "/api/agent/autostart",
    "/api/agent/discovery",
    "/api/agent/navigation",
    "/api/agent/skills",
]


def pending_notice(data: dict[str, Any]) -> dict[str, Any] | None:
    """The platform update notice when it says updates are pending. Some return paths carry
    the notice always, as the reference's do (then "current" when nothing is pending)."""
    notice = data.get("platform_update_notice")
    return notice if notice and notice["status"] == "check_required" else None


@pytest.mark.parametrize("path", NOTICE_PATHS)
async def test_notice_while_pending_and_gone_after_the_ack(api, path):
    assert pending_notice(await api.get(path)) is None
    required = (await publish(api))["update_id"]
    recommended = (await publish(api, severity="recommended"))["update_id"]

    notice = (await api.get(path))["platform_update_notice"]
    assert notice["schema"] == "amp.platform-update-notice.v1"
    assert notice["status"] == "check_required"
    assert notice["update_ids"] == [required, recommended]
    assert (notice["required_update_count"], notice["recommended_update_count"]) == (1, 1)
    assert notice["check_url"].endswith("/api/agent/updates/check")
    assert notice["ack_url"].endswith("/api/agent/updates/ack")
    assert notice["manifest_url"].endswith("/api/agent/updates/manifest")

    # The owner never gets one; reading the notice is not an ack.
    assert pending_notice(await api.get(path, key=api.owner_key)) is None
    assert pending_notice(await api.get(path))

    await api.post("/api/agent/updates/ack", {"update_ids": [required]})
    assert (await api.get(path))["platform_update_notice"]["update_ids"] == [recommended]
    await api.post("/api/agent/updates/ack", {"update_ids": [recommended]})
    assert pending_notice(await api.get(path)) is None


@pytest.mark.parametrize(
    "path",
    [
        "/api/session",
        "/api/agent/autostart",
        "/api/agent/discovery",
        "/api/agent/navigation",
        "/api/agent/updates/manifest",
    ],
)
async def test_anonymous_callers_get_no_notice(api, path):
    await publish(api)
    response = await api.client.get(path)
    data = await response.json()
    assert response.status == 200, data
    assert pending_notice(data) is None


async def test_navigation_points_at_updates_and_blocked_intents(api):
    base = str(api.client.make_url("")).rstrip("/")
    steps = lambda data: [s["do"] for s in data["next"]]  # noqa: E731
    assert steps(await api.get("/api/agent/navigation")) == ["bootstrap_context"]
    await publish(api)
    assert steps(await api.get("/api/agent/navigation")) == ["check_updates", "bootstrap_context"]
    _, interrupt = await blocked_write(api)
    data = await api.get("/api/agent/navigation")
    assert steps(data) == ["check_updates", "resume_sync_intents", "bootstrap_context"]
    assert data["next"][1]["endpoint"] == f"{base}/api/agent/sync-intents?status=blocked"
    await api.post("/api/agent/updates/ack", {})
    assert steps(await api.get("/api/agent/navigation")) == ["resume_sync_intents", "bootstrap_context"]
    await api.post(path_of(interrupt["resume"]["after_ack"]))
    assert steps(await api.get("/api/agent/navigation")) == ["bootstrap_context"]
    anonymous = await (await api.client.get("/api/agent/navigation")).json()
    assert steps(anonymous) == ["connect"]


async def test_autostart_knows_the_agent(api):
    assert (await api.get("/api/agent/autostart"))["known_agent"] is True
    anonymous = await (await api.client.get("/api/agent/autostart")).json()
    assert anonymous["known_agent"] is False


async def test_registration_after_an_update_carries_no_notice(api):
    """The pairing code is issued before the update is published and redeemed after it. The
    registration answer would carry the notice if updates were pending, but registering creates
    a NEW agent, created after this installation learned of the update: by the policy (an
    update applies to agents that existed before it) nothing is pending for it, so the notice
    is absent, on the registration answer and on the new agent's later calls."""
    with api.store.transaction():
        code = api.store.identities.create_pairing_code("paired-agent", "codex")["pairing_code"]
    await publish(api)
    assert pending_notice(await api.get("/api/me"))  # the existing agent has it
    response = await api.client.post("/api/agent/register", json={"pairing_code": code})
    registered = await response.json()
    assert response.status == 200, registered
    assert registered["schema"] == "amp.agent-registration.v1"
    assert pending_notice(registered) is None
    key = registered["api_key"]
    assert pending_notice(await api.get("/api/me", key=key)) is None
    assert (await check(api, key=key))["has_pending_updates"] is False


async def test_manifest_lists_every_known_update(api):
    update = await publish(api, version=UPDATE_VERSION)
    manifest = await (await api.client.get("/api/agent/updates/manifest")).json()
    assert manifest["schema"] == "amp.platform-updates.v1"
    assert manifest["runtime_version"] == RUNTIME_VERSION
    ids = [u["update_id"] for u in manifest["updates"]]
    # Ordered by when this installation learned of them (the shipped ones together, by id).
    assert ids == [*sorted(u["id"] for u in SHIPPED), update["update_id"]]
    assert manifest["check"] == "/api/agent/updates/check" and manifest["ack"] == "/api/agent/updates/ack"


def test_shipped_updates_are_learned_at_one_time(store, monkeypatch):
    """The same as the manifest test above, with a clock that always ticks between two reads."""
    start = datetime(2026, 7, 1, tzinfo=UTC)
    ticks = itertools.count()
    monkeypatch.setattr(
        update_records, "now_iso", lambda: iso_from_datetime(start + timedelta(milliseconds=next(ticks)))
    )
    UpdateService(store).load_shipped()
    assert [u["id"] for u in store.updates.updates()] == sorted(u["id"] for u in SHIPPED)


async def test_publish_defaults(api):
    update = await publish(api, severity="recommended")
    assert update["source"] == "local" and update["severity"] == "recommended"
    assert re.fullmatch(r"\d{4}\.\d\d\.\d\d-local\.[0-9a-f]{8}", update["version"]), update["version"]
    assert update["requires_repull"] == [] and update["next_actions"] == []
    row = api.store.updates.update(update["update_id"])
    assert row["published_by"] == api.store.identities.owner()["id"]


# -- jobs ------------------------------------------------------------------------------------------


async def test_job_board_records_a_failure_and_keeps_running(caplog):
    """A real AsyncIOScheduler in this test's loop: one job always fails, one counts. The
    failure is logged and recorded, and neither job stops."""
    scheduler = AsyncIOScheduler()
    board = JobBoard(scheduler)
    counted = []

    def boom() -> None:
        raise RuntimeError("disk on fire")

    async def counter() -> int:
        counted.append(1)
        return len(counted)

    board.add("boom", boom, 0.05)
    board.add("counter", counter, 0.05)
    caplog.set_level(logging.ERROR, logger="daemon.jobs")
    scheduler.start()
    try:
        deadline = time.monotonic() + 15
        while board.states["boom"].runs < 3 or board.states["counter"].runs < 3:
            assert time.monotonic() < deadline, board.describe()
            await asyncio.sleep(0.02)
        described = {d["name"]: d for d in board.describe()}
    finally:
        scheduler.shutdown(wait=False)

    boom_state, counter_state = described["boom"], described["counter"]
    assert boom_state["failures"] == boom_state["runs"] >= 3
    assert boom_state["last_result"] == "error: RuntimeError: disk on fire"
    assert counter_state["failures"] == 0 and counter_state["runs"] >= 3
    assert counter_state["last_result"] == f"ok: {counter_state['runs']}"
    assert len(counted) == counter_state["runs"]
    for state in described.values():
        assert state["interval_seconds"] == 0.05
        assert state["last_run_at"] and state["last_duration_ms"] is not None
        assert datetime.fromisoformat(state["next_run_at"])  # scheduled again
    assert "job boom failed" in caplog.text


async def test_job_board_run_directly():
    scheduler = AsyncIOScheduler()
    board = JobBoard(scheduler)
    calls = []

    async def flaky() -> str:
        calls.append(1)
        if len(calls) % 2:
            raise ValueError(f"attempt {len(calls)}")
        return "fine"

    board.add("flaky", flaky, 60)
    board.add("quiet", lambda: None, 60)
    scheduler.start()
    try:
        for _ in range(4):
            await board.run("flaky", flaky)
            await board.run("quiet", lambda: None)
            state = board.states["flaky"]
            expected = "error: ValueError: attempt" if len(calls) % 2 else "ok: fine"
            assert state.last_result.startswith(expected), state
        described = {d["name"]: d for d in board.describe()}
    finally:
        scheduler.shutdown(wait=False)
    assert (described["flaky"]["runs"], described["flaky"]["failures"]) == (4, 2)
    assert described["flaky"]["last_result"] == "ok: fine"
    assert (described["quiet"]["runs"], described["quiet"]["failures"]) == (4, 0)
    assert described["quiet"]["last_result"] == "ok"
    assert all(d["next_run_at"] for d in described.values())


async def test_job_board_describes_jobs_before_the_scheduler_starts():
    board = JobBoard(AsyncIOScheduler())
    board.add("later", lambda: None, 60)
    (described,) = board.describe()
    assert described["name"] == "later" and described["next_run_at"] is None and described["runs"] == 0


async def test_status_lists_the_daemon_jobs(api):
    status = await api.get("/api/local/status", key=api.owner_key)
    jobs = {j["name"]: j for j in status["jobs"]}
    every_engine = {
        "refresh_startup_items",
        "expire_sync_intents",
        "poll_updates",
        "sync_upstream",
        "backfill_vectors",
        "rebuild_search_index",  # PostgreSQL's: rows of another tokenizer made anew
    }
    settings = api.store.settings
    if api.store.engine == "postgresql":  # no WAL, no FTS5 segments to merge
        assert set(jobs) == every_engine
    else:
        assert set(jobs) == every_engine | {"wal_checkpoint", "merge_search_index"}
        assert jobs["merge_search_index"]["interval_seconds"] == settings.index_merge_seconds
        assert jobs["wal_checkpoint"]["interval_seconds"] == settings.checkpoint_seconds
    assert jobs["expire_sync_intents"]["interval_seconds"] == settings.expire_sync_intents_minutes * 60
    assert jobs["poll_updates"]["interval_seconds"] == settings.poll_updates_minutes * 60
    for job in jobs.values():
        assert datetime.fromisoformat(job["next_run_at"]) > datetime.fromisoformat(
            "2020-01-01T00:00:00+00:00"
        )
        assert job["failures"] == 0
