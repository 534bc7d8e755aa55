"""The PostgreSQL engine's own tests (issue #18). The server (``pg_server``) and the migrated
databases of the conformance suite (``pg_url``) are tests/conftest.py's; these tests also
start from an empty database, to see what migrating it does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import new_database


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
