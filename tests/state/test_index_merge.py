"""The search index's segments merged when writes pause (state/index_builds.py merge_step,
daemon/jobs.py IndexMerge): fewer segments, the same answers, no write when there is nothing
to merge, and deletions gone from the merged segments."""

from __future__ import annotations

import time

from daemon.jobs import IndexMerge
from state.db import connect
from state.index_builds import merge_step
from state.memories import NewMemory
from state.store import Store


def _varint(blob: bytes, i: int) -> tuple[int, int]:
    """SQLite's varint (as FTS5 writes its structure record)."""
    value = 0
    for k in range(9):
        byte = blob[i]
        i += 1
        if k == 8:
            return (value << 8) | byte, i
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, i
    raise AssertionError("unreachable")


def segments(store: Store) -> tuple[int, int]:
    """(levels, segments) of the live FTS index, from FTS5's structure record (id 10)."""
    blob = store.conn.execute("select block from memory_fts_data where id = 10").fetchone()[0]
    i = 8 if blob[4:8] == b"\xff\x00\x00\x01" else 4  # a version 2 structure's marker
    levels, i = _varint(blob, i)
    count, _ = _varint(blob, i)
    return levels, count


def _write_one_by_one(store: Store, texts: list[str]) -> list[int]:
    """One transaction each, as the daemon's group commit does under light load: each COMMIT
    adds a segment."""
    seqs = []
    for text in texts:
        with store.transaction():
            seqs.append(
                store.memories.create(NewMemory(namespace="wsp_a", kind="fact", content=text, source="test"))[
                    "seq"
                ]
            )
    return seqs


def _merge_all(store: Store) -> int:
    steps = 0
    while True:
        with store.transaction():
            if not merge_step(store.conn):
                return steps
        steps += 1


QUERIES = ["alpha", "beta report", "number 17", "gamma"]


def _answers(store: Store) -> list[list[int]]:
    store.search.vector_weight = 0.0
    return [[h.seq for h in store.search.search(q, ["wsp_a"], limit=50)] for q in QUERIES]


def test_merging_leaves_fewer_segments_and_the_same_answers(store):
    _write_one_by_one(store, [f"alpha beta report number {i}" for i in range(120)] + ["gamma ray"])
    levels, before = segments(store)
    answers = _answers(store)
    assert before > levels  # several segments on some level
    assert _merge_all(store) >= 1
    levels, after = segments(store)
    assert after <= levels < before  # at most one segment a level
    assert _answers(store) == answers


def test_nothing_to_merge_writes_nothing(store, paths):
    _write_one_by_one(store, [f"alpha {i}" for i in range(40)])
    _merge_all(store)
    other = connect(paths.database)  # sees a change to the file as a new data_version
    try:
        version = other.execute("pragma data_version").fetchone()[0]
        with store.transaction():
            assert merge_step(store.conn) is False
        assert other.execute("pragma data_version").fetchone()[0] == version
    finally:
        other.close()


def test_a_deleted_record_leaves_the_merged_segments(store):
    seqs = _write_one_by_one(store, [f"alpha {i}" for i in range(30)] + ["zeppelin secret"])
    with store.transaction():
        store.memories.delete(store.memories.by_seqs([seqs[-1]])[seqs[-1]]["id"])
    _merge_all(store)
    vocabulary = store.conn.execute(
        "create virtual table temp.merge_vocab using fts5vocab(main, memory_fts, row)"
    )
    vocabulary = {row[0] for row in store.conn.execute("select term from temp.merge_vocab")}
    assert "zeppelin" not in vocabulary and "alpha" in vocabulary


async def test_the_job_waits_for_writes_to_pause_then_merges(store):
    merge = IndexMerge(store, quiet_seconds=60)
    assert await merge.run() == "nothing to merge"  # the first run looks: a fresh store
    assert await merge.run() == "nothing new to merge"
    _write_one_by_one(store, [f"alpha beta {i}" for i in range(60)])
    assert await merge.run() == "writes still arriving: merging later"
    levels, before = segments(store)
    merge.quiet_seconds = 0.0
    done = await merge.run()
    assert done.endswith("ms in all") and "merge steps" in done
    assert segments(store)[1] < before
    assert await merge.run() == "nothing new to merge"
    _write_one_by_one(store, ["alpha again", "alpha once more"])
    again = await merge.run()  # the new segments merged (or nothing left to merge among them)
    assert again == "nothing to merge" or again.endswith("ms in all")
    assert await merge.run() == "nothing new to merge"


async def test_the_job_stops_between_steps(store):
    _write_one_by_one(store, [f"alpha beta {i}" for i in range(200)])
    merge = IndexMerge(store, quiet_seconds=0.0)
    store.search.changed_at = time.monotonic() - 1
    await merge.stop()
    assert await merge.run() == "nothing to merge"  # stopping: no step is taken


async def test_the_first_run_merges_a_store_left_fragmented(store):
    """A store written before this job existed (or by a daemon stopped mid-way) is merged at
    the first run after start, without waiting for a write."""
    _write_one_by_one(store, [f"alpha beta {i}" for i in range(120)])
    levels, before = segments(store)
    store.search.changed_at = 0.0  # as after a restart: nothing written since
    done = await IndexMerge(store, quiet_seconds=2.0).run()
    assert done.endswith("ms in all")
    assert segments(store)[1] < before
