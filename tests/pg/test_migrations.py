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


def test_a_version_and_its_redaction_reach_the_feed_and_the_outbox(pg_url):
    """m0002's trigger function, as the SQLite engine's four triggers: every new version and
    redaction in the changes feed; in the outbox too on a daemon with an upstream, for the
    synced workspace and memory stores only."""
    from state.config import Settings
    from state.memories import NewMemory
    from state.pg.store import PgStore

    store = PgStore.open(pg_url, Settings())
    try:
        with store.transaction():
            store.upstream.put(local_workspace_id="wsp_synced")
            kept = store.memories.create(
                NewMemory(namespace="wsp_synced", kind="fact", content="a", source="t")
            )
            store.memories.create(NewMemory(namespace="wsp_other", kind="fact", content="b", source="t"))
        with store.transaction():
            store.conn.execute(
                "update memory_versions set redacted_at = '2026-12-06T00:00:00.000Z', content = null"
                " where memory_id = ?",
                (kept["id"],),
            )
        feed = store.conn.execute("select memory_id, change from sync_changelog order by seq").fetchall()
        assert [tuple(r) for r in feed][-1] == (kept["id"], "redaction")
        assert [r[1] for r in feed] == ["version", "version", "redaction"]
        outbox = store.conn.execute(
            "select memory_id, operation, content_sha256 is not null from upstream_outbox order by seq"
        ).fetchall()
        assert [tuple(r) for r in outbox] == [(kept["id"], "created", False), (kept["id"], "redacted", True)]
    finally:
        store.close()
