"""Concurrency: 50 agents at once doing what agents do, for 60 seconds, against a real daemon.

A real daemon process (fresh ``MEMORYCLOUD_HOME``); its workspace is first seeded to
``--seed`` memories over HTTP. Then ``--agents`` agents (each with its own key, created over
the owner API, each on its own keep-alive connection) start together. Each agent
bootstraps (``POST /api/agent/bootstrap/context``), opens a brief
(``POST /api/agent/memory-brief``), and then loops until the time is up: it thinks (a
random pause, ``--think`` seconds, uniform), then does one of

====================================  ======
search ``GET .../memory/query``        40 %
memory delta (with its receipt)        25 %
brief event (``POST .../events``)      15 %
context refresh (bootstrap/refresh)    10 %
new brief (``POST /memory-brief``)      5 %
memory detail ``GET /memories/{id}``     5 %
====================================  ======

Every answer must be 200 (anything else, or a broken connection, is an error). Latency is
client wall time per request. ``--think 0`` gives the saturation case (each agent sends its
next request as soon as the last is answered), reported in its own row.

    python bench/concurrency.py --write
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shlex
import shutil
import sys
import tempfile
import time
from collections import defaultdict
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
    query_path,
    self_cpu_seconds,
    wait_for_quiet,
)
from latency import PROJECTS, delta_body, memory_text, search_query
from results import write_section
from scale import brief_task, ingest

SECTION = "## Speed and scale: 50 concurrent agents"
MIX = (("search", 40), ("delta", 25), ("brief_event", 15), ("refresh", 10), ("brief", 5), ("detail", 5))
AIM_P99_MS = 100.0
FIGURES: dict[str, Any] = {}  # the last run's key figures, for bench/speed.py
EVENT_TYPES = ("task_event", "decision", "changed_files", "failure", "handoff_ready")


class Agent:
    def __init__(self, port: int, agent: dict[str, Any], rng: random.Random) -> None:
        self.http = RawClient(port, agent["api_key"])
        self.workspace = agent["workspace_id"]
        self.rng = rng
        self.project = rng.choice(PROJECTS)
        self.receipt = ""
        self.brief = ""
        self.memories: list[str] = []

    async def call(self, op: str, samples: dict[str, list[float]], errors: dict[str, list[str]]) -> None:
        rng = self.rng
        if op in ("bootstrap", "refresh"):
            method, path = "POST", f"/api/agent/bootstrap/{'context' if op == 'bootstrap' else 'refresh'}"
            body, headers = {"project_key": self.project, "runtime": "codex"}, None
        elif op == "brief":
            method, path, headers = "POST", "/api/agent/memory-brief", None
            body = {"task": brief_task(rng), "project_key": self.project}
        elif op == "search":
            method, body, headers = "GET", None, None
            path = query_path(f"/api/workspaces/{self.workspace}/memory/query", q=search_query(rng))
        elif op == "delta":
            method, path = "POST", "/api/agent/memory-delta"
            body = {**delta_body(rng), "project_key": self.project}
            headers = {"X-AMP-Context-Receipt": self.receipt}
        elif op == "brief_event":
            method, path, headers = "POST", f"/api/agent/memory-briefs/{self.brief}/events", None
            body = {
                "summary": memory_text(rng),
                "event_type": rng.choice(EVENT_TYPES),
                "importance": rng.choice((2, 3, 3, 3)),
            }
        else:  # detail
            method, body, headers = "GET", None, None
            path = f"/api/agent/memories/{rng.choice(self.memories)}"
        raw = self.http.encode(method, path, body, headers)
        started = time.perf_counter_ns()
        try:
            status, data = await self.http.send(raw)
        except Exception as exc:  # a broken connection is an error like any other
            errors[op].append(repr(exc))
            return
        samples[op].append((time.perf_counter_ns() - started) / 1e6)
        if status != 200:
            errors[op].append(f"{status} {data[:200]!r}")
            return
        if op in ("bootstrap", "refresh", "brief", "delta"):
            answer = json.loads(data)
            if op in ("bootstrap", "refresh"):
                self.receipt = answer["receipt_id"]
            elif op == "brief":
                self.brief = answer["brief_id"]
            else:
                self.memories.append(answer["delta"]["memory_id"])

    async def session(self, deadline: float, think: float, stagger: float, samples, errors) -> None:
        # Agents start over the first ``stagger`` seconds, as sessions do, not in one instant.
        await asyncio.sleep(self.rng.uniform(0, stagger))
        await self.http.connect()
        await self.call("bootstrap", samples, errors)
        await self.call("brief", samples, errors)
        await self.call("delta", samples, errors)
        ops = [op for op, _ in MIX]
        weights = [w for _, w in MIX]
        while time.perf_counter() < deadline:
            if think:
                await asyncio.sleep(self.rng.uniform(0, 2 * think))
                if time.perf_counter() >= deadline:
                    break
            op = self.rng.choices(ops, weights)[0]
            if op == "detail" and not self.memories:
                op = "search"
            await self.call(op, samples, errors)
        await self.http.close()


async def one_run(
    port: int,
    agents: list[dict[str, Any]],
    seconds: float,
    think: float,
    stagger: float,
    rng: random.Random,
    pid: int,
) -> dict[str, Any]:
    samples: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, list[str]] = defaultdict(list)
    runners = [Agent(port, a, random.Random(rng.random())) for a in agents]
    cpu0, client0 = ProcStat.read(pid).cpu_seconds, self_cpu_seconds()
    started = time.perf_counter()
    await asyncio.gather(*(r.session(started + seconds, think, stagger, samples, errors) for r in runners))
    wall = time.perf_counter() - started
    return {
        "samples": samples,
        "errors": errors,
        "wall": wall,
        "daemon_cpu": ProcStat.read(pid).cpu_seconds - cpu0,
        "client_cpu": self_cpu_seconds() - client0,
        "rss": ProcStat.read(pid).rss_mb,
    }


def rows_for(label: str, run: dict[str, Any]) -> list[str]:
    every = [x for values in run["samples"].values() for x in values]
    total = Dist.of(every)
    errors = sum(len(v) for v in run["errors"].values())
    out = [
        f"| **{label}: all** | {total.n} | {total.n / run['wall']:.0f} | {total.p50:.2f} |"
        f" {total.p99:.2f} | {total.max:.1f} | {errors} |"
    ]
    for op in ("bootstrap", *(op for op, _ in MIX)):
        d = Dist.of(run["samples"].get(op, []))
        out.append(
            f"| {label}: {op} | {d.n} | {d.n / run['wall']:.1f} | {d.p50:.2f} | {d.p99:.2f} |"
            f" {d.max:.1f} | {len(run['errors'].get(op, []))} |"
        )
    return out


def section(
    runs: list[tuple[str, dict[str, Any]]], args: argparse.Namespace, command: str, load: tuple[float, float]
) -> str:
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    table = [
        "| run: operation | requests | per second | p50 ms | p99 ms | max ms | errors |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    verdicts = []
    for label, run in runs:
        table += rows_for(label, run)
        every = Dist.of([x for v in run["samples"].values() for x in v])
        errors = sum(len(v) for v in run["errors"].values())
        verdicts.append(
            f"- {label}: {errors} errors, p99 {every.p99:.1f} ms (aim: no errors, p99 <= {AIM_P99_MS:g} ms:"
            f" {'met' if errors == 0 and every.p99 <= AIM_P99_MS else '**not met**'}); daemon CPU"
            f" {run['daemon_cpu'] / run['wall']:.0%} of a core, client CPU"
            f" {run['client_cpu'] / run['wall']:.0%}; daemon RSS at the end {run['rss']:.0f} MB."
        )
    first_errors = [f"{op}: {msgs[0]}" for _, run in runs for op, msgs in run["errors"].items() if msgs]
    return f"""{SECTION}

Command: `{command}` (repository root). Date: {date}. Code: `{code_state()}`.
Machine: {machine_line()}. 1-minute load average at the start: {load[0]:.2f}, at the end: {load[1]:.2f}.

A real daemon process on loopback, its workspace seeded to {args.seed} memories over HTTP. {args.agents}
agents, each with its own key and keep-alive connection, start (realistic: within the first
{args.stagger:g} s; saturation: at once); each bootstraps,
opens a brief, writes a delta, then loops for {args.duration:g} s: think, then one of search 40 %,
memory delta 25 %, brief event 15 %, context refresh 10 %, new brief 5 %, memory detail 5 %.
"Realistic" agents think a random 0-{2 * args.think:g} s (mean {args.think:g} s) between calls (an agent's model
call takes seconds; this is still far busier than real agents); "saturation" agents send
their next call as soon as the last is answered. Client and daemon share the two cores
(the client is one asyncio process).

{chr(10).join(table)}

{chr(10).join(verdicts)}
{("First errors: " + "; ".join(first_errors[:5])) if first_errors else ""}
"""


async def run(args: argparse.Namespace, home: Path) -> list[tuple[str, dict[str, Any]]]:
    daemon = Daemon(home, daemon_env(home))
    daemon.start()
    rng = random.Random(args.random_seed)
    runs = []
    try:
        owner = owner_key(home)
        writers = await create_agents(daemon.port, owner, 8, prefix="seed")
        if args.seed:
            await ingest(daemon.port, writers, args.seed, rng, [])
        agents = await create_agents(daemon.port, owner, args.agents, prefix="agent")
        await asyncio.sleep(args.settle)
        plan = [("realistic", args.think, args.stagger)]
        if args.saturation:
            plan.append(("saturation", 0.0, 0.0))
        for label, think, stagger in plan:
            result = await one_run(
                daemon.port, agents, args.duration, think, stagger, rng, daemon.process.pid
            )
            every = Dist.of([x for v in result["samples"].values() for x in v])
            print(
                f"{label}: {every.n} requests p50 {every.p50:.2f} p99 {every.p99:.2f} ms,"
                f" errors {sum(len(v) for v in result['errors'].values())}",
                file=sys.stderr,
            )
            runs.append((label, result))
            await asyncio.sleep(args.settle)
    finally:
        daemon.stop()
    return runs


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--think", type=float, default=0.5, help="mean think time in seconds")
    parser.add_argument(
        "--stagger", type=float, default=2.0, help="realistic agents start within this many seconds"
    )
    parser.add_argument(
        "--no-saturation", dest="saturation", action="store_false", help="skip the run without think time"
    )
    parser.add_argument("--seed", type=int, default=10_000)
    parser.add_argument("--settle", type=float, default=6.0)
    parser.add_argument("--max-load", type=float, default=1.5)
    parser.add_argument("--max-wait", type=float, default=0.0)
    parser.add_argument("--random-seed", type=int, default=11)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = shlex.join(["python", "bench/concurrency.py", *(sys.argv[1:] if argv is None else argv)])
    load_start, _ = wait_for_quiet(args.max_load, args.max_wait)
    home = Path(tempfile.mkdtemp(prefix="mc-concurrency-"))
    try:
        runs = asyncio.run(run(args, home))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    load_end = os.getloadavg()[0]
    text = section(runs, args, command, (load_start, load_end))
    FIGURES.clear()
    FIGURES["load"] = (load_start, load_end)
    for label, result in runs:
        every = Dist.of([x for v in result["samples"].values() for x in v])
        FIGURES[label] = {
            "p50": every.p50,
            "p99": every.p99,
            "n": every.n,
            "rate": every.n / result["wall"],
            "errors": sum(len(v) for v in result["errors"].values()),
        }
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
