"""CPU time per HTTP request, in one process: the real app (daemon/app.py) served by aiohttp's
TestServer on loopback and called by its TestClient, over a workspace of 200 memories.

Client and server share the process, so a figure is both sides' CPU (the client's is the same
code in every checkout). CPU time, not wall time: another process's load on this shared
machine moves it less. Use it with bench/before_after.py to see whether the HTTP layer
(middlewares, the endpoint wrapper, validation, the answer's JSON) costs more than before:

    python bench/before_after.py --before REV --after HEAD --rounds 3 --title T \\
        -- bench/request_cost.py
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401  (puts MC_BENCH_CODE's checkout first on sys.path)
from aiohttp.test_utils import TestClient, TestServer

from daemon import keys
from daemon.app import create_app
from state.config import Settings
from state.paths import Paths

WARMUP = 50


async def measure(requests: int, repeat: int) -> dict[str, list[float]]:
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
        calls = {
            "GET /healthz": lambda: client.get("/healthz"),
            "GET /api/agent/search": lambda: client.get("/api/agent/search?q=WAL%20checkpoint", headers=auth),
            "POST /api/agent/bootstrap/context": lambda: client.post(
                "/api/agent/bootstrap/context", json={}, headers=auth
            ),
            "POST /api/agent/memory-delta": lambda: client.post(
                "/api/agent/memory-delta", json={"summary": "one more note"}, headers=receipt
            ),
        }
        out: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(repeat):
            for name, call in calls.items():
                for _ in range(WARMUP):
                    await (await call()).read()
                started = time.process_time()
                for _ in range(requests):
                    await (await call()).read()
                out[name].append((time.process_time() - started) / requests * 1000)
        return out
    finally:
        await client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=400, help="timed requests of each kind per repeat")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    figures = asyncio.run(measure(args.requests, args.repeat))
    print("| request | CPU ms per request (median) | each repeat |")
    print("|---|---:|---|")
    for name, values in figures.items():
        each = ", ".join(f"{v:.2f}" for v in values)
        print(f"| `{name}` | {statistics.median(values):.2f} | {each} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
