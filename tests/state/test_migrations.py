"""The migrated schema is what the rest of the code relies on."""

from state.db import connect
from state.migrations import all_migrations, migrate

EXPECTED_TABLES = {
    "schema_migrations",
    "identities",
    "api_keys",
    "pairing_codes",
    "workspaces",
    "runtime_profiles",
    "project_bindings",
    "memory_records",
    "memory_versions",
    "memory_fts",
    "index_builds",
    "memory_briefs",
    "brief_events",
    "context_packs",
    "receipts",
    "memory_deltas",
    "summary_cards",
    "adaptive_runs",
    "startup_plans",
    "managed_regions",
    "conflicts",
    "platform_updates",
    "update_acks",
    "sync_intents",
    "suites",
    "suite_versions",
    "suite_files",
    "suite_fts",
    "installed_open_memories",
    "claims",
    "distill_jobs",
    "memory_stores",
}


def _tables(conn) -> set[str]:
    return {r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")}


def _columns(conn, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"pragma table_info({table})")}


def test_fresh_database_gets_every_table_and_records_versions(tmp_path):
    conn = connect(tmp_path / "db.sqlite")
    applied = migrate(conn)
    assert applied == [m.version for m in all_migrations()]
    assert EXPECTED_TABLES <= _tables(conn)
    recorded = [r[0] for r in conn.execute("select version from schema_migrations order by version")]
    assert recorded == applied
    assert {
        "id",
        "namespace",
        "kind",
        "content",
        "content_sha256",
        "version",
        "importance",
        "triggers",
        "provenance",
        "identity_id",
        "deleted_at",
    } <= _columns(conn, "memory_records")
    assert {"memory_id", "version", "operation", "content", "redacted_at"} <= _columns(
        conn, "memory_versions"
    )
    assert {"key_hash", "revoked_at"} <= _columns(conn, "api_keys")
    assert "key" not in _columns(conn, "api_keys")  # keys are only ever stored hashed


def test_migrate_is_idempotent(tmp_path):
    conn = connect(tmp_path / "db.sqlite")
    migrate(conn)
    assert migrate(conn) == []


def test_connection_settings(tmp_path):
    conn = connect(tmp_path / "db.sqlite")
    assert conn.execute("pragma journal_mode").fetchone()[0] == "wal"
    assert conn.execute("pragma foreign_keys").fetchone()[0] == 1
    assert conn.execute("pragma busy_timeout").fetchone()[0] == 5000
    assert conn.execute("select vec_version()").fetchone()[0].startswith("v")


def test_failed_migration_leaves_nothing_behind(tmp_path, monkeypatch):
    from state import migrations

    conn = connect(tmp_path / "db.sqlite")
    migrate(conn)
    broken = migrations.Migration(9999, "broken", "create table half_done (x); select * from no_such_table;")
    monkeypatch.setattr(migrations, "all_migrations", lambda: [broken])
    try:
        migrations.migrate(conn)
    except Exception:
        pass
    else:
        raise AssertionError("a broken migration must raise")
    assert "half_done" not in _tables(conn)
    assert 9999 not in {r[0] for r in conn.execute("select version from schema_migrations")}


def test_checkpoint_moves_the_wal_into_the_database(tmp_path):
    from state.db import checkpoint

    writer = connect(tmp_path / "db.sqlite")
    migrate(writer)
    writer.execute("pragma wal_autocheckpoint = 0")
    writer.execute("insert into workspaces (id, name, created_at) values ('wsp_x', 'x', 'now')")
    other = connect(tmp_path / "db.sqlite")
    busy, wal_pages, done = checkpoint(other)
    assert busy == 0 and wal_pages > 0 and done == wal_pages


def test_nested_transactions_are_savepoints(tmp_path):
    from state.db import transaction

    conn = connect(tmp_path / "db.sqlite")
    migrate(conn)
    insert = "insert into workspaces (id, name, created_at) values (?, 'x', 'now')"
    try:
        with transaction(conn):
            conn.execute(insert, ("wsp_outer",))
            try:
                with transaction(conn):
                    conn.execute(insert, ("wsp_inner_failed",))
                    raise RuntimeError("inner fails")
            except RuntimeError:
                pass
            with transaction(conn):
                conn.execute(insert, ("wsp_inner_ok",))
            raise KeyError("outer fails after the inner ones")
    except KeyError:
        pass
    assert conn.execute("select count(*) from workspaces").fetchone()[0] == 0
    with transaction(conn):
        conn.execute(insert, ("wsp_a",))
        with transaction(conn):
            conn.execute(insert, ("wsp_b",))
    assert {r[0] for r in conn.execute("select id from workspaces")} == {"wsp_a", "wsp_b"}


def test_savepoints_nested_deeper_than_their_names_roll_back_only_their_own(tmp_path):
    """Savepoint names repeat (state/group_commit.py SAVEPOINT_NAMES, so that their
    statements are prepared once): a savepoint nested deeper than there are names shares
    its name with one outside it, and still rolls back only what was done inside it."""
    from state.db import transaction
    from state.group_commit import SAVEPOINT_NAMES

    conn = connect(tmp_path / "db.sqlite")
    migrate(conn)
    insert = "insert into workspaces (id, name, created_at) values (?, 'x', 'now')"
    depth = SAVEPOINT_NAMES + 4

    def nest(level: int) -> None:
        with transaction(conn):
            conn.execute(insert, (f"wsp_{level}",))
            if level == depth - 1:  # the innermost two fail: both roll back
                with transaction(conn):
                    conn.execute(insert, (f"wsp_{depth}",))
                raise RuntimeError("inner fails")
            try:
                nest(level + 1)
            except RuntimeError:
                if level != depth - 2:
                    raise

    with transaction(conn):
        nest(1)
        # A sequence of savepoints opened and released inside this one, wrapping the names.
        for n in range(SAVEPOINT_NAMES * 2):
            with transaction(conn):
                conn.execute(insert, (f"wsp_seq_{n}",))
    kept = {r[0] for r in conn.execute("select id from workspaces")}
    assert kept == {f"wsp_{level}" for level in range(1, depth - 1)} | {
        f"wsp_seq_{n}" for n in range(SAVEPOINT_NAMES * 2)
    }
