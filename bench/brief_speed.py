"""memory-brief alone, over HTTP, this checkout against another (issue #16's aim: p50 <= 4 ms
at 10k memories), and whether both answer the same.

One store of ``--memories`` memory deltas in one workspace (bench/latency.py's texts, written
in process through ``DeltaService.record``, as bench/profile_speed.py does: the HTTP ingest
of bench/scale.py takes minutes on a loaded machine and makes the same rows). Then, for
``--rounds`` rounds, alternating which goes first: each checkout's daemon (``python -m
daemon daemon run``) is started on a fresh copy of that store and sent the same ``--warmup``
+ ``--requests`` briefs (bench/scale.py's task sentences and projects), one at a time on one
keep-alive connection. Reported per checkout: the median over rounds of the round's p50 and
p99 (client wall time) and of the daemon's CPU time per brief (utime + stime from /proc:
steadier than wall time on a shared machine), and the ratio to the other checkout.

The answers are compared too: with ids, timestamps and digests masked (each daemon makes
its own brief, pack and receipt ids), the two checkouts' answers to the same requests on the
same store must be equal; the first difference is printed.

    python bench/brief_speed.py --base DIR     # DIR: e.g. `git worktree add DIR HEAD~1`
    python bench/brief_speed.py                # this checkout alone
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import harness
from harness import Daemon, ProcStat, RawClient, create_agents, daemon_env, owner_key, record_delta
from latency import PROJECTS, delta_body
from scale import brief_task

# What differs between two daemons answering the same brief: their own ids, times, ports,
# and the digests of texts that name them.
VOLATILE = re.compile(
    r"(brief|ctxp|amp_receipt|mdelta|bevt)_[0-9a-f]{32}"
    r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z|sha256:[0-9a-f]{64}|http://127\.0\.0\.1:\d+"
)


def build_store(home: Path, count: int) -> dict[str, Any]:
    """A daemon home with one agent (returned, with its key) and ``count`` memory deltas."""
    daemon = Daemon(home, daemon_env(home))
    daemon.start()
    try:
        agent = asyncio.run(create_agents(daemon.port, owner_key(home), 1))[0]
    finally:
        daemon.stop()
    from daemon.runtime.deltas import DeltaService
    from state.config import load_settings
    from state.paths import resolve_paths
    from state.store import Store

    class NoChanges:
        def changed(self, *args: Any) -> None:  # no startup items in this store
            pass

    paths = resolve_paths({"MEMORYCLOUD_HOME": str(home)})
    store = Store.open(paths.database, load_settings(paths.config_file))
    identity = store.identities.get(agent["id"])
    service = DeltaService(store, NoChanges())
    rng = random.Random(20240601)
    for first in range(0, count, 1000):
        with store.transaction():
            for _ in range(min(1000, count - first)):
                body = delta_body(rng)
                record_delta(service, identity, body)
    store.conn.execute("pragma wal_checkpoint(truncate)")
    store.close()
    return agent


async def briefs(
    port: int, key: str, bodies: list[dict[str, Any]], warmup: int, pid: int
) -> tuple[list[float], float, list[bytes]]:
    """(latencies ms, daemon CPU ms per timed brief, the timed answers)."""
    client = await RawClient(port, key).connect()
    try:
        raws = [client.encode("POST", "/api/agent/memory-brief", body) for body in bodies]
        for raw in raws[:warmup]:
            status, data = await client.send(raw)
            if status != 200:
                raise RuntimeError(f"{status}: {data[:300]!r}")
        cpu = ProcStat.read(pid).cpu_seconds
        samples, answers = [], []
        for raw in raws[warmup:]:
            started = asyncio.get_running_loop().time()
            status, data = await client.send(raw)
            samples.append((asyncio.get_running_loop().time() - started) * 1000)
            if status != 200:
                raise RuntimeError(f"{status}: {data[:300]!r}")
            answers.append(data)
        cpu_ms = (ProcStat.read(pid).cpu_seconds - cpu) / len(samples) * 1000
        return samples, cpu_ms, answers
    finally:
        await client.close()


def run_one(
    code: Path, store: Path, agent: dict[str, Any], bodies: list[dict[str, Any]], warmup: int
) -> tuple[list[float], float, list[bytes]]:
    home = Path(tempfile.mkdtemp(prefix="mc-brief-"))
    try:
        shutil.copytree(store, home, dirs_exist_ok=True)
        env = {**daemon_env(home), "PYTHONPATH": str(code)}
        daemon = Daemon(home, env)
        cwd = harness.CODE
        harness.CODE = code  # Daemon.start runs ``python -m daemon`` from this directory
        try:
            daemon.start()
        finally:
            harness.CODE = cwd
        try:
            return asyncio.run(briefs(daemon.port, agent["api_key"], bodies, warmup, daemon.process.pid))
        finally:
            daemon.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def masked(answer: bytes) -> Any:
    return json.loads(VOLATILE.sub("*", answer.decode("utf-8")))


def first_difference(a: Any, b: Any, where: str = "") -> str:
    """Where two decoded answers first differ, and how."""
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return f"{where or '/'}: keys {list(a)} != {list(b)}"
        for key in a:
            if a[key] != b[key]:
                return first_difference(a[key], b[key], f"{where}/{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{where}/{i}")
    return f"{where}: {str(a)[:300]} != {str(b)[:300]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="another checkout to measure against")
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--random-seed", type=int, default=7)
    args = parser.parse_args(argv)
    codes = {"this": harness.ROOT}
    if args.base:
        codes["base"] = args.base.resolve()
    rng = random.Random(args.random_seed)
    bodies = [
        {"task": brief_task(rng), "project_key": rng.choice(PROJECTS)}
        for _ in range(args.warmup + args.requests)
    ]
    store = Path(tempfile.mkdtemp(prefix="mc-brief-store-"))
    figures: dict[str, dict[str, list[float]]] = {name: {"p50": [], "p99": [], "cpu": []} for name in codes}
    try:
        agent = build_store(store, args.memories)
        for round_ in range(args.rounds):
            order = list(codes) if round_ % 2 == 0 else list(codes)[::-1]
            answers: dict[str, list[bytes]] = {}
            for name in order:
                samples, cpu_ms, answers[name] = run_one(codes[name], store, agent, bodies, args.warmup)
                figures[name]["p50"].append(statistics.median(samples))
                figures[name]["p99"].append(harness.percentile(sorted(samples), 99))
                figures[name]["cpu"].append(cpu_ms)
                print(
                    f"round {round_ + 1} {name}: p50 {figures[name]['p50'][-1]:.2f} ms,"
                    f" daemon CPU {cpu_ms:.2f} ms a brief",
                    file=sys.stderr,
                )
            if "base" in answers:
                for i, (a, b) in enumerate(zip(answers["this"], answers["base"], strict=True)):
                    if masked(a) != masked(b):
                        print(f"answers differ at brief {i}: {bodies[args.warmup + i]}")
                        print(first_difference(masked(a), masked(b)))
                        return 1
    finally:
        shutil.rmtree(store, ignore_errors=True)
    print(
        f"{args.memories} memories, {args.requests} briefs a round, {args.rounds} rounds;"
        f" load {harness.load_average()[0]:.1f}"
    )
    print("| checkout | p50 ms | p99 ms | daemon CPU ms a brief |")
    print("|---|---:|---:|---:|")
    med = {name: {k: statistics.median(v) for k, v in f.items()} for name, f in figures.items()}
    for name, m in med.items():
        print(f"| {name} ({codes[name]}) | {m['p50']:.2f} | {m['p99']:.2f} | {m['cpu']:.2f} |")
    if "base" in med:
        print(
            f"this / base: p50 {med['this']['p50'] / med['base']['p50']:.2f}x,"
            f" CPU {med['this']['cpu'] / med['base']['cpu']:.2f}x; answers equal (ids and times masked)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
