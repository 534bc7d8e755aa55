"""Tried for issue #16: two daemon processes on one SQLite store, against one.

One daemon answers on one event loop and uses one of the machine's two cores (bench/writes.py:
~100 % of a core under 8 writing clients). The simplest way to the second core is a second
process: here a second daemon whose home shares the first's data directory (the store, its
WAL and locks), nothing else. The product is not changed; each daemon writes with its own
group commit (state/group_commit.py) and waits for SQLite's write lock as it always does
(``busy_timeout``). 8 agents write memory deltas (bench/latency.py's bodies, each with its
receipt) as fast as they are answered for ``--seconds``, first all to one daemon, then half
to each, alternating for ``--rounds``: deltas per second and each daemon's CPU seconds.

``--loop-free`` starts both daemons through this script's ``--serve``, which patches them the
way PostgreSQL's team server already works (state/group_commit.py ``first_write_waits_apart``):
a request's first write tries SQLite's write lock without waiting (``busy_timeout`` 0 for its
``BEGIN IMMEDIATE``) and, finding it held, waits for it with the event loop free and runs
again (open_group_when_free, polled every 0.5-2 ms), instead of standing still in SQLite's
busy handler.

    python bench/ideas/two_processes.py --rounds 3 --seconds 12
    python bench/ideas/two_processes.py --rounds 3 --seconds 12 --loop-free
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import (  # noqa: E402
    Daemon,
    ProcStat,
    RawClient,
    ScriptDaemon,
    create_agents,
    daemon_env,
    owner_key,
    serve_or_run,
)
from latency import PROJECTS, delta_body  # noqa: E402


async def write_for(
    ports: list[int], agents: list[dict], seconds: float, rng: random.Random
) -> tuple[float, int]:
    """Deltas per second and errors: agent i writes to ``ports[i % len(ports)]``."""
    clients = []
    for i, agent in enumerate(agents):
        http = await RawClient(ports[i % len(ports)], agent["api_key"]).connect()
        pack = await http.json("POST", "/api/agent/bootstrap/context", {"project_key": PROJECTS[0]})
        clients.append((http, pack["receipt_id"]))
    queues = [
        [
            http.encode(
                "POST", "/api/agent/memory-delta", delta_body(rng), {"X-AMP-Context-Receipt": receipt}
            )
            for _ in range(int(seconds * 400))
        ]
        for http, receipt in clients
    ]
    done = errors = 0
    deadline = time.perf_counter() + seconds

    async def work(index: int) -> None:
        nonlocal done, errors
        http = clients[index][0]
        for raw in queues[index]:
            if time.perf_counter() >= deadline:
                return
            status, _ = await http.send(raw)
            if status == 200:
                done += 1
            else:
                errors += 1

    started = time.perf_counter()
    await asyncio.gather(*(work(i) for i in range(len(clients))))
    wall = time.perf_counter() - started
    for http, _ in clients:
        await http.close()
    return done / wall, errors


def patch_daemon() -> None:
    """``--loop-free``: a request's first write on SQLite waits for another process's write
    lock with the event loop free (see the module docstring); called in the daemon process."""
    from daemon import endpoints
    from state import group_commit
    from state.errors import WriteLockBusy

    def try_begin(conn) -> bool:  # noqa: ANN001
        conn.execute("pragma busy_timeout = 0")
        try:
            conn.execute("begin immediate")
            return True
        except Exception as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                return False
            raise
        finally:
            conn.execute("pragma busy_timeout = 5000")

    original_join = group_commit.GroupCommit._join

    def join(self):  # noqa: ANN001, ANN202
        if self.committed is not None or self.conn.in_transaction:
            return original_join(self)  # joins the open group, as shipped
        first = False
        if self.committed is None:
            if not self.conn.in_transaction:
                if group_commit.may_wait_for_write_lock():
                    self.conn.execute("begin immediate")
                elif not try_begin(self.conn):
                    raise WriteLockBusy()
                first = True
            self.committed = self.loop.create_future()
            self.loop.call_soon(self.flush)
        return self.committed, first

    async def run_handler(request, call, endpoint, key):  # noqa: ANN001, ANN202
        store = request.app[endpoints.keys.STORE]
        with group_commit.first_write_waits_apart():
            for _ in range(endpoints.FIRST_WRITE_TRIES):
                try:
                    return await endpoints._run_once(request, call, endpoint, key)
                except WriteLockBusy:
                    await when_free(store.conn, lambda: try_begin(store.conn))
        return await endpoints._run_once(request, call, endpoint, key)

    async def when_free(conn, try_begin_now) -> None:  # noqa: ANN001
        group = group_commit.group_of(conn)
        delay = 0.0005
        while group is not None and group.committed is None:
            if try_begin_now():
                group.committed = group.loop.create_future()
                group.loop.call_soon(group.flush)
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.002)

    group_commit.GroupCommit._join = join
    endpoints.run_handler = run_handler


class PatchedDaemon(ScriptDaemon):
    """bench/harness.py's daemon, started through this script's ``--serve``."""

    script = __file__


async def run(rounds: int, seconds: float, loop_free: bool) -> None:
    base = Path(tempfile.mkdtemp(prefix="mc-two-"))
    first, second = base / "a", base / "b"
    first.mkdir()
    second.mkdir()
    kind = PatchedDaemon if loop_free else Daemon
    one = kind(first, daemon_env(first))
    one.start()
    other = None
    try:
        agents = await create_agents(one.port, owner_key(first), 8)
        os.symlink(first / "data", second / "data")  # the same store, nothing else shared
        other = kind(second, daemon_env(second))
        other.start()
        rng = random.Random(5)
        await write_for([one.port], agents, 3, rng)  # warm-up
        print("| daemons | round | deltas per second | errors | CPU seconds of each daemon |")
        print("|---|---:|---:|---:|---|")
        for number in range(1, rounds + 1):
            for label, daemons in (("one", [one]), ("two", [one, other])):
                before = [ProcStat.read(d.process.pid).cpu_seconds for d in daemons]
                rate, errors = await write_for([d.port for d in daemons], agents, seconds, rng)
                spent = [
                    ProcStat.read(d.process.pid).cpu_seconds - b for d, b in zip(daemons, before, strict=True)
                ]
                print(
                    f"| {label} | {number} | {rate:.0f} | {errors} | {', '.join(f'{s:.1f}' for s in spent)} |"
                )
    finally:
        if other is not None:
            other.stop()
        one.stop()
        shutil.rmtree(base, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--loop-free", action="store_true", help="wait for the write lock with the loop free")
    args = parser.parse_args()
    asyncio.run(run(args.rounds, args.seconds, args.loop_free))
    return 0


if __name__ == "__main__":
    serve_or_run(patch_daemon, main)
