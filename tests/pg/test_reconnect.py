"""A connection the server drops (a managed PostgreSQL's failover, a restart, a proxy's idle
timeout) is replaced (state/pg/connection.py): the statement that meets the loss fails, with
nothing of its write kept, and the next one works, in the store and in a daemon process."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from state.errors import StoreUnavailable
from state.memories import NewMemory
from state.pg.store import PgStore
from tests.e2e.conftest import DaemonProcess, cli, free_port


def _drop_connections(pg_url: str) -> int:
    """End every other connection to the test's database, as a failover does."""
    with psycopg.connect(pg_url, autocommit=True) as admin:
        return len(
            admin.execute(
                "select pg_terminate_backend(pid) from pg_stat_activity"
                " where datname = current_database() and pid <> pg_backend_pid()"
            ).fetchall()
        )


def _create(store: PgStore, content: str) -> dict:
    with store.transaction():
        return store.memories.create(
            NewMemory(namespace="wsp_a", kind="fact", content=content, source="test")
        )


def test_a_write_after_the_server_dropped_the_connection_runs_on_a_new_one(pg_url: str) -> None:
    store = PgStore.open(pg_url)
    try:
        before = _create(store, "written before the failover")
        assert _drop_connections(pg_url) >= 1
        after = _create(store, "written after the failover")  # its `begin` found the loss
        assert {hit.seq for hit in store.search.search("failover", ["wsp_a"])} == {
            before["seq"],
            after["seq"],
        }
    finally:
        store.close()


def test_a_transaction_the_loss_cuts_off_fails_whole_and_the_next_works(pg_url: str) -> None:
    store = PgStore.open(pg_url)
    try:
        with pytest.raises(StoreUnavailable, match="connection to PostgreSQL was lost"):
            with store.transaction():
                store.memories.create(
                    NewMemory(
                        namespace="wsp_a", kind="fact", content="cut off by the failover", source="test"
                    )
                )
                _drop_connections(pg_url)
                store.memories.create(
                    NewMemory(namespace="wsp_a", kind="fact", content="after the loss", source="test")
                )
        _create(store, "written once the server answered again")
    finally:
        store.close()
    with psycopg.connect(pg_url) as conn:
        contents = {row[0] for row in conn.execute("select content from memory_records")}
    assert contents == {"written once the server answered again"}


def test_a_daemon_serves_again_after_its_connections_were_dropped(pg_url: str, isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    daemon = DaemonProcess(free_port(), isolated_home, extra_args=("--role", "cloud", "--database", pg_url))
    daemon.start()
    try:
        from state.config import set_setting
        from state.paths import resolve_paths

        config = resolve_paths().config_file
        set_setting(config, "role", "cloud")
        set_setting(config, "database_url", pg_url)
        key = json.loads(cli("agent", "add", "failover-agent", "--runtime", "codex", "--json").stdout)[
            "api_key"
        ]
        with httpx.Client(
            base_url=daemon.url, headers={"Authorization": f"Bearer {key}"}, timeout=10
        ) as http:
            receipt = http.post("/api/agent/bootstrap/context", json={}).json()["receipt_id"]

            def write(text: str) -> httpx.Response:
                return http.post(
                    "/api/agent/memory-delta",
                    headers={"X-AMP-Context-Receipt": receipt},
                    json={"summary": text},
                )

            assert write("before the failover of the database").status_code == 200
            assert _drop_connections(pg_url) >= 2  # the daemon's store, vector and LISTEN connections
            # The next requests' first statements find the loss and run on a new connection.
            answers = [write(f"after the failover, attempt {n}").status_code for n in range(3)]
            assert answers == [200, 200, 200], answers
            deadline = time.monotonic() + 10
            while True:
                found = http.get("/api/agent/search", params={"q": "failover database"}).json()["items"]
                if len(found) == answers.count(200) + 1 or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
            assert len(found) == answers.count(200) + 1, found
    finally:
        daemon.stop()


def test_an_own_connection_runs_again_once_on_a_new_connection_after_a_loss(pg_url: str) -> None:
    from state.pg.engine import OwnConnection, connect

    opened: list[int] = []

    def connect_counted() -> object:
        opened.append(1)
        return connect(pg_url)

    own = OwnConnection(connect_counted)
    try:
        assert own.run(lambda conn: conn.execute("select 1").fetchone()[0]) == 1
        _drop_connections(pg_url)  # the vector writer's and the request counts' connections too
        assert own.run(lambda conn: conn.execute("select 2").fetchone()[0]) == 2
        assert len(opened) == 2
        with pytest.raises(psycopg.errors.UndefinedTable):  # not a loss: not run again
            own.run(lambda conn: conn.execute("select * from no_such_table"))
        assert len(opened) == 2
    finally:
        own.close()
