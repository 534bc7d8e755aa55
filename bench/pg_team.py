"""A team server on PostgreSQL under load (issue #18): 50 agents writing and searching through
one and through two cloud daemon processes on one database, and the pull lag from a write on
one process to its arrival in a person's local daemon paired with the other.

Everything is real and on this machine: PostgreSQL 16 with pgvector from the ``pgserver``
wheel (or ``--url``, an empty database of your own), cloud daemons (``daemon run`` with
``MEMORYCLOUD_ROLE=cloud`` and ``MEMORYCLOUD_DATABASE_URL``; the rate limit off, to measure
capacity), a local daemon on SQLite, and a lean asyncio client (bench/harness.py). Each agent
has its own key and keep-alive connection and alternates a memory delta (with its receipt)
and a search, with no pause; with two processes, half the agents use each. Each
configuration starts on a new database.

    python bench/pg_team.py --agents 50 --seconds 30 --write
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import harness
from harness import (
    Daemon,
    RawClient,
    code_state,
    create_agents,
    daemon_env,
    load_average,
    machine_line,
    owner_key,
)
from latency import delta_body, search_query
from results import write_section

SECTION = "## Team server on PostgreSQL: 50 agents through one and two processes, pull lag (issue #18)"


@dataclass
class Load:
    """What one configuration's agents did."""

    processes: int
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"write": [], "search": []})
    errors: list[str] = field(default_factory=list)

    def rate(self, op: str) -> float:
        return len(self.latencies[op]) / self.seconds if self.seconds else 0.0

    def pct(self, op: str, q: float) -> float:
        samples = sorted(self.latencies[op])
        return samples[min(len(samples) - 1, int(q * len(samples)))] if samples else float("nan")


def cloud_env(home: Path, url: str) -> dict[str, str]:
    env = daemon_env(home)
    env.update(
        {
            "MEMORYCLOUD_ROLE": "cloud",
            "MEMORYCLOUD_DATABASE_URL": url,
            "MEMORYCLOUD_RATE_LIMIT_PER_MINUTE": "0",
        }
    )
    return env


def new_database(admin_url: str) -> str:
    import psycopg

    name = f"team_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'create database "{name}"')
    base, _, query = admin_url.partition("?")
    return f"{base.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")


def start_cloud(tmp: Path, name: str, url: str) -> Daemon:
    home = tmp / f"{name}-{uuid.uuid4().hex[:6]}"
    home.mkdir()
    daemon = Daemon(home, cloud_env(home, url))
    daemon.start(timeout=60)
    return daemon


async def agent_loop(
    port: int,
    agent: dict[str, Any],
    load: Load,
    until: float,
    rng: random.Random,
    ops: tuple[str, ...] = ("write", "search"),
) -> None:
    client = await RawClient(port, agent["api_key"]).connect()
    try:
        receipt = (await client.json("POST", "/api/agent/bootstrap/context", {"reason": "agent_startup"}))[
            "receipt_id"
        ]
        while time.perf_counter() < until:
            for op in ops:
                if op == "write":
                    raw = client.encode(
                        "POST", "/api/agent/memory-delta", delta_body(rng), {"X-AMP-Context-Receipt": receipt}
                    )
                else:
                    raw = client.encode("GET", harness.query_path("/api/agent/search", q=search_query(rng)))
                started = time.perf_counter()
                try:
                    status, data = await client.send(raw)
                except harness.HttpError as exc:
                    load.errors.append(f"{op}: {exc}")
                    continue
                if status != 200:
                    load.errors.append(f"{op}: {status} {data[:120]!r}")
                    continue
                load.latencies[op].append((time.perf_counter() - started) * 1000)
    finally:
        await client.close()


def run_load(
    tmp: Path,
    admin_url: str,
    processes: int,
    agents: int,
    seconds: float,
    seed: int,
    daemon_url: Callable[[str], str] = lambda url: url,
    ops_of: Callable[[int], tuple[str, ...]] = lambda agent: ("write", "search"),
) -> Load:
    """``agents`` agents through ``processes`` cloud daemons on a new database (reached at
    ``daemon_url(its URL)``: bench/pg_rtt.py puts a delaying proxy in between); agent ``i``
    repeats ``ops_of(i)``."""
    url = daemon_url(new_database(admin_url))
    daemons = [start_cloud(tmp, f"p{processes}-{n}", url) for n in range(processes)]
    load = Load(processes)
    try:

        async def go() -> None:
            made = await create_agents(daemons[0].port, owner_key(daemons[0].home), agents)
            rng = random.Random(seed)
            started = time.perf_counter()
            until = started + seconds
            await asyncio.gather(
                *(
                    agent_loop(
                        daemons[i % processes].port,
                        agent,
                        load,
                        until,
                        random.Random(rng.random()),
                        ops_of(i),
                    )
                    for i, agent in enumerate(made)
                )
            )
            load.seconds = time.perf_counter() - started

        asyncio.run(go())
    finally:
        for daemon in daemons:
            daemon.stop()
    return load


def pull_lag(tmp: Path, admin_url: str, writes: int, poll_seconds: int, follow: bool) -> list[float]:
    """Seconds from a write's answer on process A to its arrival in a local daemon paired
    with process B, which follows B's feed (a pull waiting there, woken through LISTEN/NOTIFY)
    or, with ``follow`` off, pulls every ``poll_seconds``."""
    url = new_database(admin_url)
    name = "lag-follow" if follow else "lag-poll"
    first, second = start_cloud(tmp, f"{name}-a", url), start_cloud(tmp, f"{name}-b", url)
    laptop_home = tmp / f"{name}-laptop"
    laptop_home.mkdir()
    laptop_env = daemon_env(laptop_home)
    laptop_env.update(
        {
            "MEMORYCLOUD_SYNC_UPSTREAM_SECONDS": str(poll_seconds),
            "MEMORYCLOUD_FOLLOW_UPSTREAM": "true" if follow else "false",
        }
    )
    laptop = Daemon(laptop_home, laptop_env)
    laptop.start(timeout=60)
    lags: list[float] = []
    try:

        async def go() -> None:
            # A pairing code from the team server's owner (the CLI, on the shared database).
            made = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, "-m", "daemon", "agent", "pair", "--name", "laptop"]
                + ["--runtime", "memorycloud_companion", "--json"],
                env=cloud_env(second.home, url),
                capture_output=True,
                text=True,
                check=True,
                cwd=harness.CODE,
            )
            pairing = json.loads(made.stdout)
            local = RawClient(laptop.port, owner_key(laptop_home))
            await local.json(
                "POST",
                "/api/local/upstream/connect",
                {"url": second.url, "pairing_code": pairing["pairing_code"]},
            )
            await local.close()
            (writer,) = await create_agents(first.port, owner_key(first.home), 1, prefix="lag")
            client = await RawClient(first.port, writer["api_key"]).connect()
            receipt = (await client.json("POST", "/api/agent/bootstrap/context", {}))["receipt_id"]
            database = laptop_home / "data" / "memorycloud.db"
            for n in range(writes):
                text = f"pull lag probe {n} {uuid.uuid4().hex}"
                await client.json(
                    "POST", "/api/agent/memory-delta", {"summary": text}, {"X-AMP-Context-Receipt": receipt}
                )
                written = time.perf_counter()
                while True:
                    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
                    try:
                        found = conn.execute(
                            "select 1 from memory_records where content = ?", (text,)
                        ).fetchone()
                    finally:
                        conn.close()
                    if found:
                        lags.append(time.perf_counter() - written)
                        break
                    if time.perf_counter() - written > 30:
                        raise RuntimeError(f"write {n} did not arrive within 30 s")
                    await asyncio.sleep(0.01)
                await asyncio.sleep(random.random() * poll_seconds)  # writes at random phases
            await client.close()

        asyncio.run(go())
    finally:
        for daemon in (laptop, first, second):
            daemon.stop()
    return lags


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=2, help="one-process and two-process runs, alternating")
    parser.add_argument("--lag-writes", type=int, default=20)
    parser.add_argument(
        "--lag-poll-seconds", type=int, default=1, help="the baseline's sync_upstream_seconds (not following)"
    )
    parser.add_argument(
        "--url", help="an empty PostgreSQL database of your own (its server makes the others)"
    )
    parser.add_argument("--random-seed", type=int, default=20261206)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()
    command = shlex.join(["python", "bench/pg_team.py", *sys.argv[1:]])
    load_start = load_average()[0]
    loads: dict[int, list[Load]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory(prefix="mc-pgteam-") as name:
        tmp = Path(name)
        server = None
        admin_url = args.url
        if admin_url is None:
            import pgserver

            server = pgserver.get_server(tmp / "pgdata", cleanup_mode="stop")
            admin_url = server.get_uri()
        try:
            for round_ in range(args.rounds):
                for processes in (1, 2):
                    result = run_load(
                        tmp, admin_url, processes, args.agents, args.seconds, args.random_seed + round_
                    )
                    loads[processes].append(result)
                    print(
                        f"round {round_ + 1}, {processes} process(es): {result.rate('write'):.0f} writes/s,"
                        f" {result.rate('search'):.0f} searches/s, write p50 {result.pct('write', 0.5):.1f}"
                        f" p99 {result.pct('write', 0.99):.1f} ms, errors {len(result.errors)}",
                        file=sys.stderr,
                    )
            lags = {
                follow: pull_lag(tmp, admin_url, args.lag_writes, args.lag_poll_seconds, follow)
                for follow in (True, False)
            }
        finally:
            if server is not None:
                server.cleanup()
    load_end = load_average()[0]

    def med(processes: int, value: Any) -> float:
        return statistics.median(value(load) for load in loads[processes])

    rows = []
    for processes in (1, 2):
        rows.append(
            f"| {processes} | {med(processes, lambda x: x.rate('write')):.0f}"
            f" | {med(processes, lambda x: x.pct('write', 0.5)):.1f} / {med(processes, lambda x: x.pct('write', 0.99)):.1f}"
            f" | {med(processes, lambda x: x.rate('search')):.0f}"
            f" | {med(processes, lambda x: x.pct('search', 0.5)):.1f} / {med(processes, lambda x: x.pct('search', 0.99)):.1f}"
            f" | {sum(len(x.errors) for x in loads[processes])} |"
        )
    ratio = med(2, lambda x: x.rate("write")) / med(1, lambda x: x.rate("write"))

    def lag_line(follow: bool) -> str:
        ms = sorted(lag * 1000 for lag in lags[follow])
        how = "following B's feed" if follow else f"pulling every {args.lag_poll_seconds} s, not following"
        return (
            f"| {how} | {len(ms)} | {statistics.median(ms):.0f} | {ms[int(0.9 * (len(ms) - 1))]:.0f}"
            f" | {ms[-1]:.0f} |"
        )

    section = f"""{SECTION}

Command: `{command}` (repository root). Date: {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}. Code: `{code_state()}`.
{machine_line()} 1-minute load average at the start: {load_start:.2f}, at the end: {load_end:.2f}.

PostgreSQL 16 with pgvector (pgserver wheel, Unix socket) on the same two cores as the daemons
and the client. {args.agents} agents, each with its own key and connection, alternate a memory
delta (with its receipt) and a search (`GET /api/agent/search`) with no pause, for
{args.seconds:.0f} s; through one cloud process, and through two on one database (half the agents
each); each run on a new database; {args.rounds} rounds alternating, medians of the rounds.

| processes | writes per second | write p50 / p99 ms | searches per second | search p50 / p99 ms | errors |
|---:|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

Writes per second, two processes against one: **{ratio:.2f}x**.

Pull lag: a write answered by process A, until it is in the SQLite file of a local daemon
paired with process B; the daemon follows B's feed (the default: a pull waits on B, which
hears A's commit through LISTEN/NOTIFY), or, as the baseline, does not follow and pulls every
{args.lag_poll_seconds} s (its `sync_upstream_seconds`; the default is 30). Writes at random
phases of a {args.lag_poll_seconds} s period, one at a time.

| the local daemon | writes | p50 ms | p90 ms | max ms |
|---|---:|---:|---:|---:|
{lag_line(True)}
{lag_line(False)}
"""
    print(section)
    if args.write:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
