"""Searches and feed reads of a team server on PostgreSQL wait for the database beside the
event loop, on psycopg's pool (issue #18; state/pg/read_pool.py): a read held up in the
database holds up nothing else of the process, several reads are in flight at once, a read
sees committed rows only, and a pool connection the server dropped is replaced."""

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
from state.pg.read_pool import APPLICATION_NAME
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
                (APPLICATION_NAME,),
            ).fetchone()[0]
        assert dropped >= 1  # what a failover does to the pool
        answer = search()
        assert answer.status_code == 200, answer.text
    finally:
        process.stop()


async def test_a_read_apart_sees_committed_rows_and_may_not_write(pg_url: str) -> None:
    store = PgStore.open(pg_url, Settings(role="cloud"))
    try:
        store.open_read_pool(2)
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

        with pytest.raises(RuntimeError, match="a write inside a read"):
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
