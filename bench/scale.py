"""Scale: how search, bootstrap/context and memory-brief cost grows from 1k to 100k memories
in one workspace, how long ingesting 100k memories takes, and the database size.

One real daemon process (``python -m daemon daemon run``, fresh ``MEMORYCLOUD_HOME``, file
secrets). Nine agents are created over the owner API. Eight of them ingest memories over HTTP
(``POST /api/agent/memory-delta`` with a receipt, eight concurrent keep-alive connections)
until the workspace holds the next size in ``--sizes``; then the ninth measures, one request
at a time on one keep-alive connection:

* search ``GET /api/workspaces/{wsp}/memory/query?q=`` with vocabulary queries (English,
  Chinese, mixed) and with misspelt English queries (these share no word with any memory
  and take the vector (KNN) path);
* ``POST /api/agent/bootstrap/context`` for one of four projects;
* ``POST /api/agent/memory-brief`` with a task sentence and a project.

Each size: ``--warmup`` untimed and ``--requests`` timed requests per operation, ``--repeat``
rounds (operations interleaved round by round); the reported p50/p99 are the medians over
rounds. Ingest time counts only the writing (not the measuring in between); the database
size is the file plus its WAL after a checkpoint (``PRAGMA wal_checkpoint`` through the
daemon's own job is not forced: the WAL is reported as it is).

    python bench/scale.py --write
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import (
    Daemon,
    Dist,
    RawClient,
    code_state,
    create_agents,
    daemon_env,
    machine_line,
    owner_key,
    query_path,
    wait_for_quiet,
)
from latency import EN_COMPONENT, EN_TECH, PROJECTS, ZH_COMPONENT, delta_body, search_query, typo_query
from results import write_section

SECTION = "## Speed and scale: 1k to 100k memories in one workspace"
OPERATIONS = ("search", "typo_search", "long_search", "bootstrap", "brief")
LABELS = {
    "search": "search (vocabulary queries)",
    "typo_search": "search (misspelt: KNN path)",
    "long_search": "search (long queries: 120-word paragraphs, 60 Chinese characters)",
    "bootstrap": "bootstrap/context",
    "brief": "memory-brief",
}
WRITERS = 8
FIGURES: dict[str, Any] = {}  # the last run's key figures, for bench/speed.py


def long_query(rng: random.Random) -> str:
    """A long query, as an agent sends a pasted paragraph or a task with its context: 120
    words of the memories' vocabulary, or (one in two) about 60 Chinese characters."""
    if rng.random() < 0.5:
        return "".join(rng.choice(ZH_COMPONENT) for _ in range(15))
    words = [*EN_COMPONENT, *EN_TECH, "the", "because", "when", "still", "after", "upgraded"]
    return " ".join(rng.choice(words) for _ in range(120))


def brief_task(rng: random.Random) -> str:
    """A task sentence an agent would start a brief with."""
    pick = rng.choice
    return pick(
        (
            lambda: f"Fix the {pick(EN_COMPONENT)}: it fails with {pick(EN_TECH)} after the upgrade",
            lambda: f"Add retries to the {pick(EN_COMPONENT)} and document why",
            lambda: f"优化{pick(ZH_COMPONENT)}的性能",
            lambda: f"Review the {pick(EN_COMPONENT)} change that uses {pick(EN_TECH)}",
        )
    )()


@dataclass
class Level:
    size: int
    ingest_seconds: float
    live: int = 0
    db_bytes: int = 0
    wal_bytes: int = 0
    runs: dict[str, list[Dist]] = field(default_factory=lambda: {op: [] for op in OPERATIONS})

    def median(self, op: str, attr: str) -> float:
        return statistics.median(getattr(d, attr) for d in self.runs[op])


# -- ingest --------------------------------------------------------------------------------


async def ingest(
    port: int, writers: list[dict[str, Any]], count: int, rng: random.Random, errors: list[str]
) -> float:
    """Write ``count`` memory deltas over ``len(writers)`` concurrent connections; seconds."""
    bodies = [delta_body(rng) for _ in range(count)]
    clients = [await RawClient(port, w["api_key"]).connect() for w in writers]
    receipts = [
        (await c.json("POST", "/api/agent/bootstrap/context", {"project_key": PROJECTS[0]}))["receipt_id"]
        for c in clients
    ]
    # Each writer sends its share, pre-encoded with its own receipt.
    shares = [
        [
            clients[k].encode("POST", "/api/agent/memory-delta", body, {"X-AMP-Context-Receipt": receipts[k]})
            for body in bodies[k :: len(clients)]
        ]
        for k in range(len(clients))
    ]

    async def work(index: int) -> None:
        for raw in shares[index]:
            status, data = await clients[index].send(raw)
            if status != 200:
                errors.append(f"delta {status}: {data[:200]!r}")

    started = time.perf_counter()
    await asyncio.gather(*(work(i) for i in range(len(clients))))
    seconds = time.perf_counter() - started
    for client in clients:
        await client.close()
    return seconds


# -- measuring -----------------------------------------------------------------------------


def requests_for(op: str, client: RawClient, workspace: str, rng: random.Random, n: int) -> list[bytes]:
    if op in ("search", "typo_search", "long_search"):
        make = {"search": search_query, "typo_search": typo_query, "long_search": long_query}[op]
        return [
            client.encode("GET", query_path(f"/api/workspaces/{workspace}/memory/query", q=make(rng)))
            for _ in range(n)
        ]
    if op == "bootstrap":
        return [
            client.encode(
                "POST",
                "/api/agent/bootstrap/context",
                {"project_key": rng.choice(PROJECTS), "reason": "agent_startup"},
            )
            for _ in range(n)
        ]
    return [
        client.encode(
            "POST", "/api/agent/memory-brief", {"task": brief_task(rng), "project_key": rng.choice(PROJECTS)}
        )
        for _ in range(n)
    ]


async def timed(client: RawClient, raws: list[bytes]) -> list[float]:
    samples = []
    for raw in raws:
        started = time.perf_counter_ns()
        status, data = await client.send(raw)
        samples.append((time.perf_counter_ns() - started) / 1e6)
        if status != 200:
            raise RuntimeError(f"{status}: {data[:300]!r}")
    return samples


async def measure(
    port: int, agent: dict[str, Any], level: Level, rng: random.Random, args: argparse.Namespace
) -> None:
    client = await RawClient(port, agent["api_key"]).connect()
    try:
        for run in range(args.repeat):
            for op in OPERATIONS:
                await timed(client, requests_for(op, client, agent["workspace_id"], rng, args.warmup))
                dist = Dist.of(
                    await timed(client, requests_for(op, client, agent["workspace_id"], rng, args.requests))
                )
                level.runs[op].append(dist)
                print(
                    f"  {level.size:>7} run {run + 1} {op:<12} p50 {dist.p50:7.2f}  p99 {dist.p99:7.2f} ms",
                    file=sys.stderr,
                )
    finally:
        await client.close()


def database_size(home: Path) -> tuple[int, int]:
    from state.paths import resolve_paths

    db = resolve_paths({"MEMORYCLOUD_HOME": str(home)}).database
    wal = db.with_name(db.name + "-wal")
    return db.stat().st_size, (wal.stat().st_size if wal.exists() else 0)


def table_sizes(home: Path) -> list[tuple[str, int]]:
    """Bytes per table/index (dbstat), largest first; read-only, daemon stopped."""
    from state.db import connect
    from state.paths import resolve_paths

    conn = connect(resolve_paths({"MEMORYCLOUD_HOME": str(home)}).database, readonly=True)
    try:
        rows = conn.execute("select name, sum(pgsize) from dbstat group by name order by 2 desc").fetchall()
    except Exception:  # dbstat not compiled in
        return []
    finally:
        conn.close()
    return [(name, size) for name, size in rows]


# -- report --------------------------------------------------------------------------------

AIMS = {kind: {10_000: 10.0, 100_000: 25.0} for kind in ("search", "typo_search", "long_search")}


def section(
    levels: list[Level],
    args: argparse.Namespace,
    command: str,
    load: tuple[float, float],
    tables: list[tuple[str, int]],
    errors: int,
    total_ingest: float,
) -> str:
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        "| operation | "
        + " | ".join(f"{lv.size // 1000}k p50 / p99 ms" for lv in levels)
        + f" | growth p50 {levels[0].size // 1000}k→{levels[-1].size // 1000}k |"
    )
    lines = [header, "|---|" + "---:|" * len(levels) + "---:|"]
    for op in OPERATIONS:
        cells = [f"{lv.median(op, 'p50'):.2f} / {lv.median(op, 'p99'):.2f}" for lv in levels]
        growth = levels[-1].median(op, "p50") / levels[0].median(op, "p50")
        lines.append(f"| {LABELS[op]} | " + " | ".join(cells) + f" | {growth:.1f}x |")
    ingest_rows = [
        "| to size | memories written | seconds | per second | database file MB | WAL MB |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    previous = 0
    for lv in levels:
        written = lv.size - previous
        ingest_rows.append(
            f"| {lv.size} | {written} | {lv.ingest_seconds:.1f} |"
            f" {written / lv.ingest_seconds:.0f} | {lv.db_bytes / 2**20:.1f} |"
            f" {lv.wal_bytes / 2**20:.1f} |"
        )
        previous = lv.size
    last = levels[-1]
    per_100k = (last.db_bytes + last.wal_bytes) / last.live * 100_000 / 2**20
    table_lines = ", ".join(f"{name} {size / 2**20:.0f} MB" for name, size in tables[:8])
    return f"""{SECTION}

Command: `{command}` (repository root). Date: {date}. Code: `{code_state()}`.
Machine: {machine_line()}. 1-minute load average at the start: {load[0]:.2f}, at the end: {load[1]:.2f}.
Client and daemon share the two cores.

A real daemon process on loopback. Memories are written over HTTP (`POST
/api/agent/memory-delta` with a receipt, {WRITERS} agents on {WRITERS} concurrent keep-alive
connections) up to each size, all in one workspace (4 projects, mixed English/Chinese texts
as in bench/latency.py); then one more agent measures one request at a time on one keep-alive
connection: {args.warmup} warm-up and {args.requests} timed requests per operation, {args.repeat}
rounds; figures are medians over rounds of each round's p50 and p99 (client wall time, HTTP
round trip included). Write errors during ingest: {errors}.

{chr(10).join(lines)}

Ingest over HTTP ({WRITERS} concurrent writers) and database size (file + WAL as left by the
daemon's own checkpoint job):

{chr(10).join(ingest_rows)}

100k memories ingested in {total_ingest:.0f} s in all ({last.size / total_ingest:.0f} per second; aim <= 180 s:
{"met" if total_ingest <= 180 else "**not met**"}). Database size per 100k memories: {last.db_bytes / last.live * 100_000 / 2**20:.0f} MB
in the file, {per_100k:.0f} MB with the WAL as it was then (the checkpoint job restarts it every
5 s and the next write cuts it to 64 MiB); {last.live} live records. Largest tables and indexes at {last.size // 1000}k: {table_lines or "(dbstat unavailable)"}.
"""


# -- main ----------------------------------------------------------------------------------


async def run(args: argparse.Namespace, home: Path) -> tuple[list[Level], list[tuple[str, int]], int]:
    env = daemon_env(home)
    daemon = Daemon(home, env)
    daemon.start()
    levels: list[Level] = []
    errors: list[str] = []
    rng = random.Random(args.random_seed)
    try:
        agents = await create_agents(daemon.port, owner_key(home), WRITERS + 1)
        writers, reader = agents[:WRITERS], agents[WRITERS]
        have = 0
        for size in args.sizes:
            seconds = await ingest(daemon.port, writers, size - have, rng, errors)
            print(
                f"ingested {size - have} in {seconds:.1f} s ({(size - have) / seconds:.0f}/s);"
                f" errors so far {len(errors)}",
                file=sys.stderr,
            )
            have = size
            level = Level(size, seconds)
            level.db_bytes, level.wal_bytes = database_size(home)
            # Reads are measured on a settled store, as an agent session meets it: the
            # daemon's checkpoint job (every 5 s) first folds the ingest's WAL back into the
            # file, instead of copying hundreds of MB while the reads are timed.
            await asyncio.sleep(args.settle)
            await measure(daemon.port, reader, level, rng, args)
            levels.append(level)
    finally:
        daemon.stop()
    from state.db import connect
    from state.paths import resolve_paths

    conn = connect(resolve_paths({"MEMORYCLOUD_HOME": str(home)}).database, readonly=True)
    try:
        levels[-1].live = conn.execute(
            "select count(*) from memory_records where deleted_at is null"
        ).fetchone()[0]
    finally:
        conn.close()
    for level in levels[:-1]:
        level.live = level.size
    return levels, table_sizes(home), len(errors)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        default="1000,10000,30000,100000",
        help="comma-separated workspace sizes to measure at (ascending)",
    )
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--max-load",
        type=float,
        default=1.5,
        help="wait (up to --max-wait s) for the 1-minute load to drop to this",
    )
    parser.add_argument("--max-wait", type=float, default=0.0)
    parser.add_argument("--random-seed", type=int, default=20240601)
    parser.add_argument(
        "--settle", type=float, default=12.0, help="seconds to wait after each ingest before measuring reads"
    )
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    parser.add_argument("--keep-home", action="store_true")
    args = parser.parse_args(argv)
    args.sizes = sorted(int(s) for s in args.sizes.split(","))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = shlex.join(["python", "bench/scale.py", *(sys.argv[1:] if argv is None else argv)])
    load_start, _ = wait_for_quiet(args.max_load, args.max_wait)
    home = Path(tempfile.mkdtemp(prefix="mc-scale-"))
    try:
        levels, tables, errors = asyncio.run(run(args, home))
        total_ingest = sum(lv.ingest_seconds for lv in levels)
    finally:
        if args.keep_home:
            print(f"kept {home}", file=sys.stderr)
        else:
            shutil.rmtree(home, ignore_errors=True)
    load_end = os.getloadavg()[0]
    text = section(levels, args, command, (load_start, load_end), tables, errors, total_ingest)
    last = levels[-1]
    FIGURES.clear()
    FIGURES.update(
        {
            "load": (load_start, load_end),
            "sizes": [lv.size for lv in levels],
            "ops": {
                op: {lv.size: (lv.median(op, "p50"), lv.median(op, "p99")) for lv in levels}
                for op in OPERATIONS
            },
            "ingest_seconds": total_ingest,
            "ingest_rate": last.size / total_ingest,
            "errors": errors,
            "db_mb_per_100k": (last.db_bytes + last.wal_bytes) / last.live * 100_000 / 2**20,
            "db_file_mb_per_100k": last.db_bytes / last.live * 100_000 / 2**20,
            "max_wal_mb": max(lv.wal_bytes for lv in levels) / 2**20,
        }
    )
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
