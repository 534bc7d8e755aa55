"""The PostgreSQL engine's own tests (issue #18). The server (``pg_server``) and the migrated
databases of the conformance suite (``pg_url``) are tests/conftest.py's; these tests also
start from an empty database, to see what migrating it does."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from state.config import set_setting
from state.paths import resolve_paths
from tests.conftest import new_database
from tests.e2e.conftest import DaemonProcess, free_port


@pytest.fixture
def pg_empty_url(pg_server: Any) -> Iterator[str]:
    """The URL of a new, empty database on the test server (dropped afterwards)."""
    with new_database(pg_server) as url:
        yield url


@pytest.fixture
def pg_conn(pg_empty_url: str) -> Iterator[Any]:
    """A migrated psycopg connection to the test's database."""
    from state.pg.engine import connect
    from state.pg.migrations import migrate

    conn = connect(pg_empty_url)
    migrate(conn)
    try:
        yield conn
    finally:
        conn.close()


def team_process(home: Path, pg_url: str, **more_env: str) -> DaemonProcess:
    """A cloud daemon with a home of its own (as on another machine) on the shared database
    (``more_env``: settings of its environment)."""
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "MEMORYCLOUD_HOME": str(home), **more_env}
    config = resolve_paths(env).config_file
    set_setting(config, "role", "cloud")
    set_setting(config, "database_url", pg_url)
    process = DaemonProcess(free_port(), home, env=env)
    process.start()
    return process


def assert_counts_kept(raw: Any) -> None:
    """The document frequencies and totals PostgreSQL's search index keeps (state/pg/search.py)
    equal a recount of its rows (``raw``: a psycopg connection to the database)."""
    kept = dict(raw.execute("select term, docs from search_terms where docs > 0").fetchall())
    recount = dict(
        raw.execute(
            "select lexeme, count(*) from memory_search, unnest(tsvector_to_array(tokens)) lexeme group by lexeme"
        ).fetchall()
    )
    assert kept == recount
    totals = raw.execute("select docs, tokens from search_totals").fetchone()
    assert tuple(totals) == tuple(
        raw.execute("select count(*), coalesce(sum(doc_length), 0) from memory_search").fetchone()
    )
