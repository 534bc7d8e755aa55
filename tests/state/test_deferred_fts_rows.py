"""In group mode (the daemon's request connection, state/group_commit.py) a new record's
full-text row waits for the group's COMMIT: what the index holds afterwards is what it held
when each row was written at once, a unit that fails takes its own rows with it, and
whatever reads or changes the index in the meantime sees the group's rows."""

from __future__ import annotations

import asyncio

import pytest

from state.doctor import check_indexes
from state.group_commit import disable_group_commit, enable_group_commit, group_of
from state.memories import NewMemory

TURNS = [
    "Jonah: When is the bread festival exactly?",
    "Maya: Saturday the 29th, at Navy Pier.",
    "Jonah: Perfect, I will bring the sourdough starter.",
]


def _create(store, content, session="s1"):
    return store.memories.create(
        NewMemory(
            namespace="wsp_chat",
            kind="message",
            content=content,
            source="test",
            provenance={"session_id": session},
        )
    )


def _rows(store):
    return {
        row[0]: tuple(row[1:])
        for row in store.conn.execute("select rowid, tokens, before1, before2 from memory_fts")
    }


def _words(store, query):
    store.search.vector_weight = 0.0
    return {hit.seq for hit in store.search.search(query, ["wsp_chat"], limit=20)}


async def _in_one_group(store, *units):
    """Run each unit as its own task in one event-loop turn: one group, one COMMIT."""
    group = enable_group_commit(store.conn, asyncio.get_running_loop())
    results = []

    async def run(unit):
        try:
            with store.transaction():
                results.append(unit())
        except RuntimeError as exc:
            results.append(exc)

    try:
        await asyncio.gather(*(run(unit) for unit in units))
        await asyncio.sleep(0)  # the group's COMMIT
        assert group.groups == 1 and not group.deferred
    finally:
        disable_group_commit(store.conn)
    return results


def test_rows_written_at_the_commit_are_the_rows_written_at_once(store, tmp_path):
    with store.transaction():
        eager = [_create(store, text)["seq"] for text in TURNS]
    expected = [_rows(store)[seq] for seq in eager]

    def three_turns():  # later turns take the earlier ones, still waiting, as context
        seqs = [_create(store, text, session="s2")["seq"] for text in TURNS]
        assert all(_rows(store).get(seq) is None for seq in seqs)  # not written yet
        return seqs

    [seqs] = asyncio.run(_in_one_group(store, three_turns))
    assert [_rows(store)[seq] for seq in seqs] == expected
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_a_failed_unit_takes_only_its_own_rows(store):
    def fails():
        _create(store, "Maya: the lighthouse tour is cancelled", session="s9")
        raise RuntimeError("this request fails after writing")

    first, failed, last = asyncio.run(
        _in_one_group(
            store,
            lambda: _create(store, "Jonah: bread festival")["seq"],
            fails,
            lambda: _create(store, "Maya: sourdough starter", session="s3")["seq"],
        )
    )
    assert isinstance(failed, RuntimeError)
    assert _words(store, "lighthouse") == set()
    assert _words(store, "bread festival") == {first}
    assert _words(store, "sourdough") == {last}
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_a_search_in_the_group_sees_its_rows_and_a_later_failure_keeps_them(store):
    """A search runs the waiting rows early; the unit it ran in fails and rolls them back
    with its own work, so they wait again and are still written at the COMMIT."""

    def searches_then_fails():
        assert _words(store, "bread festival") == {first["seq"]}
        raise RuntimeError("this request fails after reading")

    first = {}
    results = asyncio.run(
        _in_one_group(
            store, lambda: first.update(_create(store, "Jonah: bread festival")), searches_then_fails
        )
    )
    assert isinstance(results[1], RuntimeError)
    assert _words(store, "bread festival") == {first["seq"]}
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_a_record_changed_or_deleted_in_its_own_group_leaves_the_right_row(store):
    def write_then_change():
        kept = _create(store, "Jonah: bread festival")
        gone = _create(store, "Maya: sourdough starter")
        store.memories.update(kept["id"], content="Jonah: lighthouse tour")
        store.memories.delete(gone["id"])
        return kept["seq"]

    [kept] = asyncio.run(_in_one_group(store, write_then_change))
    assert _words(store, "lighthouse") == {kept}
    assert _words(store, "bread") == set() and _words(store, "sourdough") == set()
    assert all(report.ok for report in check_indexes(store.conn).values())


def test_outside_group_mode_rows_are_written_at_once(store):
    assert group_of(store.conn) is None
    with store.transaction():
        seq = _create(store, TURNS[0])["seq"]
        assert _rows(store).get(seq) is not None


@pytest.mark.parametrize("fail_at", ["deferred", "commit"])
def test_a_failing_deferred_row_fails_the_whole_group(store, fail_at):
    """A deferred statement that fails at the COMMIT (a full disk would) fails every unit of
    the group, as a failing COMMIT does: nothing of the group is stored."""
    group = None

    async def run():
        nonlocal group
        group = enable_group_commit(store.conn, asyncio.get_running_loop())
        try:
            with store.transaction():
                _create(store, "Jonah: bread festival")
            if fail_at == "deferred":
                group.defer("insert into no_such_table values (1)", (), None, None)
            else:
                group.defer("select 1", (), None, None)
            committed = group.committed
            await asyncio.sleep(0)
            return committed
        finally:
            disable_group_commit(store.conn)

    committed = asyncio.run(run())
    if fail_at == "deferred":
        assert committed.exception() is not None
        assert store.memories.count("wsp_chat") == 0 and _rows(store) == {}
    else:
        assert committed.exception() is None and len(_rows(store)) == 1
