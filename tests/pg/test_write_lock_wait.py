"""A team-server process whose write waits for another process's write on PostgreSQL keeps
serving (issue #18; state/group_commit.py ``first_write_waits_apart``): the request waits for
the write lock with the event loop free, instead of standing still in the synchronous driver
with every other request of the process behind it, and its write is stored once."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import httpx
import psycopg

from state.pg.connection import WRITE_LOCK
from tests.e2e.conftest import cli
from tests.pg.conftest import team_process


def test_reads_are_answered_while_a_write_waits_for_another_process(pg_url: str, tmp_path: Path) -> None:
    process = team_process(tmp_path / "host-a", pg_url)
    try:
        env = {**os.environ, "MEMORYCLOUD_HOME": str(process.home)}
        key = json.loads(cli("agent", "add", "agent", "--runtime", "codex", "--json", env=env).stdout)[
            "api_key"
        ]
        headers = {"Authorization": f"Bearer {key}"}
        receipt = httpx.post(
            f"{process.url}/api/agent/bootstrap/context", headers=headers, json={}, timeout=10
        ).json()["receipt_id"]
        answers: list[httpx.Response] = []
        with psycopg.connect(pg_url, autocommit=True) as other:  # another process, writing
            other.execute("select pg_advisory_lock(%s)", (WRITE_LOCK,))
            writer = threading.Thread(
                target=lambda: answers.append(
                    httpx.post(
                        f"{process.url}/api/agent/memory-delta",
                        headers={**headers, "X-AMP-Context-Receipt": receipt},
                        json={"summary": "written once the other process has committed"},
                        timeout=30,
                    )
                )
            )
            writer.start()
            time.sleep(0.5)  # the write is waiting for the lock now
            started = time.monotonic()
            found = httpx.get(
                f"{process.url}/api/agent/search", params={"q": "anything"}, headers=headers, timeout=5
            )
            assert found.status_code == 200 and time.monotonic() - started < 2.0
            assert not answers  # still waiting
            other.execute("select pg_advisory_unlock(%s)", (WRITE_LOCK,))
        writer.join(timeout=20)
        assert [a.status_code for a in answers] == [200], [a.text[:200] for a in answers]
        with psycopg.connect(pg_url) as conn:
            assert (
                conn.execute(
                    "select count(*) from memory_records where content like 'written once%'"
                ).fetchone()[0]
                == 1
            )
    finally:
        process.stop()
