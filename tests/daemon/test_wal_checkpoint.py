"""The WAL checkpoint job keeps the WAL small even when writes never pause.

Under steady writes the WAL never restarted (new frames always arrived while the job's
thread copied), so it grew without bound: 10 GB while ingesting 100k memories
(bench/RESULTS.md). The job now restarts it once it is large, and the next write cuts it
to journal_size_limit.
"""

from __future__ import annotations

from pathlib import Path

from daemon import keys
from daemon.jobs import CATCH_UP_FRAMES
from state.group_commit import flush_now
from state.memories import NewMemory


async def test_the_checkpoint_job_restarts_a_large_wal(api):
    app = api.client.server.app
    store = app[keys.STORE]
    database = Path(store.conn.execute("pragma database_list").fetchone()[2])
    wal = Path(f"{database}-wal")
    store.conn.execute("pragma journal_size_limit = 1048576")  # 1 MiB here, to see the cut
    for i in range(400):  # one commit each, as requests in turns of their own: ~25 frames apiece
        with store.transaction():
            store.memories.create(
                NewMemory(
                    namespace="wsp_bench",
                    kind="fact",
                    source="test",
                    content=f"memory number {i} about the cache layer",
                )
            )
        flush_now(store.conn)  # the daemon commits a group of writes at the end of a loop turn
    assert wal.stat().st_size >= CATCH_UP_FRAMES * 4096
    job = app[keys.SCHEDULER].get_job("wal_checkpoint")
    await app[keys.JOBS].run("wal_checkpoint", job.args[1])
    state = app[keys.JOBS].states["wal_checkpoint"]
    assert "WAL restarted" in state.last_result and "busy" not in state.last_result, state
    # Nothing was lost, and the next write starts the WAL again from the beginning.
    assert store.memories.count("wsp_bench") == 400
    with store.transaction():
        store.memories.create(
            NewMemory(namespace="wsp_bench", kind="fact", source="test", content="after the truncation")
        )
    flush_now(store.conn)
    assert 0 < wal.stat().st_size <= 1048576
