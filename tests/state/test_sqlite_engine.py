"""The same SQLite engine on every Python 3.11+ (issue #15, "Any Python 3.11+").

Debian 12's /usr/bin/python3 links SQLite 3.40.1, pyenv's builds cannot load extensions: the
store must not depend on either. It opens with sqlean's SQLite everywhere, and where sqlean.py
is missing it either uses a standard module that is good enough or refuses with a message
that names the fix.
"""

from __future__ import annotations

import subprocess
import sys

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
