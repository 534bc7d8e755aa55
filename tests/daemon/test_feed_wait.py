"""Pulls that wait for the next change (GET /api/sync/changes?wait=N, issue #18: "pulls are
woken by LISTEN/NOTIFY instead of polling"), and the downstream daemon that follows the feed
with them. Real daemon apps over loopback HTTP, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from daemon.runtime.sync_feed import MAX_WAIT_SECONDS
from daemon.upstream.client import UpstreamClient
from daemon.upstream.follower import FeedFollower
from state.config import Settings
from state.identities import AGENT_SCOPES, SYNC_SCOPE
from state.memories import NewMemory
from tests.conftest import cloud_settings
from tests.daemon.test_upstream_sync import Side, contents, start_side

pytestmark = pytest.mark.both_engines


@pytest.fixture
async def cloud(request: pytest.FixtureRequest, tmp_path: Path, engine: str):
    """A team server on the test's engine; its agent may use the sync extension."""
    side = await start_side(
        tmp_path / "cloud", cloud_settings(request), "teammate", scopes=[*AGENT_SCOPES, SYNC_SCOPE]
    )
    yield side
    await side.client.close()


def record(n: int) -> dict[str, Any]:
    return {"origin_memory_id": f"mem_origin_{n}", "kind": "fact", "content": f"team fact number {n}"}


async def pull(side: Side, cursor: int, wait: int, key: str | None = None) -> tuple[dict[str, Any], float]:
    """The feed after ``cursor`` with ``?wait=``; and how long the answer took."""
    started = time.monotonic()
    answer = await side.get(f"/api/sync/changes?cursor={cursor}&wait={wait}", key=key)
    return answer, time.monotonic() - started


async def latest(side: Side) -> int:
    return (await side.get("/api/sync/info"))["latest_cursor"]


async def test_the_info_says_how_long_a_pull_may_wait(cloud: Side) -> None:
    assert (await cloud.get("/api/sync/info"))["wait_max_seconds"] == MAX_WAIT_SECONDS


async def test_a_pull_with_changes_answers_at_once(cloud: Side) -> None:
    await cloud.post("/api/sync/records", record(1))
    answer, took = await pull(cloud, 0, 20)
    assert [c["content"] for c in answer["changes"]] == ["team fact number 1"]
    assert took < 5


async def test_a_waiting_pull_answers_when_a_change_commits(cloud: Side) -> None:
    cursor = await latest(cloud)
    waiting = asyncio.create_task(pull(cloud, cursor, 20))
    await asyncio.sleep(0.5)
    assert not waiting.done()  # nothing new: it waits
    await cloud.post("/api/sync/records", record(2))
    answer, took = await asyncio.wait_for(waiting, 10)
    assert [c["content"] for c in answer["changes"]] == ["team fact number 2"]
    assert answer["next_cursor"] > cursor
    assert took < 10  # not the 20 s it was allowed


async def test_a_change_that_announced_itself_to_no_one_wakes_the_pull_within_a_tick(cloud: Side) -> None:
    """A write the waiters are not told of (a CLI process's, on SQLite): the newest cursor,
    read once a second while pulls wait, finds it."""
    cursor = await latest(cloud)
    waiting = asyncio.create_task(pull(cloud, cursor, 20))
    await asyncio.sleep(0.3)
    workspace = cloud.store.identities.default_workspace()["id"]
    with cloud.store.transaction():
        cloud.store.memories.create(
            NewMemory(
                namespace=workspace, kind="fact", content="written behind the daemon's back", source="cli"
            )
        )
    answer, took = await asyncio.wait_for(waiting, 10)
    assert [c["content"] for c in answer["changes"]] == ["written behind the daemon's back"]
    assert took < 10


async def test_a_pull_waits_out_changes_of_other_workspaces_and_answers_empty(cloud: Side) -> None:
    store = cloud.store
    with store.transaction():
        other = store.identities.create_workspace("Other team", owner_id=None)
        _, outsider = store.identities.create_agent(
            "outsider", "codex", scopes=[*AGENT_SCOPES, SYNC_SCOPE], workspace_id=other["id"]
        )
    cursor = await latest(cloud)
    waiting = asyncio.create_task(pull(cloud, cursor, 3))
    await asyncio.sleep(0.3)
    await cloud.post("/api/sync/records", record(3), key=outsider)  # another workspace's change
    answer, took = await asyncio.wait_for(waiting, 15)
    assert answer["changes"] == [] and answer["next_cursor"] == cursor and not answer["has_more"]
    assert took >= 2.5  # it went on waiting: the change was not its workspace's


async def test_a_wait_longer_than_allowed_is_cut_to_the_maximum(cloud: Side) -> None:
    await cloud.post("/api/sync/records", record(4))
    answer, _ = await pull(cloud, 0, 100_000)
    assert answer["changes"]
    refused = await cloud.get("/api/sync/changes?cursor=0&wait=x", status=422)
    assert "'wait'" in str(refused)


async def test_stopping_the_server_answers_the_waiting_pulls(cloud: Side) -> None:
    cursor = await latest(cloud)
    url = str(cloud.client.make_url(f"/api/sync/changes?cursor={cursor}&wait={MAX_WAIT_SECONDS}"))
    async with aiohttp.ClientSession() as session:

        async def waiting_pull() -> tuple[int, Any]:
            async with session.get(url, headers=cloud.auth()) as response:
                return response.status, await response.json()

        waiting = asyncio.create_task(waiting_pull())
        await asyncio.sleep(0.5)
        started = time.monotonic()
        await cloud.client.close()  # the server's graceful shutdown
        status, answer = await asyncio.wait_for(waiting, 10)
    assert status == 200 and answer["changes"] == []
    assert time.monotonic() - started < 10  # not the 30 s the pull was allowed


# -- the downstream daemon ------------------------------------------------------------------


async def paired(tmp_path: Path, cloud: Side, **settings: Any) -> Side:
    local = await start_side(tmp_path / "local", Settings(sync_upstream_seconds=3600, **settings), "coder")
    with cloud.store.transaction():
        code = cloud.store.identities.create_pairing_code("laptop", "memorycloud_companion")
    status = await local.local(
        "POST", "/api/local/upstream/connect", {"url": cloud.url, "pairing_code": code["pairing_code"]}
    )
    assert status["connected"] and status["sync_extension"]
    return local


async def settled(local: Side) -> None:
    """The sync round that connecting starts (a second later) is over."""
    upstream = local.services.upstream
    await asyncio.sleep(0.1)
    for _ in range(100):
        status = upstream.status()
        if status["sync_scheduled_at"] is None and not status["syncing"]:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the first sync round did not end")


async def arrives(local: Side, content: str, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if content in contents(local):
            return True
        await asyncio.sleep(0.1)
    return False


async def test_a_following_daemon_pulls_a_change_as_it_commits_upstream(tmp_path: Path, cloud: Side) -> None:
    local = await paired(tmp_path, cloud)
    try:
        await asyncio.sleep(0.5)  # the follower's first request waits upstream
        await cloud.post("/api/sync/records", record(5))
        # The scheduled round is an hour away: only the follower can bring it.
        assert await arrives(local, "team fact number 5", within=8)
        assert local.services.upstream.follower.rounds >= 1
        assert (await local.local("GET", "/api/local/upstream"))["pull"]["following"] is True
    finally:
        await local.client.close()


async def test_without_following_the_change_waits_for_a_round(tmp_path: Path, cloud: Side) -> None:
    local = await paired(tmp_path, cloud, follow_upstream=False)
    try:
        await settled(local)
        await cloud.post("/api/sync/records", record(6))
        assert not await arrives(local, "team fact number 6", within=2)
        assert (await local.local("GET", "/api/local/upstream"))["pull"]["following"] is False
        await local.local("POST", "/api/local/upstream/sync")
        assert "team fact number 6" in contents(local)
    finally:
        await local.client.close()


async def test_an_upstream_that_does_not_let_pulls_wait_is_not_followed(aiohttp_server) -> None:
    """An upstream with the sync feed but no waiting (an older companion): asking it in a loop
    would poll it as fast as it answers, so the follower stops after reading its info."""
    asked: list[str] = []

    async def info(request: web.Request) -> web.Response:
        asked.append("info")
        return web.json_response({"schema": "memorycloud.sync-info.v1", "latest_cursor": 0})

    async def changes(request: web.Request) -> web.Response:
        asked.append("changes")
        return web.json_response({"schema": "memorycloud.sync-changes.v1", "changes": [], "has_more": False})

    app = web.Application()
    app.router.add_get("/api/sync/info", info)
    app.router.add_get("/api/sync/changes", changes)
    server = await aiohttp_server(app)
    client = UpstreamClient(str(server.make_url("")), "key")
    rounds: list[int] = []

    async def sync() -> str:
        rounds.append(1)
        return "{}"

    follower = FeedFollower(lambda: client, lambda: 0, lambda: True, sync, 5.0)
    try:
        follower.start()
        for _ in range(50):
            if not follower.running:
                break
            await asyncio.sleep(0.05)
        assert not follower.running
        assert asked == ["info"] and rounds == []
    finally:
        await follower.stop()
        await client.close()
