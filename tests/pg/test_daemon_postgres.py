"""`memorycloud daemon run --role cloud --database URL` (issue #18): a real daemon process on a
real PostgreSQL, and the settings that name the database."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from state.config import load_settings, set_setting
from state.errors import ConfigError
from state.paths import resolve_paths
from state.search import record_text
from tests.e2e.conftest import DaemonProcess, cli, free_port


def _agent_write_and_search(url: str, key: str, text: str) -> list[dict]:
    """An agent's AMP session: a context pack, a memory delta, then a search for it."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=10) as http:
        pack = http.post("/api/agent/bootstrap/context", json={"reason": "agent_startup"})
        assert pack.status_code == 200, pack.text
        delta = http.post(
            "/api/agent/memory-delta",
            headers={"X-AMP-Context-Receipt": pack.json()["receipt_id"]},
            json={"delta_type": "decision", "summary": text, "importance": 4},
        )
        assert delta.status_code == 200, delta.text
        return _search(http, "pgvector")


def _search(http: httpx.Client, query: str) -> list[dict]:
    found = http.get("/api/agent/search", params={"q": query})
    assert found.status_code == 200, found.text
    return found.json()["items"]


def _cloud_daemon(pg_url: str, home: Path) -> DaemonProcess:
    """A started cloud daemon on ``pg_url``, and the config that names it for the CLI."""
    home.mkdir(parents=True, exist_ok=True)
    daemon = DaemonProcess(free_port(), home, extra_args=("--role", "cloud", "--database", pg_url))
    daemon.start()
    # The CLI's own store commands find the database in the config (or the environment).
    config = resolve_paths().config_file
    set_setting(config, "role", "cloud")
    set_setting(config, "database_url", pg_url)
    return daemon


def test_a_cloud_daemon_keeps_its_store_on_postgresql(pg_url: str, isolated_home: Path) -> None:
    daemon = _cloud_daemon(pg_url, isolated_home)
    try:
        key = json.loads(cli("agent", "add", "team-agent", "--runtime", "codex", "--json").stdout)["api_key"]
        items = _agent_write_and_search(
            daemon.url, key, "The team server keeps memories in PostgreSQL with pgvector."
        )
        assert len(items) == 1 and "pgvector" in json.dumps(items[0]), items
        # Its vector, made after the write's commit by the daemon's vector writer
        # (state/pg/vector_writer.py), while the daemon runs.
        assert _eventually(lambda: _count(pg_url, "memory_vectors") == 1)
        status = json.loads(cli("daemon", "status", "--json").stdout)
        assert status["database"].startswith("postgresql://") and status["role"] == "cloud"
    finally:
        daemon.stop()
    # The records are in the database, not in a SQLite file beside the config.
    import psycopg

    with psycopg.connect(pg_url) as conn:
        assert conn.execute("select count(*) from memory_records").fetchone()[0] == 1
        assert conn.execute("select count(*) from memory_search").fetchone()[0] == 1
        conn.execute("delete from memory_vectors")  # as if the process had died before making it
    assert not list(isolated_home.rglob("*.db"))

    # A restart finds them again, through the search index on the server, and makes the
    # vector that was missing.
    daemon.start()
    try:
        with httpx.Client(
            base_url=daemon.url, headers={"Authorization": f"Bearer {key}"}, timeout=10
        ) as http:
            assert len(_search(http, "pgvector")) == 1
        assert _eventually(lambda: _count(pg_url, "memory_vectors") == 1)
    finally:
        daemon.stop()


def _count(pg_url: str, table: str) -> int:
    import psycopg

    with psycopg.connect(pg_url) as conn:
        return int(conn.execute(f"select count(*) from {table}").fetchone()[0])


def _eventually(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_database_url_can_come_from_the_environment(pg_url: str, isolated_home: Path) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MEMORYCLOUD_DATABASE_URL": pg_url, "MEMORYCLOUD_ROLE": "cloud"}
    daemon = DaemonProcess(free_port(), isolated_home, env=env)
    daemon.start()
    try:
        assert json.loads(cli("daemon", "status", "--json", env=env).stdout)["database"].startswith(
            "postgresql://"
        )
    finally:
        daemon.stop()


def test_a_database_serves_the_cloud_role_only(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cloud role only"):
        load_settings(tmp_path / "config.toml", {"MEMORYCLOUD_DATABASE_URL": "postgresql://u@db/mc"})
    settings = load_settings(
        tmp_path / "config.toml",
        {"MEMORYCLOUD_DATABASE_URL": "postgresql://u@db/mc", "MEMORYCLOUD_ROLE": "cloud"},
    )
    assert settings.database_url == "postgresql://u@db/mc"
    with pytest.raises(ConfigError, match="postgresql:// URL"):
        load_settings(
            tmp_path / "config.toml",
            {"MEMORYCLOUD_DATABASE_URL": "mysql://u@db/mc", "MEMORYCLOUD_ROLE": "cloud"},
        )


def test_a_password_never_goes_into_the_config_file_nor_into_a_message(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    with pytest.raises(ConfigError, match="holds a password") as refused:
        set_setting(config, "database_url", "postgresql://u:hunter2@db/mc")
    assert "hunter2" not in str(refused.value)
    assert "hunter2" not in (config.read_text() if config.exists() else "")
    set_setting(config, "role", "cloud")
    set_setting(config, "database_url", "postgresql://u@db/mc")
    assert load_settings(config, {}).database_url == "postgresql://u@db/mc"
    # Put there by hand: refused when read, the password not repeated.
    config.write_text(config.read_text().replace("postgresql://u@db/mc", "postgresql://u:hunter2@db/mc"))
    with pytest.raises(ConfigError, match="holds a password") as refused:
        load_settings(config, {})
    assert "hunter2" not in str(refused.value)
    # The environment may carry one (as any libpq URL may); a bad one is named, masked.
    with pytest.raises(ConfigError) as refused:
        load_settings(tmp_path / "other.toml", {"MEMORYCLOUD_DATABASE_URL": "postgresql://u:hunter2@db/mc"})
    assert "hunter2" not in str(refused.value) and "***" in str(refused.value)


def test_a_store_of_the_previous_release_is_reindexed_by_the_daemon(
    pg_url: str, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #16, existing stores: a team store whose search rows hold tokenizer 4's tokens
    (and no build row, as that release left it) is re-indexed by the daemon's job after a
    start (state/pg/reindex.py): "Lodz" then finds what was written as "Łódź"."""
    from state import tokenize, tokenize_v4
    from state.config import Settings
    from state.pg.store import PgStore

    daemon = _cloud_daemon(pg_url, isolated_home)
    try:
        key = json.loads(cli("agent", "add", "team-agent", "--runtime", "codex", "--json").stdout)["api_key"]
        _agent_write_and_search(daemon.url, key, "The offsite moves to Łódź, by the old factory.")
    finally:
        daemon.stop()
    store = PgStore.open(pg_url, Settings())
    try:
        with monkeypatch.context() as patch, store.transaction():
            patch.setattr(tokenize, "index_text", tokenize_v4.index_text)
            for seq, namespace, title, content, triggers in store.conn.raw.execute(
                "select seq, namespace, title, content, triggers from memory_records"
            ).fetchall():
                store.search.replace(seq, namespace, record_text(title, content, json.loads(triggers)))
        store.conn.raw.execute("delete from index_builds")
    finally:
        store.close()

    def words_find_it() -> bool:
        """Whether BM25 finds the memory by "Lodz" (a vector match alone does not count)."""
        store = PgStore.open(pg_url, Settings())
        try:
            namespaces = [
                row[0] for row in store.conn.raw.execute("select distinct namespace from memory_records")
            ]
            return any(hit.bm25_rank is not None for hit in store.search.search("Lodz", namespaces, limit=5))
        finally:
            store.close()

    assert not words_find_it()  # its open only plans the re-index: nothing runs it there
    daemon.start()
    try:
        status = lambda: json.loads(cli("daemon", "status", "--json").stdout)["search_index"]  # noqa: E731
        assert _eventually(lambda: status()["state"] == "current", 30)
        assert status()["indexes"]["memory_fts"]["built_with"] == f"tokenizer-{tokenize.TOKENIZER_VERSION}"
        with httpx.Client(
            base_url=daemon.url, headers={"Authorization": f"Bearer {key}"}, timeout=10
        ) as http:
            assert len(_search(http, "Lodz")) == 1
    finally:
        daemon.stop()
    assert words_find_it()
