"""``memorycloud migrate-store --to URL`` (issue #18): a SQLite team server's store moved onto
PostgreSQL, resumable, verified by counts and checksums."""

from __future__ import annotations

import json

import pytest

from state.config import Settings
from state.errors import StoreUnavailable
from state.memories import NewMemory
from state.paths import Paths
from state.pg import copy_store
from state.pg.copy_store import StoreCopy
from state.pg.store import PgStore
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from state.store import Store
from tests.conftest import start_api
from tests.e2e.conftest import DaemonProcess, cli, free_port


async def _team_history(aiohttp_client, paths: Paths) -> dict:
    """A SQLite store with what a team server holds: agents, packs and receipts, deltas,
    briefs and their events, edits, a deletion and a redaction through the sync extension."""
    api = await start_api(aiohttp_client, paths, settings=Settings(role="cloud"))
    receipt = (await api.bootstrap(reason="agent_startup"))["receipt_id"]
    for n in range(12):
        await api.delta(
            receipt, summary=f"Decision {n}: the build cache lives in object storage", importance=3
        )
    brief = await api.post("/api/agent/memory-brief", {"task": "move the build cache"})
    await api.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        {"event_type": "handoff_ready", "summary": "cache moved; the CDN is next", "importance": 4},
    )
    owner = api.owner_key
    created = await api.post(
        "/api/sync/records",
        {"origin_memory_id": "mem_laptop_1", "kind": "fact", "content": "The staging password is hunter2"},
        key=owner,
    )
    memory_id = created["record"]["memory_id"]
    feed = await api.get("/api/sync/changes", key=owner)
    sha = next(c["content_sha256"] for c in feed["changes"] if c["memory_id"] == memory_id)
    await api.post(f"/api/sync/records/{memory_id}/redact", {"content_sha256": sha}, key=owner)
    await api.client.close()
    return {"redacted": memory_id}


async def test_a_team_store_moves_to_postgresql_and_verifies(
    aiohttp_client, paths: Paths, pg_url: str
) -> None:
    facts = await _team_history(aiohttp_client, paths)
    source = Store.open(paths.database, Settings())
    query = "object storage build cache"
    source_workspace = source.identities.owner()["workspace_id"] or ""
    found_before = {h.seq for h in source.search.search(query, [source_workspace], limit=50) if h.bm25_rank}
    newest_seq = source.conn.execute("select max(seq) from memory_records").fetchone()[0]
    source_changes = source.upstream.changes([source.identities.owner()["workspace_id"] or ""], 0, 1000)
    counts = {
        t: source.conn.execute(f"select count(*) from {t}").fetchone()[0]
        for t in ("memory_records", "sync_changelog", "receipts", "brief_events")
    }
    source.close()

    result = cli("migrate-store", "--to", pg_url, "--json")
    report = json.loads(result.stdout)
    assert report["verified"] is True, report
    assert "copying memory_records" in result.stderr  # progress as it goes
    by_table = {t["table"]: t for t in report["tables"]}
    for table, count in counts.items():
        assert by_table[table]["source_rows"] == by_table[table]["target_rows"] == count
    assert "password" not in report["to"] or "***" in report["to"]

    target = PgStore.open(pg_url, Settings())
    try:
        # The owner's key of this installation still opens the store.
        owner_key = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
        assert target.identities.identity_for_key(owner_key)["kind"] == "owner"
        workspace = target.identities.owner()["workspace_id"] or ""
        # Searchable on the server, and the redacted text is not.
        hits = target.search.search(query, [workspace], limit=50)
        assert {h.seq for h in hits if h.bm25_rank} == found_before and len(found_before) >= 12
        assert [h for h in target.search.search("hunter2", [workspace]) if h.bm25_rank is not None] == []
        # The changes feed keeps its numbers: a peer's cursor goes on where it was.
        assert [c["seq"] for c in target.upstream.changes([workspace], 0, 1000)] == [
            c["seq"] for c in source_changes
        ]
        # New rows are numbered after the copied ones.
        with target.transaction():
            fresh = target.memories.create(
                NewMemory(namespace=workspace, kind="fact", content="after the move", source="test")
            )
        assert fresh["seq"] == newest_seq + 1
        assert target.memories.get(facts["redacted"])["content"] != "The staging password is hunter2"
    finally:
        target.close()


def test_a_stopped_copy_resumes_without_copying_a_row_twice(store: Store, pg_url: str, monkeypatch) -> None:
    monkeypatch.setattr(copy_store, "BATCH_ROWS", 40)
    with store.transaction():
        for n in range(130):
            store.memories.create(
                NewMemory(namespace="wsp_r", kind="fact", content=f"note {n} about caching", source="test")
            )

    class Stop(Exception):
        pass

    def stop_in_the_middle(copy) -> None:
        if copy.table == "memory_records" and copy.copied >= 80 and copy.target_rows is None:
            raise Stop

    target = PgStore.open(pg_url, Settings())
    try:
        with pytest.raises(Stop):
            StoreCopy(store, target).run(stop_in_the_middle)
        assert target.conn.execute("select count(*) from memory_records").fetchone()[0] == 80
        copies = StoreCopy(store, target).run()
    finally:
        target.close()
    assert all(c.verified for c in copies), [
        (c.table, c.source_rows, c.target_rows) for c in copies if not c.verified
    ]
    target = PgStore.open(pg_url, Settings())
    try:
        assert target.conn.execute("select count(*) from memory_records").fetchone()[0] == 130
        assert target.conn.execute("select count(*) from memory_search").fetchone()[0] == 130
        assert len(target.search.search("caching", ["wsp_r"], limit=200)) == 130
        # Verification sees a row that differs (a run after the copy only verifies).
        target.conn.execute("update memory_records set content = 'changed' where seq = 7")
        differs = [c.table for c in StoreCopy(store, target).run() if not c.verified]
        assert differs == ["memory_records"]
    finally:
        target.close()


def test_a_database_holding_another_store_is_refused(store: Store, pg_url: str) -> None:
    target = PgStore.open(pg_url, Settings())
    try:
        with target.transaction():
            target.identities.create_owner()
        with pytest.raises(StoreUnavailable, match="already holds a store"):
            StoreCopy(store, target).run()
    finally:
        target.close()


def test_the_daemon_must_be_stopped_first(isolated_home, pg_url: str) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    daemon = DaemonProcess(free_port(), isolated_home)
    daemon.start()
    try:
        refused = cli("migrate-store", "--to", pg_url, check=False)
    finally:
        daemon.stop()
    assert refused.returncode != 0 and "stop it first" in refused.stderr
