"""The same SQLite engine on every Python 3.11+ (issue #15, "Any Python 3.11+").

Debian 12's /usr/bin/python3 links SQLite 3.40.1, pyenv's builds cannot load extensions: the
store must not depend on either. It opens with sqlean's SQLite everywhere, and where sqlean.py
is missing it either uses a standard module that is good enough or refuses with a message
that names the fix.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from state.db import MIN_SQLITE, connect, versions


def test_the_store_runs_on_sqleans_sqlite_whatever_the_interpreter_links(tmp_path):
    conn = connect(tmp_path / "engine.db")
    try:
        found = versions(conn)
        assert found["sqlite_module"] == "sqlean"
        assert tuple(int(p) for p in found["sqlite"].split(".")) >= MIN_SQLITE
        # FTS5 secure-delete is what redaction and the index repair need (state/redaction.py).
        conn.execute("create virtual table probe using fts5(body)")
        conn.execute("insert into probe (probe, rank) values ('secure-delete', 1)")
    finally:
        conn.close()


# Run with sqlean hidden, so the standard module's own check decides.
WITHOUT_SQLEAN = """
import sys
sys.modules["sqlean"] = None
import sqlite3
from state.db import sqlite_module
from state.errors import StoreUnavailable
try:
    module = sqlite_module()
except StoreUnavailable as exc:
    print("refused:", exc)
else:
    probe = module.connect(":memory:")
    probe.enable_load_extension(True)
    print("stdlib", module.sqlite_version)
"""


def test_without_sqlean_an_unfit_standard_sqlite_is_refused_with_the_fix_named():
    out = subprocess.run(
        [sys.executable, "-c", WITHOUT_SQLEAN], capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()
    import sqlite3

    fit = sqlite3.sqlite_version_info >= MIN_SQLITE and hasattr(sqlite3.Connection, "enable_load_extension")
    if out.startswith("stdlib"):
        assert fit, out
        assert tuple(int(p) for p in out.split()[1].split(".")) >= MIN_SQLITE
    else:
        assert out.startswith("refused:") and "sqlean.py" in out, out


def _temporary_files() -> list[str]:
    """The files this process holds open that SQLite made as temporary ones (unlinked)."""
    found = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed since the listing
            continue
        if "etilqs_" in target:
            found.append(target)
    return found


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc to see open files")
def test_a_savepoints_journal_stays_in_memory(tmp_path):
    """Every write of a group commit after its first is a SAVEPOINT; its journal of the pages
    it changes spilled to a temporary file past 64 KiB (a pwrite per page: 7 % of the
    daemon's time under 8 writers, and the old text of redacted pages on disk)."""
    conn = connect(tmp_path / "journal.db")
    try:
        conn.execute("create table t (body text)")
        conn.executemany("insert into t (body) values (randomblob(2000))", [()] * 200)
        conn.execute("begin immediate")
        conn.execute("savepoint unit_1")
        conn.execute("update t set body = randomblob(2000)")  # ~100 pages journaled
        assert _temporary_files() == []
        conn.execute("release unit_1")
        conn.execute("commit")
    finally:
        conn.close()
