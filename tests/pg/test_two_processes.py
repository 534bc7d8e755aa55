"""Two team-server processes on one PostgreSQL database (issue #18): writes through both at
once, a peer's pull through either sees every write exactly once, and a process killed with
SIGKILL in the middle of writing loses none of the writes it acknowledged."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg
import pytest

from daemon.upstream.registration import solve_proof_of_work
from tests.e2e.conftest import cli
from tests.pg.conftest import team_process

WRITES_PER_PROCESS = 60


class Writer:
    """One agent's session on one process: a receipt, then memory deltas; what was
    acknowledged (200 with the memory's id) is kept."""

    def __init__(self, url: str, key: str, name: str) -> None:
        self.http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=15)
        self.name = name
        self.acknowledged: list[str] = []
        self.errors: list[str] = []
        pack = self.http.post("/api/agent/bootstrap/context", json={"reason": "agent_startup"})
        assert pack.status_code == 200, pack.text
        self.receipt = pack.json()["receipt_id"]

    def write(self, count: int) -> None:
        for n in range(count):
            try:
                answer = self.http.post(
                    "/api/agent/memory-delta",
                    headers={"X-AMP-Context-Receipt": self.receipt},
                    json={
                        "delta_type": "fact",
                        "summary": f"{self.name} note {n}: the build cache moved",
                        "importance": 3,
                    },
                )
            except httpx.HTTPError as exc:  # the process was killed: not acknowledged
                self.errors.append(repr(exc))
                return
            if answer.status_code != 200:
                self.errors.append(f"{answer.status_code} {answer.text[:200]}")
                continue
            self.acknowledged.append(answer.json()["delta"]["memory_id"])


def _pull_all(url: str, key: str, cursor: int = 0) -> tuple[list[str], int]:
    """A peer's pull of the changes feed from ``cursor``: the memory ids of the new versions."""
    seen: list[str] = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=15) as http:
        while True:
            page = http.get("/api/sync/changes", params={"cursor": cursor, "limit": 37})
            assert page.status_code == 200, page.text
            body = page.json()
            seen += [c["memory_id"] for c in body["changes"] if c["change"] == "version"]
            cursor = body["next_cursor"]
            if not body["has_more"]:
                return seen, cursor


@pytest.fixture
def team(pg_url: str, tmp_path: Path):
    first = team_process(tmp_path / "host-a", pg_url)
    second = team_process(tmp_path / "host-b", pg_url)
    env = {**os.environ, "MEMORYCLOUD_HOME": str(first.home)}
    key = json.loads(cli("agent", "add", "team-agent", "--runtime", "codex", "--json", env=env).stdout)[
        "api_key"
    ]
    yield first, second, key
    for process in (first, second):
        if process.process is not None:
            process.stop()


def test_concurrent_writes_through_two_processes_reach_every_pull_exactly_once(team) -> None:
    first, second, key = team
    writers = [Writer(p.url, key, f"{tag}{i}") for p, tag in ((first, "a"), (second, "b")) for i in range(2)]
    # A peer pulls through alternating processes while the writes go on: a cursor must never
    # pass a change that commits later with a smaller number.
    pulled: list[str] = []
    cursor = 0
    threads = [threading.Thread(target=w.write, args=(WRITES_PER_PROCESS // 2,)) for w in writers]
    for thread in threads:
        thread.start()
    turn = 0
    while any(t.is_alive() for t in threads):
        page, cursor = _pull_all((first, second)[turn % 2].url, key, cursor)
        pulled += page
        turn += 1
    for thread in threads:
        thread.join()
    page, cursor = _pull_all(second.url, key, cursor)
    pulled += page
    written = [m for w in writers for m in w.acknowledged]
    assert [e for w in writers for e in w.errors] == []
    assert len(written) == 2 * WRITES_PER_PROCESS
    assert sorted(pulled) == sorted(written)  # each once: none skipped, none repeated
    # A new peer pulling from the start through either process sees the same.
    for process in (first, second):
        assert sorted(_pull_all(process.url, key)[0]) == sorted(written)


def test_a_process_killed_mid_write_loses_no_acknowledged_write(team) -> None:
    first, second, key = team
    victim = Writer(second.url, key, "killed")
    survivor = Writer(first.url, key, "kept")
    threads = [
        threading.Thread(target=victim.write, args=(10_000,)),
        threading.Thread(target=survivor.write, args=(WRITES_PER_PROCESS,)),
    ]
    for thread in threads:
        thread.start()
    while len(victim.acknowledged) < 25:
        threading.Event().wait(0.01)
    second.stop(signal.SIGKILL)
    for thread in threads:
        thread.join(timeout=60)
    assert victim.errors, "the writes to the killed process stopped with an error"
    assert survivor.errors == [] and len(survivor.acknowledged) == WRITES_PER_PROCESS
    pulled = _pull_all(first.url, key)[0]
    acknowledged = victim.acknowledged + survivor.acknowledged
    assert set(acknowledged) <= set(pulled)
    # A write the killed process never answered is there whole or not at all; nothing twice.
    assert len(pulled) == len(set(pulled))
    with httpx.Client(base_url=first.url, headers={"Authorization": f"Bearer {key}"}, timeout=15) as http:
        for memory_id in victim.acknowledged[-3:]:
            assert http.get(f"/api/agent/memories/{memory_id}").status_code == 200


def test_a_write_waits_for_another_process_write_so_cursors_never_skip(pg_url: str) -> None:
    """The race the advisory lock closes, made to happen: process A numbers a change and has
    not committed; process B's write, numbered after it, must not commit first, or a peer
    that reads B's change moves its cursor past A's, which then appears behind it."""
    from state.config import Settings
    from state.memories import NewMemory
    from state.pg.store import PgStore

    a, b = PgStore.open(pg_url, Settings()), PgStore.open(pg_url, Settings())
    reader = PgStore.open(pg_url, Settings())
    try:
        b_committed = threading.Event()

        def b_writes() -> None:
            with b.transaction():
                b.memories.create(NewMemory(namespace="wsp_t", kind="fact", content="from B", source="test"))
            b_committed.set()

        with a.transaction():
            a.memories.create(NewMemory(namespace="wsp_t", kind="fact", content="from A", source="test"))
            thread = threading.Thread(target=b_writes)
            thread.start()
            # B waits for A's transaction: a reader now sees neither change.
            assert not b_committed.wait(0.5)
            assert reader.upstream.changes(["wsp_t"], 0, 10) == []
        thread.join(timeout=10)
        assert b_committed.is_set()
        changes = reader.upstream.changes(["wsp_t"], 0, 10)
        # Numbered in commit order: A's change first, then B's.
        assert [c["content"] for c in changes] == ["from A", "from B"]
        assert changes[0]["seq"] < changes[1]["seq"]
    finally:
        for store in (a, b, reader):
            store.close()


def test_write_transactions_of_two_connections_run_one_after_the_other(pg_url: str) -> None:
    """``begin immediate`` on PostgreSQL waits for every other connection's write transaction,
    as SQLite's does for every other writer of the file (state/pg/connection.py)."""
    from state.pg.connection import PgConnection

    first, second = PgConnection.open(pg_url), PgConnection.open(pg_url)
    try:
        began = threading.Event()

        def begin_second() -> None:
            second.execute("begin immediate")
            began.set()
            second.execute("commit")

        first.execute("begin immediate")
        thread = threading.Thread(target=begin_second)
        thread.start()
        assert not began.wait(0.5)  # held by the first connection's transaction
        first.execute("commit")
        thread.join(timeout=10)
        assert began.is_set()
    finally:
        first.close()
        second.close()


async def test_a_job_that_runs_once_per_team_server_is_skipped_while_another_process_runs_it(
    pg_url: str,
) -> None:
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from daemon.jobs import JobBoard
    from state.config import Settings
    from state.pg.store import PgStore

    first, second = PgStore.open(pg_url, Settings()), PgStore.open(pg_url, Settings())
    try:
        board = JobBoard(AsyncIOScheduler(), second)
        calls: list[str] = []
        board.add("expire_sync_intents", lambda: calls.append("ran"), 60, cluster_once=True)
        board.add("backfill_vectors", lambda: calls.append("local"), 60)
        with first.run_once("expire_sync_intents") as mine:
            assert mine
            await board.run("expire_sync_intents", lambda: calls.append("ran"))
            await board.run("backfill_vectors", lambda: calls.append("local"))  # per process
        assert calls == ["local"]
        assert board.states["expire_sync_intents"].last_result.startswith("skipped")
        await board.run("expire_sync_intents", lambda: calls.append("ran"))  # released
        assert calls == ["local", "ran"]
        with first.run_once("expire_sync_intents") as mine:
            assert mine  # the second process let it go when its run ended
    finally:
        first.close()
        second.close()


def _together(calls: list[Callable[[], httpx.Response]]) -> list[httpx.Response]:
    """Run the calls in threads released at the same moment; their answers, in order."""
    start = threading.Barrier(len(calls))
    answers: list[httpx.Response | None] = [None] * len(calls)

    def run(n: int) -> None:
        start.wait()
        answers[n] = calls[n]()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [a for a in answers if a is not None]


def test_one_idempotency_key_sent_to_both_processes_at_once_writes_once(team, pg_url: str) -> None:
    first, second, key = team
    auth = {"Authorization": f"Bearer {key}"}
    receipt = httpx.post(f"{first.url}/api/agent/bootstrap/context", json={}, headers=auth).json()[
        "receipt_id"
    ]
    headers = {**auth, "X-AMP-Context-Receipt": receipt, "Idempotency-Key": "push-7f3a"}
    body = {"delta_type": "fact", "summary": "sent eight times, stored once", "importance": 3}
    answers = _together(
        [
            lambda url=process.url: httpx.post(
                f"{url}/api/agent/memory-delta", json=body, headers=headers, timeout=30
            )
            for process in (first, second) * 4
        ]
    )
    assert [a.status_code for a in answers] == [200] * 8, [a.text[:200] for a in answers]
    assert len({a.json()["delta"]["memory_id"] for a in answers}) == 1
    assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == 7
    with psycopg.connect(pg_url) as conn:
        stored = conn.execute(
            "select count(*) from memory_records where content like %s", ("%sent eight times, stored once%",)
        ).fetchone()[0]
    assert stored == 1


def test_one_pairing_code_redeemed_on_both_processes_at_once_pairs_once(team) -> None:
    first, second, _key = team
    env = {**os.environ, "MEMORYCLOUD_HOME": str(first.home)}
    code = json.loads(
        cli(
            "agent", "pair", "--name", "carol-laptop", "--runtime", "memorycloud_companion", "--json", env=env
        ).stdout
    )["pairing_code"]
    answers = _together(
        [
            lambda url=process.url: httpx.post(
                f"{url}/api/agent/register", json={"pairing_code": code}, timeout=30
            )
            for process in (first, second) * 3
        ]
    )
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200, 410, 410, 410, 410, 410], [a.text[:200] for a in answers]


def test_a_challenge_from_one_process_registers_on_the_other(team) -> None:
    """Behind one address a client's challenge and its registration may reach different
    processes: a challenge is checked by any process serving the database, and used once on
    each (the pairing code is what is single use on the whole team server)."""
    first, second, _key = team
    env = {**os.environ, "MEMORYCLOUD_HOME": str(first.home)}
    codes = [
        json.loads(
            cli(
                "agent", "pair", "--name", name, "--runtime", "memorycloud_companion", "--json", env=env
            ).stdout
        )["pairing_code"]
        for name in ("dave-laptop", "erin-laptop")
    ]
    challenge = httpx.post(f"{first.url}/api/agent/challenge", json={}).json()
    nonce = solve_proof_of_work(challenge["challenge_id"], challenge["server_nonce"], challenge["difficulty"])
    proof = {"challenge_id": challenge["challenge_id"], "nonce": nonce}
    registered = httpx.post(f"{second.url}/api/agent/register", json={**proof, "pairing_code": codes[0]})
    assert registered.status_code == 200, registered.text
    again = httpx.post(f"{second.url}/api/agent/register", json={**proof, "pairing_code": codes[1]})
    assert again.status_code == 400 and "already solved" in again.text
    # Another id (its last digit changed: replacing it by "0" gave the same id one time in 16,
    # which the first process, not having seen it used, accepted): its server nonce differs,
    # so the nonce solves it only by chance (1 in 4,096 at difficulty 3).
    last = challenge["challenge_id"][-1]
    forged = {
        "challenge_id": challenge["challenge_id"][:-1] + ("1" if last == "0" else "0"),
        "nonce": nonce,
        "pairing_code": codes[1],
    }
    assert httpx.post(f"{first.url}/api/agent/register", json=forged).status_code == 400
