"""``memorycloud doctor --database URL`` as an operator runs it before pointing a team server
at a PostgreSQL: the real CLI against a real server. It reads only."""

from __future__ import annotations

import json

from state.pg.engine import connect
from state.pg.migrations import known, migrate
from tests.e2e.conftest import cli


def _doctor(url: str, isolated_home) -> tuple[int, dict]:
    result = cli("doctor", "--database", url, "--json", check=False)
    return result.returncode, json.loads(result.stdout) if result.stdout.strip() else {
        "stderr": result.stderr
    }


def test_an_empty_database_is_ready_and_left_as_it_was(pg_empty_url, isolated_home):
    code, report = _doctor(pg_empty_url, isolated_home)
    assert code == 0, report
    assert report["postgresql"].startswith("16") and report["problems"] == []
    assert report["schema"] == {
        "applied": [],
        "pending": [v for v, _, _ in known()],
        "unknown": [],
        "known": report["schema"]["known"],
    }
    conn = connect(pg_empty_url)
    try:  # nothing was written: no migrations table, no extension
        assert conn.execute("select to_regclass('schema_migrations')").fetchone()[0] is None
    finally:
        conn.close()


def test_a_migrated_database_reports_its_versions(pg_empty_url, isolated_home):
    conn = connect(pg_empty_url)
    try:
        migrate(conn)
    finally:
        conn.close()
    code, report = _doctor(pg_empty_url, isolated_home)
    assert code == 0 and report["pgvector"] and report["schema"]["pending"] == []


def test_a_database_of_a_newer_release_is_a_problem(pg_empty_url, isolated_home):
    conn = connect(pg_empty_url)
    try:
        migrate(conn)
        conn.execute("insert into schema_migrations (version, name) values (9999, 'from_the_future')")
    finally:
        conn.close()
    code, report = _doctor(pg_empty_url, isolated_home)
    assert code == 1 and any("newer release" in p for p in report["problems"])
    text = cli("doctor", "--database", pg_empty_url, check=False).stdout
    assert "PROBLEM" in text and "9999" in text


def test_an_unreachable_server_is_named_without_its_password(isolated_home):
    result = cli("doctor", "--database", "postgresql://me:hunter2@127.0.0.1:1/team", check=False)
    assert result.returncode != 0
    assert (
        "cannot connect to PostgreSQL at postgresql://me:***@127.0.0.1:1/team"
        in result.stderr + result.stdout
    )
    assert "hunter2" not in result.stderr + result.stdout


def test_repair_does_not_go_with_a_database(isolated_home):
    result = cli("doctor", "--database", "postgresql://me@127.0.0.1:1/team", "--repair", check=False)
    assert result.returncode != 0 and "does not go with --database" in result.stderr + result.stdout


def test_the_search_index_of_a_previous_release_is_reported_then_its_re_index(
    pg_empty_url, isolated_home, monkeypatch
):
    """A database the previous release wrote (tokenizer 4's rows, no build row): the next
    start will re-index it, which doctor says without planning it; then the re-index's
    progress, then current."""
    from state.index_builds import FTS
    from state.pg import reindex
    from tests.pg.test_reindex import OLD_TEXTS, _open, _previous_release_store

    _previous_release_store(pg_empty_url, monkeypatch)
    code, report = _doctor(pg_empty_url, isolated_home)
    assert code == 0, report  # reported, not a failure
    assert report["search_index"]["state"] == "planned", report["search_index"]
    assert "an earlier release" in report["search_index"]["text"]
    text = cli("doctor", "--database", pg_empty_url, check=False).stdout
    assert "daemon's next start makes them anew" in text
    conn = connect(pg_empty_url)
    try:  # doctor wrote nothing: still no build row
        assert conn.execute("select count(*) from index_builds where name = %s", (FTS,)).fetchone()[0] == 0
    finally:
        conn.close()
    store = _open(pg_empty_url)  # a daemon's start plans it, and a first batch of two
    try:
        assert reindex.step(store.search, max_records=2) == "fts"
        code, report = _doctor(pg_empty_url, isolated_home)
        rebuilding = report["search_index"]
        assert rebuilding["state"] == "rebuilding", rebuilding
        assert (rebuilding["done"], rebuilding["total"]) == (2, len(OLD_TEXTS))
        reindex.run_to_end(store.search)
    finally:
        store.close()
    code, report = _doctor(pg_empty_url, isolated_home)
    assert code == 0 and report["search_index"]["state"] == "current"
    assert "search index" in cli("doctor", "--database", pg_empty_url, check=False).stdout


def test_a_database_not_migrated_yet_has_no_search_index_to_report(pg_empty_url, isolated_home):
    code, report = _doctor(pg_empty_url, isolated_home)
    assert code == 0 and report["search_index"] is None
