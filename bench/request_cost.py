"""CPU time per HTTP request, in one process: the real app (daemon/app.py) served by aiohttp's
TestServer on loopback and called by its TestClient, over a workspace of 200 memories.

Client and server share the process, so a figure is both sides' CPU (the client's is the same
code in every checkout). CPU time, not wall time: another process's load on this shared
machine moves it less. Use it with bench/before_after.py to see whether the HTTP layer
(middlewares, the endpoint wrapper, validation, the answer's JSON) costs more than before:

    python bench/before_after.py --before REV --after HEAD --rounds 3 --title T \\
        -- bench/request_cost.py

On this machine CPU time still moves by 20-40 % between runs. ``--instructions`` counts
instead: each kind of request runs under callgrind twice (no timed requests, then
``--requests``), and the difference per request does not move with the load. Give it 100
requests or more: over 40, a WAL checkpoint or a garbage collection falling inside the window
or not moves the figure by a few per cent (bench/RESULTS.md, issue #17's instruction counts).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401  (puts MC_BENCH_CODE's checkout first on sys.path)
import writes
from aiohttp.test_utils import TestClient, TestServer

from daemon import keys
from daemon.app import create_app
from state.config import Settings
from state.index_builds import merge_step
from state.paths import Paths

WARMUP = 50


async def measure(requests: int, repeat: int, only: str | None = None) -> dict[str, list[float]]:
    """Milliseconds of CPU per request, one figure per repeat, for each kind of request."""
    tmp = Path(tempfile.mkdtemp(prefix="mc-request-cost-"))
    app = create_app(Settings(), Paths(tmp / "config", tmp / "data", tmp / "state", tmp / "cache"))
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        store = app[keys.STORE]
        with store.transaction():
            _, key = store.identities.create_agent("bench", "codex")
        auth = {"Authorization": f"Bearer {key}"}
        pack = await (await client.post("/api/agent/bootstrap/context", json={}, headers=auth)).json()
        receipt = {**auth, "X-AMP-Context-Receipt": pack["receipt"]["receipt_id"]}
        for i in range(200):
            summary = f"note {i} about the WAL checkpoint and search {i % 7}"
            response = await client.post(
                "/api/agent/memory-delta", json={"summary": summary}, headers=receipt
            )
            assert response.status == 200, await response.text()
        # The index's segments merged now, as the daemon's job merges them once writes pause:
        # else that merge lands inside the window of one of the two callgrind runs and not the
        # other's (a search's figure moved between 5.4 and 5.9 M instructions from run to run).
        while True:
            with store.transaction():
                if not merge_step(store.conn):
                    break
        turns = writes.Mem1Turns(random.Random(5), "bench")
        calls = {
            "GET /healthz": lambda: client.get("/healthz"),
            "GET /api/agent/search": lambda: client.get("/api/agent/search?q=WAL%20checkpoint", headers=auth),
            "POST /api/agent/bootstrap/context": lambda: client.post(
                "/api/agent/bootstrap/context", json={}, headers=auth
            ),
            "POST /api/agent/memory-delta": lambda: client.post(
                "/api/agent/memory-delta", json={"summary": "one more note"}, headers=receipt
            ),
            "POST /add_messages/": lambda: client.post("/add_messages/", json=turns.body(), headers=auth),
        }
        if only is not None:
            calls = {only: calls[only]}
        out: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(repeat):
            for name, call in calls.items():
                for _ in range(WARMUP):
                    await (await call()).read()
                started = time.process_time()
                for _ in range(requests):
                    await (await call()).read()
                out[name].append((time.process_time() - started) / max(requests, 1) * 1000)
        return out
    finally:
        await client.close()


KINDS = (
    "GET /healthz",
    "GET /api/agent/search",
    "POST /api/agent/bootstrap/context",
    "POST /api/agent/memory-delta",
    "POST /add_messages/",
)


def instructions(kind: str, requests: int) -> float:
    """Instructions per request: callgrind's totals of a run with ``requests`` minus one with none."""
    totals = []
    for n in (0, requests):
        with tempfile.TemporaryDirectory(prefix="mc-callgrind-") as tmp:
            out = Path(tmp) / "callgrind.out"
            subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__]
                + ["--only", kind, "--requests", str(n), "--repeat", "1"],
                check=True,
                capture_output=True,
                env={**os.environ, "PYTHONHASHSEED": "0"},
            )
            found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
            assert found, "no totals in callgrind's output"
            totals.append(int(found.group(1)))
    return (totals[1] - totals[0]) / requests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=400, help="timed requests of each kind per repeat")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=KINDS, help="one kind of request")
    parser.add_argument("--instructions", action="store_true", help="count under callgrind")
    args = parser.parse_args()
    if args.instructions:
        print("| request | M instructions per request |")
        print("|---|---:|")
        for kind in [args.only] if args.only else KINDS:
            print(f"| `{kind}` | {instructions(kind, args.requests) / 1e6:.3f} |", flush=True)
        return 0
    figures = asyncio.run(measure(args.requests, args.repeat, args.only))
    print("| request | CPU ms per request (median) | each repeat |")
    print("|---|---:|---|")
    for name, values in figures.items():
        each = ", ".join(f"{v:.2f}" for v in values)
        print(f"| `{name}` | {statistics.median(values):.2f} | {each} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
