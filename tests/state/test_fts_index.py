"""The FTS index stays sound under every mix of writes, and a store whose index an earlier
release damaged is repaired when it opens.

An earlier release deleted FTS rows in two modes: plain deletes when re-indexing a mem1 session
summary, FTS5 ``secure-delete`` for everything else. A secure delete of a row that a plain
delete had left in older segments corrupts FTS5's inverted index ("malformed inverted index
for FTS5 table main.memory_fts"), which PRAGMA integrity_check reports as a damaged file.
"""

from __future__ import annotations

import random

from state.db import Connection
from state.doctor import check_indexes, integrity_check
from state.store import Store

WORDS = [f"word{i}" for i in range(60)]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 30)))


def _fts_rows(conn: Connection) -> dict[int, str]:
    return dict(conn.execute("select rowid, tokens from memory_fts").fetchall())


async def test_mem1_summaries_rewritten_among_other_deletes_keep_the_index_sound(api):
    """The workload that damaged the index: session summaries re-indexed on every
    add_messages while other memories are deleted, then the summaries deleted too."""
    rng = random.Random(7)
    store_id = (await api.post("/api/v1/cloud/memory_stores", {"name": "fts"}))["id"]
    documents: list[str] = []
    for step in range(160):
        roll = rng.random()
        if roll < 0.45:
            await api.post(
                "/add_messages/",
                {
                    "user_id": "alice",
                    "scope_id": "fts",
                    "session_id": f"s{rng.randint(1, 4)}",
                    "messages": [{"role": "user", "content": _text(rng)}],
                },
            )
        elif roll < 0.8 or not documents:
            created = await api.post(
                f"/api/v1/cloud/memory_stores/{store_id}/memories",
                {"path": f"notes/{step}.md", "content": _text(rng)},
            )
            documents.append(created["id"])
        else:
            victim = documents.pop(rng.randrange(len(documents)))
            response = await api.client.delete(
                f"/api/v1/cloud/memory_stores/{store_id}/memories/{victim}", headers=api.auth()
            )
            assert response.status == 200, await response.text()
    # Deleting the user's memories deletes the summaries that were re-indexed many times.
    deleted = await api.post("/delete_mem_by_scope/", {"user_id": "alice", "scope_id": "fts"})
    assert deleted["deleted_count"] >= 4

    conn = api.store.conn
    assert integrity_check(conn) == ["ok"]
    assert all(report.ok for report in check_indexes(conn).values())


def test_opening_a_store_repairs_an_index_damaged_by_mixed_deletes(tmp_path):
    """Replays the earlier release's mixed deletes on a real store file until FTS5 reports
    the damage, then opens it as the daemon does: the index is sound again, with the same
    rows, and later deletes keep it so."""
    path = tmp_path / "memorycloud.db"
    Store.open(path).close()
    store = Store.open(path)
    conn = store.conn
    conn.execute("insert into memory_fts (memory_fts, rank) values ('secure-delete', 1)")
    rng = random.Random(3)
    rewritten: list[int] = []
    next_rowid = 1
    for _ in range(20_000):
        roll = rng.random()
        if roll < 0.6 or next_rowid < 5:
            conn.execute("insert into memory_fts (rowid, tokens) values (?, ?)", (next_rowid, _text(rng)))
            if rng.random() < 0.1:
                rewritten.append(next_rowid)
            next_rowid += 1
        elif roll < 0.9 and rewritten:  # the summary re-index: a plain delete, then insert
            rowid = rng.choice(rewritten)
            conn.execute("insert into memory_fts (memory_fts, rank) values ('secure-delete', 0)")
            conn.execute("delete from memory_fts where rowid = ?", (rowid,))
            conn.execute("insert into memory_fts (rowid, tokens) values (?, ?)", (rowid, _text(rng)))
            conn.execute("insert into memory_fts (memory_fts, rank) values ('secure-delete', 1)")
        else:  # any other delete: a secure one
            rowid = rng.randint(1, next_rowid)
            conn.execute("delete from memory_fts where rowid = ?", (rowid,))
            if rowid in rewritten:
                rewritten.remove(rowid)
        if roll >= 0.9 and integrity_check(conn) != ["ok"]:
            break
    assert integrity_check(conn) != ["ok"], "the replay did not reproduce the damage"
    rows = _fts_rows(conn)
    store.close()

    store = Store.open(path)
    try:
        conn = store.conn
        assert integrity_check(conn) == ["ok"]
        assert _fts_rows(conn) == rows
        assert conn.execute("select v from memory_fts_config where k = 'secure-delete'").fetchone()[0] == 0
        for rowid in list(rows)[:20]:
            conn.execute("delete from memory_fts where rowid = ?", (rowid,))
        assert integrity_check(conn) == ["ok"]
    finally:
        store.close()
