"""Searches, pulls and the busiest writes of a team server on PostgreSQL wait for the database
beside the event loop, on psycopg's pools (issue #18; state/pg/apart_pool.py): a read or a
write held up in the database holds up nothing else of the process, several reads are in
flight at once, a read sees committed rows only and may not write, writes queued together
share a transaction and one that fails is undone alone, what a write apart leaves for the
event loop (waking pulls, the vector worker) runs there, and a pool connection the server
dropped is replaced."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from state.config import Settings
from state.pg.apart_pool import READS_NAME, WRITES_NAME
from state.pg.store import PgStore
from tests.e2e.conftest import cli
from tests.pg.conftest import team_process


def _agent(process: Any) -> tuple[dict[str, str], str]:
    env = {**os.environ, "MEMORYCLOUD_HOME": str(process.home)}
    key = json.loads(cli("agent", "add", "agent", "--runtime", "codex", "--json", env=env).stdout)["api_key"]
    headers = {"Authorization": f"Bearer {key}"}
    receipt = httpx.post(f"{process.url}/api/agent/bootstrap/context", headers=headers, json={}, timeout=10)
    return headers, receipt.json()["receipt_id"]


def test_searches_held_up_in_the_database_hold_up_nothing_else(pg_url: str, tmp_path: Path) -> None:
    process = team_process(tmp_path / "host", pg_url)
    try:
        headers, receipt = _agent(process)
        written = httpx.post(
            f"{process.url}/api/agent/memory-delta",
            headers={**headers, "X-AMP-Context-Receipt": receipt},
            json={"summary": "the staging database moved to the eu-west region"},
            timeout=10,
        )
        assert written.status_code == 200, written.text
        answers: list[httpx.Response] = []

        def search() -> None:
            answers.append(
                httpx.get(
                    f"{process.url}/api/agent/search",
                    params={"q": "staging region"},
                    headers=headers,
                    timeout=30,
                )
            )

        with psycopg.connect(pg_url) as other:
            # Every search reads the index totals first: both wait in the database now.
            other.execute("lock table search_totals in access exclusive mode")
            searches = [threading.Thread(target=search) for _ in range(2)]
            for thread in searches:
                thread.start()
            time.sleep(0.5)
            assert not answers  # both still waiting for the lock
            started = time.monotonic()
            info = httpx.get(f"{process.url}/api/sync/info", headers=headers, timeout=5)
            assert info.status_code == 200 and time.monotonic() - started < 2.0
            other.rollback()  # the lock is released
        for thread in searches:
            thread.join(timeout=20)
        assert [a.status_code for a in answers] == [200, 200], [a.text[:200] for a in answers]
        for answer in answers:
            assert [item["content"] for item in answer.json()["items"]] == [
                "the staging database moved to the eu-west region"
            ]
    finally:
        process.stop()


def test_a_read_after_its_pool_lost_every_connection_is_answered(pg_url: str, tmp_path: Path) -> None:
    process = team_process(tmp_path / "host", pg_url)
    try:
        headers, _ = _agent(process)

        def search() -> httpx.Response:
            return httpx.get(
                f"{process.url}/api/agent/search", params={"q": "x"}, headers=headers, timeout=30
            )

        assert search().status_code == 200
        with psycopg.connect(pg_url, autocommit=True) as admin:
            dropped = admin.execute(
                "select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name = %s",
                (READS_NAME,),
            ).fetchone()[0]
        assert dropped >= 1  # what a failover does to the pool
        answer = search()
        assert answer.status_code == 200, answer.text
    finally:
        process.stop()


async def test_a_read_apart_sees_committed_rows_and_may_not_write(pg_url: str) -> None:
    store = PgStore.open(pg_url, Settings(role="cloud"))
    try:
        store.open_apart_pools(2, False)
        with store.transaction():
            store.identities.create_workspace("committed", owner_id=None)
        store.conn.execute("begin")
        store.conn.execute(
            "insert into workspaces (id, name, is_default, created_at) values ('wsp_open', 'open', 0, '2026')"
        )
        names = await store.read(lambda: sorted(w["name"] for w in store.identities.workspaces()))
        assert "committed" in names and "open" not in names  # the open transaction is not seen
        store.conn.execute("rollback")

        def write() -> None:
            with store.transaction():
                store.identities.create_workspace("from a read", owner_id=None)

        with pytest.raises(RuntimeError, match="a transaction begun in work that runs apart"):
            await store.read(write)
        assert "from a read" not in [w["name"] for w in store.identities.workspaces()]
        # Reads run at once, each on its own connection.
        pids = await asyncio.gather(
            *(
                store.read(lambda: store.conn.execute("select pg_backend_pid(), pg_sleep(0.3)").fetchone()[0])
                for _ in range(2)
            )
        )
        assert len(set(pids)) == 2
    finally:
        store.close()


def test_a_write_held_up_in_the_database_holds_up_nothing_else(pg_url: str, tmp_path: Path) -> None:
    """A memory delta (a handler that runs apart) waits for a lock in the database in a
    worker thread; the process answers meanwhile; then the delta is stored once, a pull
    waiting on the same process is woken by it, and its vector is made."""
    process = team_process(tmp_path / "host", pg_url)
    try:
        headers, receipt = _agent(process)
        cursor = httpx.get(f"{process.url}/api/sync/info", headers=headers, timeout=10).json()[
            "latest_cursor"
        ]
        answers: dict[str, httpx.Response] = {}

        def pull() -> None:
            answers["pull"] = httpx.get(
                f"{process.url}/api/sync/changes",
                params={"cursor": cursor, "wait": 20},
                headers=headers,
                timeout=30,
            )

        def write() -> None:
            answers["write"] = httpx.post(
                f"{process.url}/api/agent/memory-delta",
                headers={**headers, "X-AMP-Context-Receipt": receipt, "Idempotency-Key": "delta-1"},
                json={"summary": "the release train leaves on thursdays"},
                timeout=30,
            )

        puller = threading.Thread(target=pull)
        puller.start()
        with psycopg.connect(pg_url) as other:
            other.execute("lock table search_totals in access exclusive mode")  # every index write needs it
            writer = threading.Thread(target=write)
            writer.start()
            time.sleep(0.5)
            assert "write" not in answers  # waiting in the database
            started = time.monotonic()
            info = httpx.get(f"{process.url}/api/sync/info", headers=headers, timeout=5)
            assert info.status_code == 200 and time.monotonic() - started < 2.0
            other.rollback()
        writer.join(timeout=20)
        puller.join(timeout=20)
        assert answers["write"].status_code == 200, answers["write"].text
        assert answers["pull"].status_code == 200
        assert [c["content"] for c in answers["pull"].json()["changes"]] == [
            "the release train leaves on thursdays"
        ]
        again = httpx.post(  # its Idempotency-Key: the first answer, not a second record
            f"{process.url}/api/agent/memory-delta",
            headers={**headers, "X-AMP-Context-Receipt": receipt, "Idempotency-Key": "delta-1"},
            json={"summary": "the release train leaves on thursdays"},
            timeout=30,
        )
        assert again.headers.get("Idempotent-Replayed") == "true"
        with psycopg.connect(pg_url, autocommit=True) as conn:
            assert (
                conn.execute(
                    "select count(*) from memory_records where content like 'the release train%'"
                ).fetchone()[0]
                == 1
            )
            deadline = time.monotonic() + 15
            while not conn.execute("select count(*) from memory_vectors").fetchone()[0]:
                assert time.monotonic() < deadline, "the vector worker was never woken"
                time.sleep(0.1)
            statements = conn.execute(
                "select count(*) from pg_stat_activity where application_name = %s",
                (WRITES_NAME,),
            ).fetchone()[0]
        assert statements >= 1  # the write ran on the write pool's connection
    finally:
        process.stop()


async def test_writes_queued_together_share_a_batch_and_a_failed_one_is_undone_alone(
    aiohttp_client: Any, paths: Any, pg_url: str
) -> None:
    from daemon import keys
    from state.pg.connection import WRITE_LOCK
    from tests.conftest import start_api

    api = await start_api(
        aiohttp_client, paths, settings=Settings(check_responses=True, role="cloud", database_url=pg_url)
    )
    writes = api.client.app[keys.STORE].writes
    assert writes is not None
    answer = await api.client.post("/api/agent/bootstrap/context", headers=api.auth(), json={})
    receipt = (await answer.json())["receipt_id"]

    async def delta(text: str) -> int:
        answer = await api.client.post(
            "/api/agent/memory-delta",
            headers={**api.auth(), "X-AMP-Context-Receipt": receipt},
            json={"summary": text},
        )
        return answer.status

    texts = [f"batched write number {n}" for n in range(5)]
    with psycopg.connect(pg_url, autocommit=True) as other:  # another process, writing
        other.execute("select pg_advisory_lock(%s)", (WRITE_LOCK,))
        pending = asyncio.gather(
            *(delta(t) for t in [*texts[:2], "a NUL \u0000 cannot be stored", *texts[2:]])
        )
        await asyncio.sleep(0.5)  # all queued behind the lock by now
        other.execute("select pg_advisory_unlock(%s)", (WRITE_LOCK,))
        statuses = await pending
    assert statuses == [200, 200, 400, 200, 200, 200], statuses
    assert writes.batches < writes.writes  # some of them shared a transaction
    with psycopg.connect(pg_url, autocommit=True) as conn:
        stored = [
            r[0]
            for r in conn.execute(
                "select content from memory_records where content like 'batched%' order by content"
            )
        ]
        assert stored == texts
        assert (
            conn.execute("select count(*) from memory_records where content like 'a NUL%'").fetchone()[0] == 0
        )


async def test_a_write_that_aborts_its_batch_takes_no_acknowledged_write_with_it(pg_url: str) -> None:
    """A write whose failed statement is outside a transaction of its own aborts the batch's
    transaction, which PostgreSQL then answers COMMIT to with a ROLLBACK: the writes before it
    in the batch answer 503 (stored: none of them), the ones after it are stored."""
    from state.errors import StoreUnavailable
    from state.pg.connection import WRITE_LOCK

    store = PgStore.open(pg_url, Settings(role="cloud"))
    try:
        store.open_apart_pools(1, True)
        store.conn.execute("create table probe (name text)")

        def insert(name: str) -> Any:
            def work() -> str:
                with store.transaction():
                    store.conn.execute("insert into probe values (?)", (name,))
                return name

            return work

        def broken() -> None:
            store.conn.execute("select 1 / 0")  # not in a store.transaction()

        with psycopg.connect(pg_url, autocommit=True) as other:  # another process, writing
            other.execute("select pg_advisory_lock(%s)", (WRITE_LOCK,))
            first = asyncio.ensure_future(store.write(insert("first")))  # its batch waits for the lock
            await asyncio.sleep(0.3)
            rest = [
                asyncio.ensure_future(store.write(w)) for w in (insert("second"), broken, insert("third"))
            ]
            await asyncio.sleep(0.3)  # queued together: the next batch
            other.execute("select pg_advisory_unlock(%s)", (WRITE_LOCK,))
        outcomes = await asyncio.gather(first, *rest, return_exceptions=True)
        assert outcomes[0] == "first"
        assert isinstance(outcomes[1], StoreUnavailable), outcomes[1]
        assert "division by zero" in str(outcomes[2])
        assert outcomes[3] == "third"
        stored = sorted(r[0] for r in store.conn.execute("select name from probe").fetchall())
        assert stored == ["first", "third"]
    finally:
        store.close()


async def test_a_group_commit_whose_transaction_a_failed_read_aborted_acknowledges_nothing(
    pg_url: str,
) -> None:
    """On the event loop's group commit too: a statement that fails outside every unit while
    the group's transaction is open aborts it, and its COMMIT must not pass for one."""
    from state.errors import StoreUnavailable
    from state.group_commit import collect_commits, disable_group_commit, enable_group_commit, wait_commits

    store = PgStore.open(pg_url, Settings(role="cloud"))
    try:
        enable_group_commit(store.conn, asyncio.get_running_loop())
        store.conn.execute("create table probe (name text)")
        with collect_commits() as pending:
            with store.transaction():
                store.conn.execute("insert into probe values ('written')")
            with pytest.raises(Exception, match="division by zero"):
                store.conn.execute("select 1 / 0")  # a read, while the group is open
            with pytest.raises(StoreUnavailable, match="nothing was stored"):
                await wait_commits(pending)
        disable_group_commit(store.conn)
        assert store.conn.execute("select count(*) from probe").fetchone()[0] == 0
    finally:
        store.close()
