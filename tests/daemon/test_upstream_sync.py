"""Upstream sync between two real daemon apps (real stores, real HTTP over loopback): a local
daemon and one in the cloud role. The end-to-end tests with two daemon processes are in
tests/e2e/test_upstream.py; these cover each rule of the sync engine quickly."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from daemon import keys
from daemon.app import create_app
from daemon.cli.upstream import describe
from daemon.upstream.registration import solve_proof_of_work
from state.config import Settings
from state.identities import AGENT_SCOPES, SYNC_SCOPE
from state.ids import now_iso, parse_iso
from state.paths import resolve_paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from tests.conftest import Api, cloud_settings

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines


class Side(Api):
    """One daemon: its test client, owner key, one local agent, and its services."""

    @property
    def services(self):
        return self.client.app[keys.SERVICES]

    @property
    def url(self) -> str:
        return str(self.client.server.make_url("")).rstrip("/")

    async def local(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        response = await self.client.request(method, path, json=body, headers=self.auth(self.owner_key))
        data = await response.json()
        assert response.status == status, data
        return data


async def start_side(
    home: Path, settings: Settings, agent_name: str, scopes: list[str] | None = None
) -> Side:
    paths = resolve_paths({"MEMORYCLOUD_HOME": str(home)}).ensure()
    app = create_app(settings.model_copy(update={"check_responses": True}), paths)
    client = TestClient(TestServer(app))
    await client.start_server()
    store = app[keys.STORE]
    with store.transaction():
        agent, agent_key = store.identities.create_agent(agent_name, "codex", scopes=scopes)
    owner_key = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
    return Side(client, owner_key, agent_key, agent)


@pytest.fixture
async def pair(request: pytest.FixtureRequest, tmp_path: Path, engine: str):
    """(local, cloud), the local one connected to the cloud (on the test's engine) with a
    pairing code."""
    # The teammate edits records through the sync extension, as their own daemon would.
    cloud = await start_side(
        tmp_path / "cloud", cloud_settings(request), "teammate", scopes=[*AGENT_SCOPES, SYNC_SCOPE]
    )
    local = await start_side(tmp_path / "local", Settings(sync_upstream_seconds=3600), "coder")
    with cloud.store.transaction():
        code = cloud.store.identities.create_pairing_code("laptop", "memorycloud_companion")
    status = await local.local(
        "POST", "/api/local/upstream/connect", {"url": cloud.url, "pairing_code": code["pairing_code"]}
    )
    assert status["connected"] and status["sync_extension"]
    yield local, cloud
    await local.client.close()
    await cloud.client.close()


async def sync(side: Side) -> dict[str, Any]:
    return await side.local("POST", "/api/local/upstream/sync")


async def write_delta(side: Side, summary: str, **body: Any) -> dict[str, Any]:
    receipt = (await side.bootstrap())["receipt_id"]
    return await side.delta(receipt, summary=summary, **body)


def contents(side: Side) -> list[str]:
    return [
        r[0]
        for r in side.store.conn.execute(
            "select content from memory_records where deleted_at is null order by seq"
        )
    ]


async def test_writes_on_each_side_reach_the_other(pair):
    local, cloud = pair
    await write_delta(local, "local decision: use SQLite WAL")
    await write_delta(cloud, "teammate found: the CI cache is flaky")
    outcome = await sync(local)
    assert outcome["last_error"] is None, outcome
    assert "local decision: use SQLite WAL" in contents(cloud)
    assert "teammate found: the CI cache is flaky" in contents(local)
    # A second round sends and pulls nothing again: no duplicates on either side.
    await sync(local)
    assert contents(cloud).count("local decision: use SQLite WAL") == 1
    assert contents(local).count("local decision: use SQLite WAL") == 1
    assert contents(local).count("teammate found: the CI cache is flaky") == 1
    assert local.services.upstream.backlog() == 0
    # The pulled memory is in the next local context pack.
    pack = await local.bootstrap()
    assert "CI cache is flaky" in pack["summary_markdown"]


async def test_the_status_shows_a_round_running_and_the_one_local_writes_ask_for(pair):
    """What a script (or the e2e tests) waits out before it reads a settled state."""
    local, _cloud = pair
    upstream = local.services.upstream
    for _ in range(100):  # connecting asked for a first round a second later
        status = await local.local("GET", "/api/local/upstream")
        if not status["syncing"] and status["sync_scheduled_at"] is None:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the round connecting asked for did not end")
    before = now_iso()
    await write_delta(local, "a local write asks for a round a second later")
    status = await local.local("GET", "/api/local/upstream")
    due = parse_iso(status["sync_scheduled_at"])
    assert 0.5 < (due - parse_iso(before)).total_seconds() < 1.5
    assert status["syncing"] is False
    async with upstream._lock:  # a round holds it while it runs
        assert (await local.local("GET", "/api/local/upstream"))["syncing"] is True
    # The kick fires: its round counts as running before it has taken the lock.
    upstream._kick.cancel()
    upstream._kicked()
    assert upstream.status()["syncing"] is True and upstream.status()["sync_scheduled_at"] is None
    for _ in range(100):
        status = await local.local("GET", "/api/local/upstream")
        if status["sync_scheduled_at"] is None and not status["syncing"]:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the round the write asked for did not end")
    assert status["backlog"] == 0 and status["last_success_at"] >= status["last_sync_at"]
    assert "next round" not in describe(status) and "running now" not in describe(status)
    assert "next round    2026-" in describe({**status, "sync_scheduled_at": "2026-12-07T06:50:02.447Z"})


async def test_edit_on_both_sides_is_one_conflict_and_nothing_is_lost(pair):
    local, cloud = pair
    mem_id = (await write_delta(local, "deploy with blue-green"))["delta"]["memory_id"]
    await sync(local)
    link = local.store.upstream.link(mem_id)
    upstream_id = link["upstream_id"]
    # The teammate edits it upstream, the person edits it locally (a revert-style new version
    # through the Memory admin API is enough: any local version counts).
    await cloud.post(
        f"/api/sync/records/{upstream_id}",
        {"operation": "update", "base_version": 1, "content": "deploy with canary"},
    )
    with local.store.transaction():
        local.store.memories.update(mem_id, content="deploy with blue-green, 2 stages")
    await sync(local)
    conflicts = (await local.local("GET", "/api/local/conflicts"))["conflicts"]
    mine = [c for c in conflicts if c["kind"] == "upstream_sync"]
    assert len(mine) == 1
    assert mine[0]["current"] == "deploy with blue-green, 2 stages"
    assert mine[0]["incoming"] == "deploy with canary"
    assert mine[0]["base"] == "deploy with blue-green"
    # Nothing was overwritten on either side.
    assert local.store.memories.get(mem_id)["content"] == "deploy with blue-green, 2 stages"
    assert cloud.store.memories.get(upstream_id)["content"] == "deploy with canary"
    # More rounds do not make more conflicts nor push the held edit.
    await sync(local)
    assert (
        len(
            [
                c
                for c in (await local.local("GET", "/api/local/conflicts"))["conflicts"]
                if c["kind"] == "upstream_sync"
            ]
        )
        == 1
    )
    assert cloud.store.memories.get(upstream_id)["content"] == "deploy with canary"
    # The person merges: the merge becomes both sides' content.
    await local.local(
        "POST",
        f"/api/local/conflicts/{mine[0]['id']}/resolve",
        {"action": "merge", "content": "canary, then blue-green in 2 stages"},
    )
    await sync(local)
    assert local.store.memories.get(mem_id)["content"] == "canary, then blue-green in 2 stages"
    assert cloud.store.memories.get(upstream_id)["content"] == "canary, then blue-green in 2 stages"
    versions = [v["content"] for v in cloud.store.memories.versions(upstream_id)]
    assert versions == ["deploy with blue-green", "deploy with canary", "canary, then blue-green in 2 stages"]


async def test_keep_current_sends_the_local_content_over_the_incoming(pair):
    local, cloud = pair
    mem_id = (await write_delta(local, "port 8517"))["delta"]["memory_id"]
    await sync(local)
    upstream_id = local.store.upstream.link(mem_id)["upstream_id"]
    await cloud.post(
        f"/api/sync/records/{upstream_id}", {"operation": "update", "base_version": 1, "content": "port 9000"}
    )
    with local.store.transaction():
        local.store.memories.update(mem_id, content="port 8518")
    await sync(local)
    conflict = next(
        c
        for c in (await local.local("GET", "/api/local/conflicts"))["conflicts"]
        if c["kind"] == "upstream_sync"
    )
    await local.local("POST", f"/api/local/conflicts/{conflict['id']}/resolve", {"action": "keep_current"})
    await sync(local)
    assert cloud.store.memories.get(upstream_id)["content"] == "port 8518"
    assert [v["content"] for v in cloud.store.memories.versions(upstream_id)] == [
        "port 8517",
        "port 9000",
        "port 8518",
    ]


async def test_deletes_and_redactions_propagate_both_ways(pair):
    local, cloud = pair
    secret = "the staging password is hunter2"
    a = (await write_delta(local, secret))["delta"]["memory_id"]
    b = (await write_delta(local, "to be deleted upstream"))["delta"]["memory_id"]
    await sync(local)
    up_a = local.store.upstream.link(a)["upstream_id"]
    up_b = local.store.upstream.link(b)["upstream_id"]
    # Local redaction removes the content upstream too.
    version_id = local.store.memories.versions(a)[0]["id"]
    with local.store.transaction():
        local.store.memories.redact_version(version_id)
    # Upstream delete reaches the local store.
    await cloud.post(f"/api/sync/records/{up_b}", {"operation": "delete", "base_version": 1})
    await sync(local)
    assert all(v["content"] is None for v in cloud.store.memories.versions(up_a))
    assert secret not in contents(cloud)
    assert local.store.memories.get(b)["deleted_at"] is not None
    # An upstream redaction removes the content here.
    c = (await write_delta(cloud, "teammate pasted a token tok_123"))["delta"]["memory_id"]
    await sync(local)
    assert "teammate pasted a token tok_123" in contents(local)
    with cloud.store.transaction():
        cloud.store.memories.redact_version(cloud.store.memories.versions(c)[0]["id"])
    await sync(local)
    assert "teammate pasted a token tok_123" not in contents(local)
    local_c = local.store.upstream.link_by_upstream(c)["local_id"]
    assert all(v["content"] is None for v in local.store.memories.versions(local_c))


async def test_interrupted_push_is_resumed_exactly_once_after_the_update(pair):
    local, cloud = pair
    await sync(local)  # the daemon checked for updates: nothing pending
    # The cloud's owner publishes a required update that only asks to re-pull a skill.
    await cloud.local(
        "POST",
        "/api/local/updates",
        {
            "title": "Re-pull the installer",
            "summary": "new install order",
            "severity": "required",
            "requires_repull": ["memory_tool_installer"],
        },
    )
    brief = await local.post("/api/agent/memory-brief", {"task": "ship the release"})
    await local.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        {"event_type": "decision", "summary": "release on Friday", "importance": 5},
    )
    # The first push meets the gate: the event waits upstream as a sync intent ...
    first = await sync(local)
    events = cloud.store.conn.execute("select count(*) from brief_events").fetchone()[0]
    intents = cloud.store.conn.execute("select status from sync_intents").fetchall()
    # ... and in the same round the daemon re-pulls the skill, acks and resumes it.
    assert [r[0] for r in intents] == ["resumed"], first
    assert events == 1
    assert local.store.upstream.get("skill:memory_tool_installer")
    assert first["interrupted"] == [] and first["backlog"] == 0
    # Nothing is written twice by more rounds.
    await sync(local)
    assert cloud.store.conn.execute("select count(*) from brief_events").fetchone()[0] == 1
    assert contents(cloud).count("release on Friday") == 1
    assert contents(local).count("release on Friday") == 1


async def test_an_update_the_daemon_cannot_apply_waits_for_the_person(pair):
    local, cloud = pair
    await sync(local)
    await cloud.local(
        "POST",
        "/api/local/updates",
        {"title": "Read the new policy", "summary": "a person must read it", "severity": "required"},
    )
    brief = await local.post("/api/agent/memory-brief", {"task": "ship the release"})
    await local.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        {"event_type": "decision", "summary": "freeze on Thursday", "importance": 4},
    )
    status = await sync(local)
    assert len(status["interrupted"]) == 1
    assert [u["title"] for u in status["pending_updates"]] == ["Read the new policy"]
    await sync(local)
    assert cloud.store.conn.execute("select count(*) from brief_events").fetchone()[0] == 0
    # The person acks from the local API (the CLI's `memorycloud upstream ack`) ...
    await local.local("POST", "/api/local/upstream/updates/ack", {})
    status = await sync(local)
    assert status["interrupted"] == [] and status["pending_updates"] == []
    assert cloud.store.conn.execute("select count(*) from brief_events").fetchone()[0] == 1
    await sync(local)
    assert contents(cloud).count("freeze on Thursday") == 1


async def test_store_documents_are_pushed_with_the_sync_extension(pair):
    local, cloud = pair
    with local.store.transaction():
        from state.memories import NewMemory

        local.store.memories.create(
            NewMemory(
                namespace="memstore_notes",
                kind="document",
                content="# Runbook\nrestart the worker",
                source="memory_store",
                path="/runbooks/worker.md",
            )
        )
    await sync(local)
    row = cloud.store.conn.execute(
        "select path, content from memory_records where path = ?", ("/runbooks/worker.md",)
    ).fetchone()
    assert row is not None and row[1] == "# Runbook\nrestart the worker"


async def test_an_unreachable_upstream_keeps_everything_and_reports_it(pair):
    local, cloud = pair
    await cloud.client.close()  # the upstream goes away
    await write_delta(local, "written while offline")
    status = await sync(local)
    assert status["last_error"] and status["backlog"] == 1
    assert "written while offline" in contents(local)


async def test_connect_errors_are_clear(tmp_path: Path):
    local = await start_side(tmp_path / "local", Settings(), "coder")
    try:
        bad = await local.local("POST", "/api/local/upstream/connect", {"url": "ftp://x"}, status=400)
        assert "https://" in bad["error"]["message"]
        down = await local.local(
            "POST", "/api/local/upstream/connect", {"url": "http://127.0.0.1:9"}, status=409
        )
        assert "cannot reach" in down["error"]["message"]
        assert not (await local.local("GET", "/api/local/upstream"))["connected"]
        # An agent key cannot connect the daemon anywhere.
        await local.post("/api/local/upstream/connect", {"url": "http://127.0.0.1:9"}, status=403)
    finally:
        await local.client.close()


def test_proof_of_work_matches_the_reference_algorithm():
    import hashlib

    nonce = solve_proof_of_work("pow_abc", "srv", 3)
    assert hashlib.sha256(f"pow_abc:srv:{nonce}".encode()).hexdigest().startswith("000")
    with pytest.raises(ValueError):
        solve_proof_of_work("pow_abc", "srv", 9)


async def test_a_write_retried_with_its_idempotency_key_is_stored_once(api):
    receipt = (await api.bootstrap())["receipt_id"]
    headers = {"X-AMP-Context-Receipt": receipt, "Idempotency-Key": "push-1"}
    first = await api.client.post(
        "/api/agent/memory-delta", json={"summary": "once only"}, headers={**api.auth(), **headers}
    )
    again = await api.client.post(
        "/api/agent/memory-delta", json={"summary": "once only"}, headers={**api.auth(), **headers}
    )
    assert first.status == again.status == 200
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert (await first.json())["delta"]["id"] == (await again.json())["delta"]["id"]
    count = api.store.conn.execute(
        "select count(*) from memory_records where content = 'once only'"
    ).fetchone()[0]
    assert count == 1
    # The key belongs to the caller: another agent with the same key writes its own record.
    other = api.new_agent("other")
    other_receipt = (await api.post("/api/agent/bootstrap/context", {}, key=other))["receipt_id"]
    await api.post(
        "/api/agent/memory-delta",
        {"summary": "once only"},
        key=other,
        headers={"X-AMP-Context-Receipt": other_receipt, "Idempotency-Key": "push-1"},
    )
    assert (
        api.store.conn.execute("select count(*) from memory_records where content = 'once only'").fetchone()[
            0
        ]
        == 2
    )


async def test_an_interrupted_idempotent_write_keeps_its_intent(api):
    await api.post(
        "/api/local/updates", {"title": "t", "summary": "s", "severity": "required"}, key=api.owner_key
    )
    brief = await api.post("/api/agent/memory-brief", {"task": "keep the intent"})
    body = await api.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        {"summary": "important", "importance": 5},
        headers={"Idempotency-Key": "event-1"},
        status=409,
    )
    intent = api.store.updates.intent(body["sync_intent_id"])
    assert intent["status"] == "blocked" and intent["body"]["summary"] == "important"


async def test_a_notice_in_an_upstream_answer_triggers_the_update_check(pair):
    local, cloud = pair
    await sync(local)  # checked: nothing pending; the next check is not due for 30 minutes
    update = await cloud.local(
        "POST",
        "/api/local/updates",
        {
            "title": "Re-pull",
            "summary": "s",
            "severity": "required",
            "requires_repull": ["memory_tool_installer"],
        },
    )
    brief = await local.post("/api/agent/memory-brief", {"task": "small things"})
    await local.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events", {"summary": "a small note", "importance": 2}
    )
    status = await sync(local)
    # The event went through with a runtime-update warning; that notice made the daemon check
    # at once, apply (re-pull) and ack the update in the same round.
    assert "a small note" in contents(cloud)
    assert update["update_id"] in status["applied_updates"]
    assert status["pending_updates"] == []


async def test_the_cloud_role_leaves_out_the_per_machine_dialects(tmp_path: Path):
    cloud = await start_side(tmp_path / "cloud", Settings(role="cloud"), "teammate")
    try:
        for method, path in (
            ("GET", "/api/v1/cloud/memory_stores"),
            ("POST", "/add_messages/"),
            ("POST", "/mcp"),
        ):
            response = await cloud.client.request(method, path, json={}, headers=cloud.auth())
            assert response.status == 404, path
        assert (await cloud.get("/api/sync/info"))["role"] == "cloud"
    finally:
        await cloud.client.close()


@pytest.mark.parametrize(
    "allowed, host, status",
    [
        ((), "memory.example.com", 403),
        (("memory.example.com",), "memory.example.com", 200),
        (("memory.example.com",), "evil.example.net", 403),
        (("*",), "anything.example.net", 200),
    ],
)
async def test_allowed_hosts_let_a_reverse_proxy_name_through(tmp_path: Path, allowed, host, status):
    side = await start_side(tmp_path / "d", Settings(role="cloud", allowed_hosts=allowed), "a")
    try:
        response = await side.client.get("/api/me", headers={**side.auth(), "Host": host})
        assert response.status == status
    finally:
        await side.client.close()


async def test_suite_syncs_reach_the_upstream_once(pair):
    local, cloud = pair
    suite = await local.post(
        "/api/memories",
        {
            "title": "Release playbook",
            "summary": "how we ship",
            "license": "CC-BY-4.0",
            "long_term_markdown": "# Release\nTag, build, publish.",
        },
    )
    slug = suite["slug"]
    await local.post(f"/api/memories/{slug}/sync", {"events": [{"summary": "tagged v1.2"}], "importance": 3})
    await sync(local)
    # The upstream lacked the suite: it was imported whole, with the first sync in it.
    upstream = cloud.store.suites.version(slug)
    local_latest = local.store.suites.version(slug)
    assert upstream["files"] == local_latest["files"]
    # The next sync is sent as a sync: the upstream appends the same event, once.
    await local.post(
        f"/api/memories/{slug}/sync", {"events": [{"summary": "published v1.2"}], "importance": 3}
    )
    await sync(local)
    await sync(local)
    upstream = cloud.store.suites.version(slug)
    day_files = [p for p in upstream["files"] if p.startswith("memory/")]
    text = "".join(upstream["files"][p] for p in day_files)
    assert text.count("tagged v1.2") == 1 and text.count("published v1.2") == 1
    assert local.services.upstream.backlog() == 0


async def test_a_private_suite_stays_private_upstream(pair):
    """The upstream receives the suite with its visibility (not the import's default,
    public), so nobody else on the team server can list or read it."""
    local, cloud = pair
    suite = await local.post(
        "/api/memories",
        {
            "title": "Private notes",
            "summary": "mine only",
            "license": "CC-BY-4.0",
            "memory_md": "# Notes\nOnly for me.",
            "visibility": "private",
        },
    )
    await local.post(f"/api/memories/{suite['slug']}/sync", {"text": "a private event"})
    await sync(local)
    assert cloud.store.suites.suite(suite["slug"])["visibility"] == "private"


async def test_reconnecting_while_a_write_is_interrupted_writes_it_once(pair):
    local, cloud = pair
    await sync(local)
    await cloud.local(
        "POST",
        "/api/local/updates",
        {"title": "Read the new policy", "summary": "a person must read it", "severity": "required"},
    )
    brief = await local.post("/api/agent/memory-brief", {"task": "ship the release"})
    await local.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        {"event_type": "decision", "summary": "freeze on Thursday", "importance": 5},
    )
    status = await sync(local)
    key = local.services.upstream.secrets.get(status["credential_ref"])
    await local.local("POST", "/api/local/upstream/connect", {"url": cloud.url, "api_key": key})
    await sync(local)
    await local.local("POST", "/api/local/upstream/updates/ack", {})
    await sync(local)
    assert cloud.store.conn.execute("select count(*) from brief_events").fetchone()[0] == 1


async def test_backfill_on_connect_sends_the_memory_kept_so_far_once(
    request: pytest.FixtureRequest, tmp_path: Path, engine: str
):
    cloud = await start_side(tmp_path / "cloud", cloud_settings(request), "teammate")
    local = await start_side(tmp_path / "local", Settings(sync_upstream_seconds=3600), "coder")
    try:
        await write_delta(local, "written before the upstream existed")
        with cloud.store.transaction():
            code = cloud.store.identities.create_pairing_code("laptop", "memorycloud_companion")
        status = await local.local(
            "POST", "/api/local/upstream/connect", {"url": cloud.url, "pairing_code": code["pairing_code"]}
        )
        assert status["queued"] == 1
        await sync(local)
        await sync(local)
        assert contents(cloud).count("written before the upstream existed") == 1
        assert contents(local).count("written before the upstream existed") == 1
    finally:
        await local.client.close()
        await cloud.client.close()


async def test_adaptive_memories_are_pushed_as_memory_deltas(pair):
    local, cloud = pair
    run = await local.post(
        "/api/memory/router/select",
        {
            "task": "pick a database",
            "project_key": "demo",
            "what_i_remember": "We decided on SQLite instead of Postgres: one file, no server.",
        },
    )
    stored = await local.post(
        f"/api/memory/forms/{run['run_id']}/submit",
        {
            "payload": {
                "decision": "SQLite instead of Postgres",
                "context": "local daemon",
                "rationale": "one file, no server",
                "retrieval_triggers": ["database choice"],
            }
        },
    )
    await sync(local)
    link = local.store.upstream.link(stored["memory"]["id"])
    upstream = cloud.store.memories.get(link["upstream_id"])
    assert "SQLite instead of Postgres" in upstream["content"]
    assert upstream["kind"] == "decision_memory" and upstream["project_key"] == "demo"
    # It is in the teammates' context packs for that project.
    pack = await cloud.bootstrap(project_key="demo")
    assert "SQLite instead of Postgres" in pack["summary_markdown"]


async def test_a_team_daemon_keeps_each_workspace_to_its_own_daemons(
    request: pytest.FixtureRequest, tmp_path: Path, engine: str
):
    """Two people's daemons paired into the team workspace share it; a third paired into a
    personal workspace sees neither, and they never see its memory (on both engines)."""
    cloud = await start_side(tmp_path / "cloud", cloud_settings(request), "admin-agent")
    with cloud.store.transaction():
        owner = cloud.store.identities.owner()
        team = cloud.store.identities.create_workspace("team", owner_id=owner["id"])
        solo = cloud.store.identities.create_workspace("carol", owner_id=owner["id"])
    sides = {}
    try:
        for name, workspace in (("alice", team), ("bob", team), ("carol", solo)):
            side = await start_side(tmp_path / name, Settings(sync_upstream_seconds=3600), f"{name}-agent")
            with cloud.store.transaction():
                code = cloud.store.identities.create_pairing_code(
                    f"{name}-laptop", "memorycloud_companion", workspace_id=workspace["id"]
                )
            status = await side.local(
                "POST",
                "/api/local/upstream/connect",
                {"url": cloud.url, "pairing_code": code["pairing_code"]},
            )
            assert status["upstream_workspace_id"] == workspace["id"]
            sides[name] = side
        await write_delta(sides["alice"], "alice: the team uses trunk-based development")
        await write_delta(sides["carol"], "carol: my private notes")
        for side in sides.values():
            await sync(side)
        for side in sides.values():
            await sync(side)
        assert "alice: the team uses trunk-based development" in contents(sides["bob"])
        assert "alice: the team uses trunk-based development" not in contents(sides["carol"])
        assert "carol: my private notes" not in contents(sides["alice"]) + contents(sides["bob"])
        # Carol's key cannot read or change a team record on the cloud either.
        team_record = sides["alice"].store.upstream.link(
            next(
                m
                for m in sides["alice"].store.conn.execute(
                    "select id from memory_records where content like 'alice:%'"
                )
            )[0]
        )["upstream_id"]
        carol_key = sides["carol"].services.upstream.secrets.get(
            sides["carol"].services.upstream.status()["credential_ref"]
        )
        await cloud.post(
            f"/api/sync/records/{team_record}",
            {"operation": "delete", "base_version": 1},
            key=carol_key,
            status=404,
        )
    finally:
        for side in sides.values():
            await side.client.close()
        await cloud.client.close()


async def test_only_daemons_may_edit_or_redact_through_the_sync_extension(pair):
    """An ordinary agent on the team daemon cannot edit, delete or redact records through the
    extension (#10: agents cannot redact); a paired companion daemon can, for its person."""
    local, cloud = pair
    mem_id = (await write_delta(local, "shared fact"))["delta"]["memory_id"]
    await sync(local)
    upstream_id = local.store.upstream.link(mem_id)["upstream_id"]
    plain = cloud.new_agent("plain-agent")
    for path, body in (
        (f"/api/sync/records/{upstream_id}", {"operation": "delete", "base_version": 1}),
        (f"/api/sync/records/{upstream_id}/redact", {"content_sha256": "0" * 64}),
        ("/api/sync/records", {"origin_memory_id": "x", "kind": "fact", "content": "c"}),
    ):
        refused = await cloud.post(path, body, key=plain, status=403)
        assert "sync:write" in refused["error"]["message"]
    assert cloud.store.memories.get(upstream_id)["deleted_at"] is None
    paired = cloud.store.identities.get(local.services.upstream.status()["upstream_identity_id"])
    assert SYNC_SCOPE in paired["scopes"]
