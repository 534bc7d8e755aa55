"""mem1 session summaries are rebuilt after the turns, not on each: whatever can read them
sees them up to date, a timer writes them, a crash leaves nothing stale, and the text is the
one the eager rebuild (on every turn) writes."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

from daemon import keys
from daemon.runtime.mem1 import Mem1Service, namespace
from state.config import Settings
from state.store import Store

ALICE = {"user_id": "alice", "scope_id": "edp_agent"}
FLAGS = {"enable_long_term_mem": True, "enable_user_profile": True, "enable_semantic_memory": True,
         "enable_episodic_memory": True, "enable_summary_memory": True, "mem_variables": []}


def turn(session: str, n: int, **flags: Any) -> dict[str, Any]:
    return {**ALICE, **FLAGS, **flags, "session_id": session, "messages": [
        {"role": "user", "content": f"I said thing number {n} about green tea"},
        {"role": "assistant", "content": f"回答 {n}：柏林 周五 " + "long words " * (n % 5) * 20}]}


def summaries(store: Store) -> list[dict[str, Any]]:
    rows = store.conn.execute(
        "select content, provenance from memory_records where kind = 'summary'"
        " and deleted_at is null order by seq").fetchall()
    return [{"content": r["content"], "provenance": json.loads(r["provenance"])} for r in rows]


def open_store(path: Path) -> Store:
    return Store.open(path, Settings())


def agent(store: Store) -> dict[str, Any]:
    """A writer without an identity row (the column may be null; these stores have no owner)."""
    return {"id": None, "name": "writer"}


async def test_a_read_right_after_the_turns_sees_the_whole_summary(api):
    api.client.app[keys.SERVICES].mem1.summary_delay = 3600  # only the read can bring it up to date
    for n in range(3):
        await api.post("/add_messages/", {**turn("s1", n)})
    stored = summaries(api.store)[0]
    assert "number 2" not in stored["content"] and "pending_message_id" in stored["provenance"]
    found = await api.post("/search_user_history_summary/", {**ALICE, "query": "green tea"})
    content = found["results"][0]["content"]
    assert [f"number {n}" in content for n in range(3)] == [True] * 3
    assert "pending_message_id" not in summaries(api.store)[0]["provenance"]


async def test_the_timer_writes_the_summary_without_any_read(api):
    service = api.client.app[keys.SERVICES].mem1
    service.summary_delay = 0.05
    added = [await api.post("/add_messages/", turn("s1", n)) for n in range(2)]
    assert "number 1" not in summaries(api.store)[0]["content"]
    await asyncio.sleep(0.3)
    stored = summaries(api.store)[0]
    assert "number 1" in stored["content"]
    assert stored["provenance"] == {"session_id": "s1", "message_id": added[-1]["message_ids"][-1]}
    assert not service._pending


async def test_a_summary_a_crash_left_behind_is_rebuilt_at_start(tmp_path):
    store = open_store(tmp_path / "crash.db")
    writer = agent(store)
    service = Mem1Service(store, summary_delay=3600)
    for n in range(3):
        service.add_messages(writer, turn("s1", n))
    for pending in service._pending.values():  # kill -9: the turns are committed,
        pending.timer.cancel()                  # the timers never fire
    assert "number 2" not in summaries(store)[0]["content"]
    assert Mem1Service(store).rebuild_marked_summaries() == 0  # the constructor did it
    after = summaries(store)
    assert len(after) == 1 and "number 2" in after[0]["content"]
    assert "pending_message_id" not in after[0]["provenance"]
    store.close()


async def test_deferred_summaries_equal_the_eager_ones(tmp_path):
    """Random turns over several sessions, some without a summary (their messages must not
    be in it until a later turn asks for one), read at random moments: the records, their
    order and the summaries' text match a store that rebuilt the summary on every turn."""
    rng = random.Random(4)
    plan = [(f"s{rng.randint(1, 3)}", n, rng.random() < 0.2, rng.random() < 0.3) for n in range(40)]
    plan[-1] = ("s1", 40, False, False)  # ends deferred: close() writes it
    eager_store, deferred_store = open_store(tmp_path / "eager.db"), open_store(tmp_path / "deferred.db")
    eager = Mem1Service(eager_store)
    deferred = Mem1Service(deferred_store, summary_delay=3600)
    eager_writer, deferred_writer = agent(eager_store), agent(deferred_store)
    eager_last: dict[str, int] = {}
    for session, n, without_summary, read in plan:
        body = turn(session, n, enable_summary_memory=not without_summary)
        await asyncio.to_thread(eager.add_messages, eager_writer, body)  # no event loop: eager
        deferred.add_messages(deferred_writer, body)
        if not without_summary:
            eager_last[session] = n
        if read:
            deferred.flush_summaries()
            assert _records(deferred_store) == _records(eager_store)
    assert deferred._pending  # the last turns were deferred
    deferred.close()
    assert _records(deferred_store) == _records(eager_store)
    for store in (eager_store, deferred_store):
        for summary in summaries(store):
            assert set(summary["provenance"]) == {"session_id", "message_id"}
            last = store.conn.execute("select content from mem1_messages where id = ?",
                                      (summary["provenance"]["message_id"],)).fetchone()[0]
            assert last.startswith(f"回答 {eager_last[summary['provenance']['session_id']]}：")
        store.close()


def _records(store: Store) -> list[tuple[str, str, str]]:
    ns = namespace(ALICE["user_id"], ALICE["scope_id"])
    return [tuple(r) for r in store.conn.execute(
        "select kind, content, json_extract(provenance, '$.session_id') from memory_records"
        " where namespace = ? and deleted_at is null order by seq", (ns,))]


def test_finding_a_session_summary_uses_its_index(api):
    """Every turn looks its session's summary up: that must not walk the user's history."""
    from daemon.runtime.mem1 import SUMMARY_OF_SESSION

    plan = " ".join(row[3] for row in api.store.conn.execute(
        f"explain query plan {SUMMARY_OF_SESSION}", ("mem1:alice:s", "s1")))
    assert "USING INDEX memory_records_mem1_summary" in plan, plan
