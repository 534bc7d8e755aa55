"""A write whose COMMIT fails leaves no transaction open behind it.

If it did, the next write would nest into the dangling transaction as a savepoint, be
acknowledged, and never be committed: lost at the next restart. A deferred foreign key makes
COMMIT itself fail (as a full disk or an I/O error can), which keeps this test exact.
"""

from __future__ import annotations

import pytest

from state.db import connect, sqlite_module, transaction


def test_a_failed_commit_does_not_swallow_the_next_write(tmp_path):
    path = tmp_path / "t.db"
    conn = connect(path)
    conn.execute("create table parent (id integer primary key)")
    conn.execute(
        "create table child (id integer primary key, parent_id integer references parent(id)"
        " deferrable initially deferred)"
    )
    with pytest.raises(sqlite_module().IntegrityError):
        with transaction(conn):
            conn.execute("insert into child (id, parent_id) values (1, 42)")  # fails at COMMIT
    assert not conn.in_transaction
    with transaction(conn):
        conn.execute("insert into parent (id) values (7)")
    other = connect(path)  # what a restarted daemon would see
    assert [tuple(row) for row in other.execute("select id from parent")] == [(7,)]
    assert other.execute("select count(*) from child").fetchone()[0] == 0
    other.close()
    conn.close()
