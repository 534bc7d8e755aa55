"""Footprint: the daemon's memory (RSS) and CPU when idle, fresh and after work.

A real daemon process (fresh ``MEMORYCLOUD_HOME``). Read from ``/proc/<pid>`` (Linux):

1. **fresh**: started, one request answered, then idle for ``--idle`` seconds: RSS (anonymous
   and file-backed parts), CPU time used while idle, threads;
2. **after work**: ``--seed`` memories written over HTTP, then a mix of searches, context
   packs and briefs, then idle for ``--idle`` seconds, measured the same way.

"Idle CPU" is the daemon's CPU seconds over the idle period (its background jobs run on
their intervals: WAL checkpoint every 5 s, cache refresh, sync-intent expiry, ...), as a
share of one core, and the number of times it woke up (voluntary context switches).

    python bench/footprint.py --write
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shlex
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from harness import (
    Daemon,
    ProcStat,
    RawClient,
    code_state,
    create_agents,
    daemon_env,
    machine_line,
    owner_key,
    query_path,
    wait_for_quiet,
)
from latency import PROJECTS, search_query
from results import write_section
from scale import brief_task, database_size, ingest

SECTION = "## Speed and scale: footprint"
AIM_RSS_MB = 120.0
FIGURES: dict = {}  # the last run's key figures, for bench/speed.py


def switches(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches"):
            return int(line.split(":")[1])
    return 0


def idle(pid: int, seconds: float) -> dict[str, float]:
    before, wakes, started = ProcStat.read(pid), switches(pid), time.perf_counter()
    time.sleep(seconds)
    after, wall = ProcStat.read(pid), time.perf_counter() - started
    return {
        "rss": after.rss_mb,
        "anon": after.rss_anon_mb,
        "file": after.rss_file_mb,
        "cpu": (after.cpu_seconds - before.cpu_seconds) / wall,
        "wakes": (switches(pid) - wakes) / wall,
        "threads": after.threads,
        "seconds": wall,
    }


async def work(port: int, home: Path, seed: int, requests: int) -> None:
    rng = random.Random(5)
    agents = await create_agents(port, owner_key(home), 9)
    if seed:
        await ingest(port, agents[:8], seed, rng, [])
    client = await RawClient(port, agents[8]["api_key"]).connect()
    workspace = agents[8]["workspace_id"]
    for i in range(requests):
        kind = i % 3
        if kind == 0:
            await client.json(
                "GET", query_path(f"/api/workspaces/{workspace}/memory/query", q=search_query(rng))
            )
        elif kind == 1:
            await client.json("POST", "/api/agent/bootstrap/context", {"project_key": rng.choice(PROJECTS)})
        else:
            await client.json(
                "POST",
                "/api/agent/memory-brief",
                {"task": brief_task(rng), "project_key": rng.choice(PROJECTS)},
            )
    await client.close()


def section(
    rows: list[tuple[str, dict[str, float]]],
    db: tuple[int, int],
    args,
    command: str,
    load: tuple[float, float],
) -> str:
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    table = [
        "| state | RSS MB | anonymous MB | file-backed MB | idle CPU (share of a core) |"
        " wake-ups per s | threads | aim RSS | met |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for label, r in rows:
        table.append(
            f"| {label} | {r['rss']:.0f} | {r['anon']:.0f} | {r['file']:.0f} | {r['cpu']:.2%} |"
            f" {r['wakes']:.1f} | {r['threads']:.0f} | <= {AIM_RSS_MB:.0f} |"
            f" {'yes' if r['rss'] <= AIM_RSS_MB else '**no**'} |"
        )
    return f"""{SECTION}

Command: `{command}` (repository root). Date: {date}. Code: `{code_state()}`.
Machine: {machine_line()}. 1-minute load average at the start: {load[0]:.2f}, at the end: {load[1]:.2f}.

A real daemon process; RSS and CPU from `/proc/<pid>` over {args.idle:g} s of idling. "After work":
{args.seed} memories written over HTTP, then {args.requests} searches, context packs and briefs,
then idle (database then {db[0] / 2**20:.0f} MB + WAL {db[1] / 2**20:.0f} MB). File-backed RSS is
mostly the memory-mapped database (`mmap_size`, 256 MiB at most) and shared libraries: pages
the kernel can drop at any time, unlike the anonymous part.

{chr(10).join(table)}

Idle CPU aim: near zero, no busy loops. Database size per 100k memories: see the scale section.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of idling measured")
    parser.add_argument("--seed", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--max-load", type=float, default=1.5)
    parser.add_argument("--max-wait", type=float, default=0.0)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    command = shlex.join(["python", "bench/footprint.py", *(sys.argv[1:] if argv is None else argv)])
    load_start, _ = wait_for_quiet(args.max_load, args.max_wait)
    home = Path(tempfile.mkdtemp(prefix="mc-footprint-"))
    daemon = Daemon(home, daemon_env(home))
    rows = []
    try:
        daemon.start()
        pid = daemon.process.pid
        time.sleep(2)  # start-up work (migrations, first jobs) done
        rows.append(("fresh, idle", idle(pid, args.idle)))
        asyncio.run(work(daemon.port, home, args.seed, args.requests))
        time.sleep(6)  # the checkpoint job folds the WAL
        rows.append((f"after {args.seed} memories and {args.requests} reads, idle", idle(pid, args.idle)))
        db = database_size(home)
    finally:
        daemon.stop()
        shutil.rmtree(home, ignore_errors=True)
    load_end = os.getloadavg()[0]
    text = section(rows, db, args, command, (load_start, load_end))
    FIGURES.clear()
    FIGURES.update({"load": (load_start, load_end), "rows": rows})
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
