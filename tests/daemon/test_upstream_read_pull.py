"""Pull from an upstream without the sync extension, through AMP's read endpoints (memory map,
memory query, memory detail): two real daemon apps over loopback, the upstream in the cloud
role with ``serve_sync_extension = false``, so it answers /api/sync/* 404 like an upstream
that never had it (issue #14, "Pull from any AMP upstream")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from daemon.upstream.read_puller import MAP_LIMIT, QUERY_LIMIT
from state.config import Settings
from tests.daemon.test_upstream_sync import Side, contents, start_side, sync, write_delta


@pytest.fixture
async def pair(tmp_path: Path):
    """(local, cloud): the cloud serves no sync extension; a teammate agent writes there."""
    cloud = await start_side(
        tmp_path / "cloud", Settings(role="cloud", serve_sync_extension=False), "teammate"
    )
    local = await start_side(tmp_path / "local", Settings(sync_upstream_seconds=3600), "coder")
    with cloud.store.transaction():
        code = cloud.store.identities.create_pairing_code("laptop", "memorycloud_companion")
    status = await local.local(
        "POST", "/api/local/upstream/connect", {"url": cloud.url, "pairing_code": code["pairing_code"]}
    )
    assert status["connected"] and not status["sync_extension"], status
    assert status["pull"]["via"] == "read_endpoints"
    # Connecting kicks a first round a second later: let it finish, so that what each test
    # counts is its own rounds (a background round may still follow a pull that applied).
    for _ in range(100):
        if local.services.upstream.status().get("last_success_at"):
            break
        await asyncio.sleep(0.05)
    yield local, cloud
    await local.client.close()
    await cloud.client.close()


def pulled(side: Side, text: str) -> list[dict[str, Any]]:
    rows = side.store.conn.execute(
        "select id from memory_records where deleted_at is null and content = ?", (text,)
    ).fetchall()
    return [side.store.memories.get(r[0]) for r in rows]


def outcome(status: dict[str, Any]) -> dict[str, Any]:
    assert status["last_error"] is None, status
    return json.loads(status["outcome"])["pull"]


async def teammate_deltas(cloud: Side, summaries: list[str], **body: Any) -> list[str]:
    receipt = (await cloud.bootstrap())["receipt_id"]
    return [(await cloud.delta(receipt, summary=s, **body))["delta"]["memory_id"] for s in summaries]


def teammate_burst(cloud: Side, summaries: list[str], delta_type: str) -> None:
    """Memory deltas of the teammate in one transaction (what POST /api/agent/memory-delta
    stores), so that no background round sees half of them."""
    workspace = cloud.store.identities.default_workspace()["id"]
    with cloud.store.transaction():
        for summary in summaries:
            cloud.services.deltas.record(
                cloud.agent,
                workspace_id=workspace,
                project_key=None,
                delta_type=delta_type,
                summary=summary,
                why_it_matters=None,
                triggers=[],
                importance=3,
                source="memory_delta",
            )


async def rounds_until_caught_up(side: Side, most: int = 12) -> list[dict[str, Any]]:
    """Sync rounds until one has nothing left for the next round."""
    done = []
    for _ in range(most):
        done.append(outcome(await sync(side)))
        if "resume_next_round" not in done[-1]:
            return done
    raise AssertionError(f"still not caught up after {most} rounds: {done}")


async def test_the_sync_extension_is_not_served_when_switched_off(pair):
    _, cloud = pair
    for method, path in (
        ("GET", "/api/sync/info"),
        ("GET", "/api/sync/changes"),
        ("POST", "/api/sync/records"),
        ("POST", "/api/sync/records/mem_x/redact"),
    ):
        response = await cloud.client.request(method, path, json={}, headers=cloud.auth())
        assert response.status == 404, (method, path)


async def test_a_teammates_delta_reaches_the_local_context_pack_once(pair):
    local, cloud = pair
    upstream_id = (
        await teammate_deltas(
            cloud, ["teammate found: the CI cache is flaky"], why_it_matters="retries hide real failures"
        )
    )[0]
    await write_delta(local, "local decision: keep SQLite in WAL mode")
    first = await sync(local)
    assert outcome(first)["applied"] == 1
    (copy,) = pulled(
        local, "teammate found: the CI cache is flaky\n\nWhy it matters: retries hide real failures"
    )
    teammate = cloud.store.memories.get(upstream_id)["identity_id"]
    assert copy["provenance"]["upstream_id"] == upstream_id
    assert copy["provenance"]["author"] == teammate and copy["provenance"]["agent"] == "teammate"
    assert copy["provenance"]["upstream"] == cloud.url and copy["source"] == "memory_delta"
    pack = await local.bootstrap()
    assert "CI cache is flaky" in pack["summary_markdown"]
    # More rounds read the map and fetch nothing: no duplicates on either side, and our own
    # push does not come back as a teammate's record.
    second = await sync(local)
    assert outcome(second) == {"applied": 0, "conflicts": 0, "skipped": 0}
    await sync(local)
    assert contents(local).count("local decision: keep SQLite in WAL mode") == 1
    assert contents(cloud).count("local decision: keep SQLite in WAL mode") == 1
    assert len(pulled(local, copy["content"])) == 1
    assert second["backlog"] == 0 and second["pull"]["mark"]


async def test_more_new_records_than_one_page_all_arrive_once(pair):
    local, cloud = pair
    await sync(local)
    summaries = [f"migration step {n:02d} done" for n in range(QUERY_LIMIT + 15)]
    teammate_burst(cloud, summaries, "task_event")
    first = outcome(await sync(local))
    # One page of the memory query holds 30; the other 15 were read one by one (memory detail).
    assert first["applied"] == len(summaries) and "resume_next_round" not in first
    assert all(contents(local).count(s) == 1 for s in summaries)
    assert outcome(await sync(local))["applied"] == 0
    assert all(contents(local).count(s) == 1 for s in summaries)


async def test_a_changed_upstream_record_becomes_a_new_local_version(pair):
    local, cloud = pair
    (upstream_id,) = await teammate_deltas(cloud, ["deploy with blue-green"])
    await sync(local)
    local_id = local.store.upstream.link_by_upstream(upstream_id)["local_id"]
    with cloud.store.transaction():
        cloud.store.memories.update(upstream_id, content="deploy with canary first")
    assert outcome(await sync(local))["applied"] == 1
    versions = [v["content"] for v in local.store.memories.versions(local_id)]
    assert versions == ["deploy with blue-green", "deploy with canary first"]
    # The incoming version is not pushed back as a local edit.
    status = await sync(local)
    assert status["backlog"] == 0 and status["skipped"] == []
    assert [v["content"] for v in cloud.store.memories.versions(upstream_id)] == [
        "deploy with blue-green",
        "deploy with canary first",
    ]


async def test_a_record_changed_on_both_sides_is_one_conflict(pair):
    local, cloud = pair
    (upstream_id,) = await teammate_deltas(cloud, ["port 8517"])
    await sync(local)
    local_id = local.store.upstream.link_by_upstream(upstream_id)["local_id"]
    with cloud.store.transaction():
        cloud.store.memories.update(upstream_id, content="port 9000")
    with local.store.transaction():
        local.store.memories.update(local_id, content="port 8518")
    assert outcome(await sync(local))["conflicts"] == 1
    await sync(local)
    conflicts = [
        c
        for c in (await local.local("GET", "/api/local/conflicts"))["conflicts"]
        if c["kind"] == "upstream_sync"
    ]
    assert len(conflicts) == 1
    assert (conflicts[0]["current"], conflicts[0]["incoming"], conflicts[0]["base"]) == (
        "port 8518",
        "port 9000",
        "port 8517",
    )
    assert local.store.memories.get(local_id)["content"] == "port 8518"
    # The person takes the incoming one; a later upstream change then applies cleanly.
    await local.local(
        "POST", f"/api/local/conflicts/{conflicts[0]['id']}/resolve", {"action": "take_incoming"}
    )
    await sync(local)
    assert local.store.memories.get(local_id)["content"] == "port 9000"
    with cloud.store.transaction():
        cloud.store.memories.update(upstream_id, content="port 9001")
    assert outcome(await sync(local))["applied"] == 1
    assert local.store.memories.get(local_id)["content"] == "port 9001"
    assert (
        len(
            [
                c
                for c in (await local.local("GET", "/api/local/conflicts"))["conflicts"]
                if c["kind"] == "upstream_sync" and c["status"] == "open"
            ]
        )
        == 0
    )


async def test_more_changes_than_the_map_holds_are_reported_as_a_gap(pair):
    local, cloud = pair
    await teammate_deltas(cloud, ["before the burst"])
    await sync(local)
    burst = [f"burst note {n:03d}" for n in range(MAP_LIMIT + 10)]
    teammate_burst(cloud, burst, "note")
    # Bounded rounds (detail reads are capped per round) catch up with what the map lists.
    done = await rounds_until_caught_up(local)
    assert len(done) > 1 and sum(d["applied"] for d in done) <= MAP_LIMIT
    status = await local.local("GET", "/api/local/upstream")
    assert status["pull"]["gap"]["kinds"] == ["memory_delta"]
    # The newest arrived, each once; the 10 oldest of the burst were never listed.
    here = contents(local)
    assert all(here.count(text) == 1 for text in burst[10:])
    assert not any(text in here for text in burst[:10])


async def test_an_unreachable_upstream_backs_the_pull_off(pair):
    local, cloud = pair
    await sync(local)
    await cloud.client.close()
    failed = await sync(local)
    assert failed["last_error"] and failed["pull"]["failures"] == 1 and failed["pull"]["retry_at"]
    # Within the backoff the next round does not try the pull; local memory is untouched.
    assert json.loads((await sync(local))["outcome"])["pull"]["deferred_until"]
    assert (await local.bootstrap())["receipt_id"]


async def test_status_counts_only_unsent_writes_as_the_outbox(pair):
    """Item 9: finished entries are named as what they are, never counted as a backlog."""
    local, _ = pair
    await write_delta(local, "first")
    await write_delta(local, "second")
    status = await sync(local)
    assert status["backlog"] == 0
    assert status["outbox"] == {"pending": 0, "held": 0, "interrupted": 0}
    assert status["finished"]["sent"] == 2
    await write_delta(local, "third, not yet sent")
    status = await local.local("GET", "/api/local/upstream")
    assert status["backlog"] == sum(status["outbox"].values()) == 1
    assert status["finished"]["sent"] == 2
