"""live_records (migration 21): the live records' namespaces, kept by triggers, which the
full-text search joins its matches to. It must equal memory_records' live rows after every
kind of write, or search would find deleted records or lose live ones."""

from __future__ import annotations

from pathlib import Path

from state.config import Settings
from state.db import connect
from state.doctor import check_indexes, check_live_records, rebuild_indexes
from state.memories import NewMemory
from state.memory_store_records import MemoryStoreRecords
from state.migrations import migrate
from state.store import Store


def live(store: Store) -> list[tuple[int, str]]:
    return [tuple(r) for r in store.conn.execute("select seq, namespace from live_records order by seq")]


def expected(store: Store) -> list[tuple[int, str]]:
    return [
        tuple(r)
        for r in store.conn.execute(
            "select seq, namespace from memory_records where deleted_at is null order by seq"
        )
    ]


def note(namespace: str, content: str) -> NewMemory:
    return NewMemory(namespace=namespace, kind="fact", content=content, source="test")


def test_every_kind_of_write_keeps_the_live_records(store: Store) -> None:
    with store.transaction():
        kept = store.memories.create(note("wsp_a", "kept in WAL mode"))
        edited = store.memories.create(note("wsp_a", "a note to edit"))
        deleted = store.memories.create(note("wsp_b", "a note to delete"))
        for i in range(3):
            store.memories.create(note("mst_docs", f"a store document {i}"))
    assert [ns for _, ns in live(store)] == ["wsp_a", "wsp_a", "wsp_b", *["mst_docs"] * 3]
    with store.transaction():
        store.memories.update(edited["id"], content="a note, edited")
        store.memories.delete(deleted["id"])
        version = store.memories.versions(kept["id"])[0]
        store.memories.redact_version(version["id"])  # emptied, still a live record
        # A Memory Store deleted (daemon/runtime/memory_stores.py): its records go for good.
        documents = MemoryStoreRecords(store.conn)
        for seq in documents.record_seqs("mst_docs"):
            store.search.remove(seq)
        documents.delete("mst_docs")
    assert live(store) == expected(store)
    assert [seq for seq, _ in live(store)] == [kept["seq"], edited["seq"]]
    # A write that fails rolls its rows back here too.
    try:
        with store.transaction():
            store.memories.create(note("wsp_a", "rolled back"))
            raise RuntimeError("the unit fails")
    except RuntimeError:
        pass
    assert live(store) == expected(store)


def test_search_finds_no_deleted_record_and_every_live_one(store: Store) -> None:
    store.search.vector_weight = 0.0  # BM25 alone: the vectors would find them on their own
    with store.transaction():
        first = store.memories.create(note("wsp_a", "checkpoint the write ahead log"))
        second = store.memories.create(note("wsp_a", "the write ahead log grows"))
    assert {h.seq for h in store.search.search("write ahead log", ["wsp_a"])} == {first["seq"], second["seq"]}
    with store.transaction():
        store.memories.delete(first["id"])
    assert [h.seq for h in store.search.search("write ahead log", ["wsp_a"])] == [second["seq"]]
    assert store.search.search("write ahead log", ["wsp_b"]) == []


def test_the_doctor_finds_a_drifted_table_and_the_repair_mends_it(store: Store) -> None:
    """A store edited behind the triggers' back: a live record missing from the table (no
    search finds it), a deleted one still there, one under another namespace."""
    store.search.vector_weight = 0.0
    with store.transaction():
        lost = store.memories.create(note("wsp_a", "the lost record about vacuum"))
        moved = store.memories.create(note("wsp_a", "a record about vacuum too"))
        gone = store.memories.create(note("wsp_a", "a deleted record"))
    assert check_live_records(store.conn).ok
    with store.transaction():
        store.conn.execute("delete from live_records where seq = ?", (lost["seq"],))
        store.conn.execute("update live_records set namespace = 'wsp_b' where seq = ?", (moved["seq"],))
        store.conn.execute("drop trigger live_records_update")
        store.conn.execute("update memory_records set deleted_at = updated_at where seq = ?", (gone["seq"],))
    assert store.search.search("vacuum", ["wsp_a"]) == []
    report = check_live_records(store.conn)
    assert (report.missing, report.stray, report.stale) == ([lost["seq"]], [gone["seq"]], [moved["seq"]])
    assert report.errors == ["trigger live_records_update is missing: writes would not keep the table"]
    assert not check_indexes(store.conn)["live_records"].ok

    assert rebuild_indexes(store)["live_records"] == 2
    assert all(r.ok for r in check_indexes(store.conn).values()), check_indexes(store.conn)
    assert live(store) == expected(store)
    assert {h.seq for h in store.search.search("vacuum", ["wsp_a"])} == {lost["seq"], moved["seq"]}
    # The trigger is back: a delete after the repair leaves the table again.
    with store.transaction():
        store.memories.delete(moved["id"])
    assert live(store) == expected(store) == [(lost["seq"], "wsp_a")]


def test_a_store_of_the_previous_schema_gets_its_live_records(tmp_path: Path) -> None:
    """Migration 21 fills the table from the records already there, deleted ones left out."""
    path = tmp_path / "old.db"
    conn = connect(path)
    migrate_until(conn, 20)
    stamp = "2026-12-01T00:00:00.000Z"
    for seq, namespace, deleted_at in ((1, "wsp_a", None), (2, "wsp_a", stamp), (3, "mst_x", None)):
        conn.execute(
            "insert into memory_records (seq, id, namespace, kind, content, source, content_sha256,"
            " created_at, updated_at, deleted_at) values (?, ?, ?, 'fact', 'text', 'test', '', ?, ?, ?)",
            (seq, f"mem_{seq}", namespace, stamp, stamp, deleted_at),
        )
    conn.commit()
    conn.close()
    store = Store.open(path, Settings())
    try:
        assert live(store) == [(1, "wsp_a"), (3, "mst_x")] == expected(store)
    finally:
        store.close()


def migrate_until(conn, last: int) -> None:
    """The schema as a release whose newest migration was ``last`` left it."""
    import state.migrations as migrations

    shipped = migrations.all_migrations
    migrations.all_migrations = lambda: [m for m in shipped() if m.version <= last]
    try:
        migrate(conn)
    finally:
        migrations.all_migrations = shipped
