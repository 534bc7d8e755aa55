"""Hot statements stay prepared: SQLite plans them once, not at every run.

Two things made SQLite (sqlean's 3.50) plan a statement again at every run, ~95 k of the
~127 k instructions a turn-context lookup cost (bench/RESULTS.md, "statements planned
once"): a bound ``LIMIT ?`` (the planner reads its value, so a new binding expires the plan)
and ``kind = ?`` where a partial index says ``kind = 'summary'`` (the planner compares the
bound value with it). And the connection's statement cache held 100 statements, fewer than
the daemon's requests use, so the least recent were prepared again from scratch. The
``sqlite_stmt`` table (SQLITE_ENABLE_STMTVTAB) counts each prepared statement's runs and
re-preparations.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import state.search
from state.db import STATEMENT_CACHE, connect

ROOT = Path(__file__).resolve().parents[2]


def _has_stmt_table(conn) -> bool:
    try:
        conn.execute("select count(*) from sqlite_stmt").fetchone()
    except Exception:
        return False
    return True


def _replanned(conn) -> list[tuple[str, int, int]]:
    """Statements planned again on most of their runs (a schema change re-plans every
    statement once: not counted)."""
    rows = conn.execute("select sql, reprep, run from sqlite_stmt where reprep > 2 and run > 3").fetchall()
    return [(" ".join(sql.split())[:160], reprep, run) for sql, reprep, run in rows]


async def test_the_requests_hot_statements_are_planned_once(api, monkeypatch):
    conn = api.store.conn
    if not _has_stmt_table(conn):
        pytest.skip("this SQLite has no sqlite_stmt table (SQLITE_ENABLE_STMTVTAB)")
    # Bounded BM25 (its three parts) from a few dozen matches instead of a thousand.
    monkeypatch.setattr(state.search, "MAX_RANKED_MATCHES", 8)
    monkeypatch.setattr(state.search, "RARE_TERMS_BUDGET", 4)
    pack = await api.bootstrap()
    receipt = pack["receipt"]["receipt_id"]
    for n in range(12):
        # Turns without a session id (the loose chain: ``kind = ?`` met the summary index).
        await api.delta(
            receipt, summary=f"Alice: the release {n} moved to Friday after the checkpoint review"
        )
        await api.post(
            "/add_messages/",
            {
                "user_id": "alice",
                "scope_id": "edp_agent",
                "session_id": f"s{n % 3}",
                "messages": [
                    {"role": "user", "content": f"we talked about the trip to Lisbon, day {n}"},
                    {"role": "assistant", "content": f"noted: Lisbon trip, day {n}, checkpoint done"},
                ],
            },
        )
    for n in range(6):
        for query in ("release Friday", "checkpoint review moved", "Lisbon trip", "relase"):
            await api.get(f"/api/agent/search?q={query.replace(' ', '%20')}")
        await api.bootstrap()
        await api.post("/api/agent/memory-brief", {"task": f"prepare the release {n} checkpoint review"})
        await api.post(
            "/search_memory/", {"user_id": "alice", "scope_id": "edp_agent", "query": "Lisbon trip day"}
        )
        # A workspace's newest records of one kind (``kind = ?`` met the summary index too).
        workspace = pack["workspace"]["id"]
        await api.get(f"/api/workspaces/{workspace}/memory/query?memory_type=project_state&limit=5")
    assert _replanned(conn) == []
    side = api.store.search.side_reads
    if side is not None:
        assert _replanned(side.conn) == []


def test_a_connection_keeps_more_statements_prepared_than_a_request_mix_uses(tmp_path):
    conn = connect(tmp_path / "cache.db")
    try:
        if not _has_stmt_table(conn):
            pytest.skip("this SQLite has no sqlite_stmt table (SQLITE_ENABLE_STMTVTAB)")
        for n in range(STATEMENT_CACHE + 50):
            conn.execute(f"select {n}").fetchone()
        (prepared,) = conn.execute("select count(*) from sqlite_stmt").fetchone()
        # A mix of search, bootstrap, brief, deltas and mem1 turns used ~156 (the test above's
        # requests and more); the default cache of sqlean's module holds 100.
        assert STATEMENT_CACHE >= 256
        assert prepared >= STATEMENT_CACHE
    finally:
        conn.close()


# A bound LIMIT or OFFSET is written ``cast(? as integer)``: a value the planner cannot read.
_BOUND_LIMIT = re.compile(r"\b(limit|offset)\s+\?", re.IGNORECASE)


def test_no_statement_binds_a_bare_limit_or_offset():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "state").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _BOUND_LIMIT.search(line)
    ]
    assert offenders == []
