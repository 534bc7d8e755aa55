"""The team server's PostgreSQL password from the secret store (issue #18: "the password from
the keyring/secrets file or PGPASSWORD/.pgpass, never in the config file"): a role the server
asks for its password (scram-sha-256), the password stored with `memorycloud config
set-database-password`, and every connection of the CLI and the daemon process using it."""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from state.config import set_setting
from state.errors import StoreUnavailable
from state.paths import resolve_paths
from state.pg.store import PgStore
from tests.conftest import new_database
from tests.e2e.conftest import DaemonProcess, cli, free_port


@pytest.fixture
def password_url(
    pg_server: Any, pg_template: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, str]]:
    """(URL without a password, the password) of a database whose role must give its password."""
    monkeypatch.delenv("PGPASSWORD", raising=False)
    role = f"mc_pw_{uuid.uuid4().hex[:10]}"
    password = secrets.token_urlsafe(18)
    hba = Path(pg_server.pgdata) / "pg_hba.conf"
    original = hba.read_text()
    admin_url = pg_server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f"create role {role} login superuser password '{password}'")
    hba.write_text(f"local all {role} scram-sha-256\n{original}")
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute("select pg_reload_conf()")
    try:
        with new_database(pg_server, pg_template) as url:
            assert "postgres:@" in url
            yield url.replace("postgres:@", f"{role}@"), password
    finally:
        hba.write_text(original)
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute("select pg_reload_conf()")
            admin.execute(f"drop role if exists {role}")


def _sessions(url: str, password: str) -> int:
    with psycopg.connect(url, password=password) as conn:
        return int(
            conn.execute(
                "select count(*) from pg_stat_activity where usename = current_user and pid <> pg_backend_pid()"
            ).fetchone()[0]
        )


def test_the_role_needs_its_password(password_url: tuple[str, str]) -> None:
    url, password = password_url
    with pytest.raises(StoreUnavailable, match="password"):
        PgStore.open(url)
    PgStore.open(url, password=password).close()


def test_a_stored_password_serves_the_cli_and_every_connection_of_the_daemon(
    password_url: tuple[str, str], isolated_home: Path
) -> None:
    url, password = password_url
    isolated_home.mkdir(parents=True, exist_ok=True)
    paths = resolve_paths()
    set_setting(paths.config_file, "role", "cloud")
    set_setting(paths.config_file, "database_url", url)
    # Without it, the CLI says what is wrong.
    refused = cli("agent", "add", "team-agent", "--runtime", "codex", "--json", check=False)
    assert refused.returncode != 0 and "password" in refused.stderr
    stored = cli("config", "set-database-password", "--json", stdin=f"{password}\n")
    assert json.loads(stored.stdout)["stored"] is True
    assert password not in paths.config_file.read_text()
    key = json.loads(cli("agent", "add", "team-agent", "--runtime", "codex", "--json").stdout)["api_key"]
    doctor = json.loads(cli("doctor", "--database", url, "--json").stdout)
    assert doctor["problems"] == [] and doctor["database"] == url

    daemon = DaemonProcess(free_port(), isolated_home)
    daemon.start()
    try:
        with httpx.Client(
            base_url=daemon.url, headers={"Authorization": f"Bearer {key}"}, timeout=10
        ) as http:
            receipt = http.post("/api/agent/bootstrap/context", json={}).json()["receipt_id"]
            answer = http.post(
                "/api/agent/memory-delta",
                headers={"X-AMP-Context-Receipt": receipt},
                json={"summary": "the team server's password lives in the secret store"},
            )
            assert answer.status_code == 200, answer.text
        # The request connection, the vector writer's, LISTEN's, the request counts' and the
        # first of each pool's (reads and writes apart): all six signed in with the stored
        # password (the vector is made on its own connection).
        deadline = time.monotonic() + 10
        while _sessions(url, password) < 6 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _sessions(url, password) == 6
        with psycopg.connect(url, password=password) as conn:
            assert conn.execute("select count(*) from memory_vectors").fetchone()[0] == 1
    finally:
        daemon.stop()

    cleared = cli("config", "set-database-password", "--clear", "--json")
    assert json.loads(cleared.stdout)["stored"] is False
    again = cli("agent", "add", "other-agent", "--runtime", "codex", "--json", check=False)
    assert again.returncode != 0 and "password" in again.stderr
