"""Writes over HTTP: one client's latency and eight clients' sustained throughput, for
``POST /api/agent/memory-delta`` (with a receipt) and agent-memory1.0 ``POST /add_messages/``.

A real daemon process (fresh ``MEMORYCLOUD_HOME``), agents created over the owner API, and a
workspace seeded to ``--seed`` memories over HTTP first, so the writes land in a store of a
realistic size. Then, per write kind:

* **one client**: one keep-alive connection, one request at a time, ``--warmup`` untimed and
  ``--requests`` timed, ``--repeat`` rounds (medians over rounds of each round's p50/p99);
* **eight clients**: eight agents, eight keep-alive connections, each sending its next
  request as soon as the last was answered, for ``--duration`` seconds: completed writes per
  second, and their latency under that load.

mem1 bodies are a chat turn (the user's message and the assistant's answer, two messages per
call) for one of 20 users, sessions of 10 turns. The client is a lean asyncio HTTP/1.1 client
(bench/harness.py) in one process; the daemon's and the client's CPU seconds are reported,
because both share the two cores.

    python bench/writes.py --write
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
    ProcStat,
    RawClient,
    code_state,
    create_agents,
    daemon_env,
    machine_line,
    owner_key,
    self_cpu_seconds,
    wait_for_quiet,
)
from latency import PROJECTS, delta_body, memory_text
from results import write_section
from scale import ingest

SECTION = "## Speed and scale: writes"
KINDS = ("delta", "mem1")
LABELS = {"delta": "memory-delta (with receipt)", "mem1": "mem1 add_messages (2 messages)"}
CLIENTS = 8
USERS = 20
TURNS_PER_SESSION = 10
AIM_P50_MS = 2.0
AIM_RATE = 1000.0
FIGURES: dict[str, Any] = {}  # the last run's key figures, for bench/speed.py


class Mem1Turns:
    """Chat turns: user + assistant messages, sessions of TURNS_PER_SESSION per user."""

    def __init__(self, rng: random.Random, tag: str) -> None:
        self.rng = rng
        self.tag = tag
        self.turns = [0] * USERS

    def body(self) -> dict[str, Any]:
        user = self.rng.randrange(USERS)
        turn = self.turns[user]
        self.turns[user] += 1
        return {
            "user_id": f"user-{user:02d}",
            "session_id": f"{self.tag}-{user}-{turn // TURNS_PER_SESSION}",
            "messages": [
                {"role": "user", "content": memory_text(self.rng)},
                {"role": "assistant", "content": memory_text(self.rng)},
            ],
        }


@dataclass
class Client:
    agent: dict[str, Any]
    http: RawClient
    receipt: str = ""
    mem1: Mem1Turns | None = None

    def request(self, kind: str, rng: random.Random) -> bytes:
        if kind == "delta":
            return self.http.encode(
                "POST", "/api/agent/memory-delta", delta_body(rng), {"X-AMP-Context-Receipt": self.receipt}
            )
        assert self.mem1 is not None
        return self.http.encode("POST", "/add_messages/", self.mem1.body())


async def open_client(port: int, agent: dict[str, Any], rng: random.Random, tag: str) -> Client:
    http = await RawClient(port, agent["api_key"]).connect()
    pack = await http.json("POST", "/api/agent/bootstrap/context", {"project_key": PROJECTS[0]})
    return Client(agent, http, pack["receipt_id"], Mem1Turns(random.Random(rng.random()), tag))


@dataclass
class Result:
    single: dict[str, list[Dist]] = field(default_factory=lambda: {k: [] for k in KINDS})
    rate: dict[str, float] = field(default_factory=dict)
    loaded: dict[str, Dist] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=lambda: {k: 0 for k in KINDS})
    cpu: dict[str, tuple[float, float, float]] = field(default_factory=dict)  # daemon, client, wall


async def single_client(client: Client, kind: str, rng: random.Random, count: int) -> list[float]:
    raws = [client.request(kind, rng) for _ in range(count)]
    samples = []
    for raw in raws:
        started = time.perf_counter_ns()
        status, data = await client.http.send(raw)
        samples.append((time.perf_counter_ns() - started) / 1e6)
        if status != 200:
            raise RuntimeError(f"{kind}: {status} {data[:300]!r}")
    return samples


async def many_clients(
    clients: list[Client], kind: str, rng: random.Random, seconds: float, pid: int, result: Result
) -> None:
    # Bodies are drawn ahead (enough for 3,000 writes per second) so the client only sends.
    per_client = int(seconds * 3000 / len(clients)) + 100
    queues = [[c.request(kind, rng) for _ in range(per_client)] for c in clients]
    samples: list[float] = []
    deadline = 0.0
    done = 0

    async def work(index: int) -> None:
        nonlocal done
        client = clients[index]
        for raw in queues[index]:
            if time.perf_counter() >= deadline:
                return
            started = time.perf_counter_ns()
            status, data = await client.http.send(raw)
            samples.append((time.perf_counter_ns() - started) / 1e6)
            if status != 200:
                result.errors[kind] += 1
            else:
                done += 1

    before, client_before = ProcStat.read(pid).cpu_seconds, self_cpu_seconds()
    started = time.perf_counter()
    deadline = started + seconds
    await asyncio.gather(*(work(i) for i in range(len(clients))))
    wall = time.perf_counter() - started
    result.cpu[kind] = (ProcStat.read(pid).cpu_seconds - before, self_cpu_seconds() - client_before, wall)
    result.rate[kind] = done / wall
    result.loaded[kind] = Dist.of(samples)


async def run(args: argparse.Namespace, home: Path) -> Result:
    daemon = Daemon(home, daemon_env(home))
    daemon.start()
    rng = random.Random(args.random_seed)
    result = Result()
    try:
        agents = await create_agents(daemon.port, owner_key(home), CLIENTS + 1)
        if args.seed:
            errors: list[str] = []
            seconds = await ingest(daemon.port, agents[:CLIENTS], args.seed, rng, errors)
            print(f"seeded {args.seed} in {seconds:.1f} s, {len(errors)} errors", file=sys.stderr)
            await asyncio.sleep(args.settle)  # let the checkpoint job fold the WAL
        single = await open_client(daemon.port, agents[CLIENTS], rng, "single")
        for kind in args.kinds:
            for run_index in range(args.repeat):
                await single_client(single, kind, rng, args.warmup)
                dist = Dist.of(await single_client(single, kind, rng, args.requests))
                result.single[kind].append(dist)
                print(
                    f"single {kind} run {run_index + 1}: p50 {dist.p50:.2f} p99 {dist.p99:.2f} ms",
                    file=sys.stderr,
                )
        await single.http.close()
        clients = [await open_client(daemon.port, a, rng, f"c{i}") for i, a in enumerate(agents[:CLIENTS])]
        for kind in args.kinds:
            await asyncio.sleep(args.settle)
            await many_clients(clients, kind, rng, args.duration, daemon.process.pid, result)
            print(
                f"{CLIENTS} clients {kind}: {result.rate[kind]:.0f}/s p50 {result.loaded[kind].p50:.2f}"
                f" p99 {result.loaded[kind].p99:.2f} ms errors {result.errors[kind]}",
                file=sys.stderr,
            )
        for client in clients:
            await client.http.close()
    finally:
        daemon.stop()
    return result


def section(result: Result, args: argparse.Namespace, command: str, load: tuple[float, float]) -> str:
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    one = [
        "| write | p50 ms | p99 ms | per second (1 / mean) | p50 of each round | aim p50 | met |",
        "|---|---:|---:|---:|---|---:|---|",
    ]
    for kind in args.kinds:
        runs = result.single[kind]
        p50 = statistics.median(d.p50 for d in runs)
        p99 = statistics.median(d.p99 for d in runs)
        mean = statistics.median(d.mean for d in runs)
        one.append(
            f"| {LABELS[kind]} | {p50:.2f} | {p99:.2f} | {1000 / mean:.0f} |"
            f" {', '.join(f'{d.p50:.2f}' for d in runs)} | <= {AIM_P50_MS:g} |"
            f" {'yes' if p50 <= AIM_P50_MS else '**no**'} |"
        )
    many = [
        "| write | per second | p50 ms | p99 ms | errors | daemon CPU | client CPU | aim | met |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for kind in args.kinds:
        dist, (daemon_cpu, client_cpu, wall) = result.loaded[kind], result.cpu[kind]
        many.append(
            f"| {LABELS[kind]} | {result.rate[kind]:.0f} | {dist.p50:.2f} | {dist.p99:.2f} |"
            f" {result.errors[kind]} | {daemon_cpu / wall:.0%} | {client_cpu / wall:.0%} |"
            f" >= {AIM_RATE:.0f}/s | {'yes' if result.rate[kind] >= AIM_RATE else '**no**'} |"
        )
    return f"""{SECTION}

Command: `{command}` (repository root). Date: {date}. Code: `{code_state()}`.
Machine: {machine_line()}. 1-minute load average at the start: {load[0]:.2f}, at the end: {load[1]:.2f}.

A real daemon process on loopback, its workspace first seeded to {args.seed} memories over HTTP.
mem1 calls carry one chat turn (user + assistant message: two messages, two memories and the
session summary) for one of {USERS} users, sessions of {TURNS_PER_SESSION} turns. One client: one keep-alive
connection, one request at a time, {args.warmup} warm-up + {args.requests} timed requests, {args.repeat}
rounds, medians over rounds. Eight clients: {CLIENTS} agents on {CLIENTS} keep-alive connections, each
sending its next write when the last is answered, for {args.duration:g} s per kind. CPU is the
share of one core used by the daemon process and by the client process over the run (the
machine has two cores, also used by other work).

One client:

{chr(10).join(one)}

Eight concurrent clients, sustained:

{chr(10).join(many)}

For comparison, the issue's figures for the public AMP reference implementation on this
machine: 4.5 ms per memory delta, 120-216 writes per second. The reference implementation
could not be run in the same run here (it is not installable offline); see "Peers" below.
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=10_000, help="memories written before measuring")
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per sustained run")
    parser.add_argument(
        "--settle",
        type=float,
        default=6.0,
        help="pause before each measurement (the WAL checkpoint job runs every 5 s)",
    )
    parser.add_argument("--max-load", type=float, default=1.5)
    parser.add_argument("--max-wait", type=float, default=0.0)
    parser.add_argument("--random-seed", type=int, default=7)
    parser.add_argument("--kinds", default=",".join(KINDS), help="delta,mem1 (default both)")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    args.kinds = [k for k in args.kinds.split(",") if k]
    if any(k not in KINDS for k in args.kinds):
        parser.error(f"--kinds: choose from {', '.join(KINDS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = shlex.join(["python", "bench/writes.py", *(sys.argv[1:] if argv is None else argv)])
    load_start, _ = wait_for_quiet(args.max_load, args.max_wait)
    home = Path(tempfile.mkdtemp(prefix="mc-writes-"))
    try:
        result = asyncio.run(run(args, home))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    load_end = os.getloadavg()[0]
    text = section(result, args, command, (load_start, load_end))
    FIGURES.clear()
    FIGURES.update(
        {
            "load": (load_start, load_end),
            "kinds": {
                k: {
                    "single": (
                        statistics.median(d.p50 for d in result.single[k]),
                        statistics.median(d.p99 for d in result.single[k]),
                    ),
                    "rate": result.rate[k],
                    "loaded": (result.loaded[k].p50, result.loaded[k].p99),
                    "errors": result.errors[k],
                }
                for k in args.kinds
            },
        }
    )
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
