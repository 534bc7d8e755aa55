"""A real PostgreSQL with pgvector for the PostgreSQL engine's tests (issue #18).

The server comes from the ``pgserver`` wheel (PostgreSQL 16 and pgvector inside a PyPI
package, no system install): one per test process, in a temporary directory, started when the
first test asks for it and stopped at the end. Each test gets a database of its own. Where
the wheel or psycopg cannot be installed (a platform pgserver has no wheel for), the tests
are skipped and say why; the test extra installs both wherever they exist.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pgserver = pytest.importorskip("pgserver", reason="pgserver has no wheel for this platform")
    pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")
    # Run as root (CI), pgserver runs PostgreSQL as a user of its own, made with `useradd` the
    # first time: found in /usr/sbin, which a clean environment's PATH may lack.
    path = os.environ.get("PATH", "")
    for directory in ("/usr/sbin", "/sbin"):
        if directory not in path.split(os.pathsep) and os.path.isdir(directory):
            path += os.pathsep + directory
    os.environ["PATH"] = path
    server = pgserver.get_server(tmp_path_factory.mktemp("pgdata"), cleanup_mode="stop")
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def pg_url(pg_server: Any) -> Iterator[str]:
    """The URL of a new, empty database on the test server (dropped afterwards)."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    admin_url = pg_server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'create database "{name}"')
    base, _, query = admin_url.partition("?")
    url = f"{base.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")
    try:
        yield url
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'drop database if exists "{name}" with (force)')


@pytest.fixture
def pg_conn(pg_url: str) -> Iterator[Any]:
    """A migrated connection to the test's database."""
    from state.pg.engine import connect
    from state.pg.migrations import migrate

    conn = connect(pg_url)
    migrate(conn)
    try:
        yield conn
    finally:
        conn.close()
