"""The PostgreSQL engine's migrations (state/pg/migrations): applied once, in order, under an
advisory lock; a database a newer release migrated is refused before anything is written."""

from __future__ import annotations

import threading

import pytest

from state.errors import StoreUnavailable
from state.pg.engine import check_server, connect, masked, versions
from state.pg.migrations import known, migrate


def test_migrations_apply_once_and_make_the_search_tables(pg_empty_url):
    conn = connect(pg_empty_url)
    try:
        applied = migrate(conn)
        assert applied == [version for version, _, _ in known()] and applied[0] == 1
        assert migrate(conn) == []  # nothing left
        tables = {
            row[0] for row in conn.execute("select tablename from pg_tables where schemaname = 'public'")
        }
        assert {"memory_search", "search_terms", "search_totals", "schema_migrations"} <= tables
        assert versions(conn)["pgvector"]  # the extension is created
        check_server(conn)
    finally:
        conn.close()


def test_a_newer_database_is_refused(pg_empty_url):
    conn = connect(pg_empty_url)
    try:
        migrate(conn)
        conn.execute("insert into schema_migrations (version, name) values (9999, 'from_the_future')")
        with pytest.raises(StoreUnavailable, match="newer release .*9999"):
            migrate(conn)
    finally:
        conn.close()


def test_processes_starting_together_migrate_once(pg_empty_url):
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            conn = connect(pg_empty_url)
            try:
                results.append(migrate(conn))
            finally:
                conn.close()
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(len(applied) for applied in results) == [0, 0, 0, len(known())]


def test_a_bad_url_says_where_without_the_password():
    with pytest.raises(StoreUnavailable, match=r"cannot connect to PostgreSQL at postgresql://me:\*\*\*@"):
        connect("postgresql://me:secret@127.0.0.1:1/nothing")
    assert masked("postgresql://me:secret@host/db") == "postgresql://me:***@host/db"
    assert masked("postgresql://me@host/db") == "postgresql://me@host/db"
