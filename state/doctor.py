"""Checking and repairing a store: SQLite's integrity check, and whether the derived search
indexes (FTS5 and sqlite-vec) agree with the memory records.

The records and their versions are the truth; both indexes are derived from them and can be
rebuilt at any time (``memorycloud doctor --repair``). Agreement means:

* FTS holds exactly the records that are searchable (live, and whose current version is not
  redacted), each with the tokens of its current title, content and triggers, made by the
  tokenizer that built the table (``index_builds``);
* the vector table holds exactly the same records, each in its record's namespace;
* ``live_records`` (migration 21: what every full-text match is filtered by) holds exactly the
  live records, each with its namespace, and its three triggers are there. The triggers keep
  it so; a store changed by hand (or by a tool that dropped a trigger) could drift, and a
  record missing there is one no search finds. ``--repair`` makes the triggers again and
  refills the table.

While a rebuild fills the vector table (state/rebuild.py) it is not checked: it holds only
the records copied so far, by design. ``--repair`` is that same rebuild, run to the end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from state import turn_context
from state.db import Connection
from state.index_builds import FTS, VECTORS, has_context, read_builds, tokenizer_for
from state.json_text import loads
from state.migrations import m0021_live_records as m0021
from state.rebuild import SEARCHABLE, rebuild_now
from state.search import record_text

# How many ids of each kind of disagreement a report lists (the counts are always complete).
SAMPLE = 10


def integrity_check(conn: Connection, *, quick: bool = False) -> list[str]:
    """SQLite's own check of the file: ``["ok"]`` when the database is sound."""
    pragma = "quick_check" if quick else "integrity_check"
    return [row[0] for row in conn.execute(f"pragma {pragma}").fetchall()]


def only_search_index_damaged(problems: list[str]) -> bool:
    """Whether every problem integrity_check found is in the FTS index, which is derived from
    the records and which ``--repair`` rebuilds, rather than in the file's own structure."""
    return problems != ["ok"] and all("FTS5 table main.memory_fts" in p for p in problems)


@dataclass
class IndexReport:
    """How one derived index differs from the records (all empty: they agree)."""

    name: str
    expected: int
    indexed: int
    missing: list[int] = field(default_factory=list)  # searchable records not indexed
    stray: list[int] = field(default_factory=list)  # indexed rows with no searchable record
    stale: list[int] = field(default_factory=list)  # indexed with other text or namespace
    errors: list[str] = field(default_factory=list)
    rebuilding: bool = False  # not compared: a rebuild is filling it (state/rebuild.py)

    @property
    def ok(self) -> bool:
        return not (self.missing or self.stray or self.stale or self.errors)

    def describe(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "rebuilding": self.rebuilding,
            "expected": self.expected,
            "indexed": self.indexed,
            "missing": len(self.missing),
            "stray": len(self.stray),
            "stale": len(self.stale),
            "examples": {
                "missing": self.missing[:SAMPLE],
                "stray": self.stray[:SAMPLE],
                "stale": self.stale[:SAMPLE],
            },
            "errors": self.errors,
        }


def _searchable(conn: Connection) -> dict[int, tuple[str, str]]:
    """seq -> (namespace, indexed text) for every record the indexes should hold."""
    return {
        seq: (namespace, record_text(title, content, loads(triggers)))
        for seq, namespace, title, content, triggers in conn.execute(SEARCHABLE)
    }


def check_fts(conn: Connection, expected: dict[int, tuple[str, str]]) -> IndexReport:
    tokenizer = tokenizer_for(read_builds(conn)[FTS].built_with)
    context = has_context(tokenizer)
    columns = ", ".join(tokenizer.FTS_COLUMNS)
    rows = {row[0]: tuple(row[1:]) for row in conn.execute(f"select rowid, {columns} from memory_fts")}
    report = IndexReport("fts", len(expected), len(rows))
    report.missing = sorted(set(expected) - set(rows))
    report.stray = sorted(set(rows) - set(expected))

    def tokens_of(seq: int) -> str:
        return tokenizer.index_text(expected[seq][1]) if seq in expected else ""

    def stale(seq: int) -> bool:
        row = rows[seq]
        if row[0] != tokens_of(seq):
            return True
        if not context:
            return False
        # A conversation turn's context: the tokens of the turns before it, as they are now.
        before = [tokens_of(s) for s in turn_context.preceding(conn, seq)]
        return tuple(row[1:]) != tuple(before + [""] * (len(row) - 1 - len(before)))

    report.stale = sorted(seq for seq in set(rows) & set(expected) if stale(seq))
    try:  # FTS5's own check that its inverted index matches its stored rows
        conn.execute("insert into memory_fts (memory_fts, rank) values ('integrity-check', 0)")
    except Exception as exc:
        report.errors.append(f"FTS5 integrity-check: {exc}")
    return report


def check_vectors(conn: Connection, expected: dict[int, tuple[str, str]]) -> IndexReport:
    if read_builds(conn)[VECTORS].rebuilding:
        return IndexReport("vectors", len(expected), 0, rebuilding=True)
    try:
        rows = dict(conn.execute("select rowid, namespace from memory_vec").fetchall())
    except Exception as exc:
        report = IndexReport("vectors", len(expected), 0, missing=sorted(expected))
        report.errors.append(f"vector table unreadable: {exc}")
        return report
    report = IndexReport("vectors", len(expected), len(rows))
    report.missing = sorted(set(expected) - set(rows))
    report.stray = sorted(set(rows) - set(expected))
    report.stale = sorted(seq for seq in set(rows) & set(expected) if rows[seq] != expected[seq][0])
    return report


LIVE = m0021.LIVE
LIVE_TRIGGERS = ("live_records_insert", "live_records_update", "live_records_delete")


def check_live_records(conn: Connection) -> IndexReport:
    """``live_records`` and its triggers against the records it mirrors (see the module
    docstring)."""
    expected = dict(conn.execute(LIVE).fetchall())
    rows = dict(conn.execute("select seq, namespace from live_records").fetchall())
    report = IndexReport("live_records", len(expected), len(rows))
    report.missing = sorted(set(expected) - set(rows))
    report.stray = sorted(set(rows) - set(expected))
    report.stale = sorted(seq for seq in set(rows) & set(expected) if rows[seq] != expected[seq])
    present = {row[0] for row in conn.execute("select name from sqlite_master where type = 'trigger'")}
    report.errors += [
        f"trigger {name} is missing: writes would not keep the table"
        for name in LIVE_TRIGGERS
        if name not in present
    ]
    return report


def refill_live_records(conn: Connection) -> int:
    """Make ``live_records`` equal to the live records again, with its triggers as migration
    21 made them, in one transaction; how many records it holds."""
    drops = "".join(f"drop trigger if exists {name};\n" for name in LIVE_TRIGGERS)
    refill = f"delete from live_records;\ninsert into live_records (seq, namespace) {LIVE};\n"
    try:
        conn.executescript(f"begin immediate;\n{drops}{m0021.TRIGGERS}{refill}commit;")
    except Exception:
        if conn.in_transaction:
            conn.execute("rollback")
        raise
    return conn.execute("select count(*) from live_records").fetchone()[0]


def check_indexes(conn: Connection) -> dict[str, IndexReport]:
    """Every derived index against the records."""
    expected = _searchable(conn)
    return {
        "fts": check_fts(conn, expected),
        "vectors": check_vectors(conn, expected),
        "live_records": check_live_records(conn),
    }


def rebuild_indexes(store: Any, progress: Callable[[str, int], None] | None = None) -> dict[str, int]:
    """Rebuild FTS, vectors and ``live_records`` from the records, to the end (``doctor
    --repair``, the daemon stopped): the background rebuild of state/rebuild.py, forced and
    run at once.

    ``store`` is a :class:`state.store.Store`; its embedder makes the vectors. The new FTS
    table is made afresh beside the old one, so a damaged old index cannot stop it."""
    return {**rebuild_now(store, progress=progress), "live_records": refill_live_records(store.conn)}
