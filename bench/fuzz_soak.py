"""Fuzz soak: the CI property test (tests/reliability/test_api_fuzz.py) for many more examples.

Hypothesis draws requests for every operation of GET /api/openapi.json (path parameters with
real ids and path tricks, query parameters, schema-shaped and arbitrary bodies, invalid
UTF-8, credentials) against the real aiohttp server on a loopback port; every answer must
come within 5 s, never be a 5xx, and be in its dialect's error envelope when it is an error.

    python bench/fuzz_soak.py --examples 5000 --write
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
from hypothesis import HealthCheck, given, settings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from results import write_section  # noqa: E402

from state.paths import Paths  # noqa: E402
from state.secrets import open_secret_store  # noqa: E402
from state.setup import OWNER_KEY_SECRET  # noqa: E402
from tests.reliability.test_api_fuzz import (  # noqa: E402
    EXCLUDED,
    ThreadedDaemon,
    check_answer,
    requests,
    seed,
    send,
)

SECTION = "## Fuzz soak: property-based requests on every operation"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=5000)
    parser.add_argument("--write", action="store_true", help="record the result in bench/RESULTS.md")
    args = parser.parse_args()
    os.environ["MEMORYCLOUD_SECRETS"] = "file"
    root = Path(tempfile.mkdtemp(prefix="mc-fuzz-soak-"))
    paths = Paths(root / "config", root / "data", root / "state", root / "cache").ensure()
    daemon = ThreadedDaemon(paths).start()
    owner = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
    http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {owner}"}, timeout=10)
    agent = http.post("/api/local/agents", json={"name": "fuzz-agent"}).json()["api_key"]
    doc = http.get("/api/openapi.json").json()
    operations = [
        (m.upper(), p, op)
        for p, item in sorted(doc["paths"].items())
        for m, op in sorted(item.items())
        if not p.startswith(EXCLUDED)
    ]
    served = {
        "url": daemon.url,
        "owner": owner,
        "agent": agent,
        "ids": seed(http),
        "operations": operations,
        "client": httpx.Client(base_url=daemon.url, timeout=5.0),
    }
    statuses: collections.Counter = collections.Counter()
    slowest = [0.0]

    @settings(
        max_examples=args.examples, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(requests(operations, served["ids"]))
    def property_(request):
        began = time.perf_counter()
        response = send(served, request)
        slowest[0] = max(slowest[0], time.perf_counter() - began)
        statuses[response.status_code] += 1
        check_answer(request["method"], request["template"], response)

    began = time.perf_counter()
    failure = None
    try:
        property_()
    except Exception as exc:  # the falsifying example is printed by hypothesis
        failure = f"{type(exc).__name__}: {str(exc)[:300]}"
    elapsed = time.perf_counter() - began
    daemon.stop()
    sent = sum(statuses.values())
    section = "\n".join(
        [
            SECTION,
            "",
            f"Command: `python bench/fuzz_soak.py --examples {args.examples} --write` (repository root)."
            f" Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Machine: {platform.system()}"
            f" {platform.machine()}, {os.cpu_count()} cores (shared).",
            "",
            f"{len(operations)} operations from GET /api/openapi.json (upstream endpoints left out: they"
            " connect to a URL from the request). The properties: an answer within 5 s, no 5xx, errors in"
            " their dialect's envelope.",
            "",
            "| requests | operations | 2xx | 4xx | 5xx | slowest s | wall time s | failure |",
            "|---:|---:|---:|---:|---:|---:|---:|---|",
            f"| {sent} | {len(operations)} | {sum(v for k, v in statuses.items() if k < 300)} |"
            f" {sum(v for k, v in statuses.items() if 400 <= k < 500)} |"
            f" {sum(v for k, v in statuses.items() if k >= 500)} | {slowest[0]:.2f} | {elapsed:.0f} |"
            f" {failure or 'none'} |",
            "",
            "Statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())) + ".",
        ]
    )
    print(section)
    if args.write:
        write_section(SECTION, section)
    return 0 if failure is None else 1


if __name__ == "__main__":
    raise SystemExit(main())
