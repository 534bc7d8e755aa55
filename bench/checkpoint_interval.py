"""Memory deltas under 8 clients against the WAL checkpoint job's interval.

A real daemon process per run (fresh ``MEMORYCLOUD_HOME``), ``checkpoint_seconds`` set by
its environment variable; a store seeded to ``--seed`` memories over HTTP, a pause, then 8
agents on 8 keep-alive connections write memory deltas (bench/writes.py's load) for
``--duration`` seconds. Reported per run: deltas a second, and the daemon process's CPU per
delta (all its threads, the checkpoint's included, from ``/proc``). The intervals alternate
within each round, so the shared machine's load falls on all of them; the medians over
rounds are what to compare.

    python bench/checkpoint_interval.py --intervals 5,1 --rounds 4 --write
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shlex
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import writes
from harness import Daemon, ProcStat, code_state, create_agents, daemon_env, machine_line, owner_key
from results import write_section
from scale import ingest

SECTION = "## Speed and scale: the WAL checkpoint's interval under writes"


def one_run(interval: float, seed: int, duration: float) -> tuple[float, float]:
    """(deltas a second, daemon CPU ms a delta) for one daemon checkpointing every ``interval`` s."""
    with tempfile.TemporaryDirectory(prefix="mc-checkpoint-") as tmp:
        home = Path(tmp)
        env = {**daemon_env(home), "MEMORYCLOUD_CHECKPOINT_SECONDS": str(interval)}
        daemon = Daemon(home, env)
        daemon.start()
        try:

            async def load() -> tuple[float, float]:
                rng = random.Random(3)
                agents = await create_agents(daemon.port, owner_key(home), writes.CLIENTS)
                await ingest(daemon.port, agents, seed, rng, [])
                await asyncio.sleep(3)
                clients = [
                    await writes.open_client(daemon.port, a, rng, f"c{i}") for i, a in enumerate(agents)
                ]
                result = writes.Result()
                before, started = ProcStat.read(daemon.process.pid), time.perf_counter()
                await writes.many_clients(clients, "delta", rng, duration, daemon.process.pid, result)
                spent = ProcStat.read(daemon.process.pid).cpu_seconds - before.cpu_seconds
                count = result.rate["delta"] * (time.perf_counter() - started)
                return result.rate["delta"], spent / max(count, 1) * 1000

            return asyncio.run(load())
        finally:
            daemon.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--intervals", default="5,1", help="checkpoint_seconds values, alternated")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seed", type=int, default=2000, help="memories written before measuring")
    parser.add_argument("--duration", type=float, default=12.0, help="seconds of 8 writers per run")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    intervals = [float(x) for x in args.intervals.split(",")]
    runs: dict[float, list[tuple[float, float]]] = {i: [] for i in intervals}
    started = datetime.now(UTC)
    for r in range(args.rounds):
        for interval in intervals:
            rate, cpu = one_run(interval, args.seed, args.duration)
            runs[interval].append((rate, cpu))
            print(
                f"round {r + 1}, every {interval:g} s: {rate:.0f} deltas/s, {cpu:.3f} ms CPU a delta",
                file=sys.stderr,
            )
    base = statistics.median(rate for rate, _ in runs[intervals[0]])
    lines = [
        SECTION,
        "",
        f"Command: `python bench/checkpoint_interval.py {shlex.join(sys.argv[1:] if argv is None else argv)}`"
        f" (repository root). Date: {started:%Y-%m-%d %H:%M} UTC. Code: `{code_state()}`.",
        machine_line(),
        "",
        f"A real daemon per run, {args.seed} memories seeded over HTTP, then {writes.CLIENTS} clients"
        f" writing memory deltas for {args.duration:g} s; intervals alternate within each of"
        f" {args.rounds} rounds. CPU: the daemon process's (every thread) per delta.",
        "",
        "| checkpoint_seconds | deltas a second, each round | median | ratio | CPU ms a delta, each round | median |",
        "|---:|---|---:|---:|---|---:|",
    ]
    for interval in intervals:
        rates = [rate for rate, _ in runs[interval]]
        cpus = [cpu for _, cpu in runs[interval]]
        lines.append(
            f"| {interval:g} | {', '.join(f'{x:.0f}' for x in rates)} | {statistics.median(rates):.0f}"
            f" | {statistics.median(rates) / base:.2f} | {', '.join(f'{x:.3f}' for x in cpus)}"
            f" | {statistics.median(cpus):.3f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
