"""The PostgreSQL engine's own tests (issue #18). The server (``pg_server``) and the migrated
databases of the conformance suite (``pg_url``) are tests/conftest.py's; these tests also
start from an empty database, to see what migrating it does."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import _database_url


@pytest.fixture
def pg_empty_url(pg_server: Any) -> Iterator[str]:
    """The URL of a new, empty database on the test server (dropped afterwards)."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    admin_url = pg_server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'create database "{name}"')
    try:
        yield _database_url(admin_url, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'drop database if exists "{name}" with (force)')


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
