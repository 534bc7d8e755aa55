"""Crash soak: kill -9 the real daemon over and over while several clients write.

Each cycle starts ``memorycloud daemon run`` on a fresh port over the same data directory,
lets four clients write at full speed (AMP deltas from two agents, Memory Stores documents,
agent-memory1.0 messages), kills the daemon with SIGKILL after a random 0.2-1.5 s, and then
checks the database file directly: every acknowledged write is there with its exact content,
nothing is half-written (versions, delta log, summary cards, mem1 message + memory), SQLite's
integrity_check passes and the FTS and vector indexes agree with the records
(state/doctor.py). The CI test (tests/e2e/test_crash_recovery.py) does one such cycle.

    python bench/crash_soak.py --cycles 30 --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from results import write_section  # noqa: E402

from state.db import connect  # noqa: E402
from state.doctor import check_indexes, integrity_check  # noqa: E402

SECTION = "## Crash soak: kill -9 under concurrent writes"
STORES = "/api/v1/cloud/memory_stores"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cli(env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "daemon", *args], capture_output=True, text=True, check=True, env=env, cwd=ROOT
    ).stdout


def start(env: dict[str, str], home: Path) -> tuple[subprocess.Popen, str, float]:
    port = free_port()
    began = time.perf_counter()
    log = open(home / "soak.log", "ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "daemon", "daemon", "run", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    while time.perf_counter() - began < 30:
        if process.poll() is not None:
            raise RuntimeError((home / "soak.log").read_text()[-2000:])
        try:
            if httpx.get(f"{url}/healthz", timeout=0.5).status_code == 200:
                return process, url, time.perf_counter() - began
        except httpx.HTTPError:
            time.sleep(0.02)
    raise RuntimeError("daemon did not come up")


def writer(url: str, key: str, kind: str, tag: str, setup: dict, acked: list, stop: threading.Event) -> None:
    http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=10)
    i = 0
    try:
        while not stop.is_set():
            text = f"soak {tag} write {i} " + "words " * random.randint(1, 40)
            if kind == "amp":
                r = http.post(
                    "/api/agent/memory-delta",
                    json={"summary": text},
                    headers={"X-AMP-Context-Receipt": setup["receipt"]},
                )
                ident = r.json()["delta"]["memory_id"] if r.status_code == 200 else None
            elif kind == "stores":
                r = http.post(
                    f"{STORES}/{setup['store']}/memories", json={"path": f"{tag}/{i}.md", "content": text}
                )
                ident = r.json()["id"] if r.status_code == 200 else None
            else:
                r = http.post(
                    "/add_messages/",
                    json={
                        "user_id": "soak",
                        "scope_id": "s",
                        "session_id": tag,
                        "messages": [{"role": "assistant", "content": text}],
                    },
                )
                ident = r.json()["message_ids"][0] if r.status_code == 200 else None
            if ident is None:
                raise RuntimeError(f"{kind} write refused: {r.status_code} {r.text[:200]}")
            acked.append((kind, ident, text))
            i += 1
    except httpx.TransportError:
        pass  # the kill
    finally:
        http.close()


def verify(database: Path, acked: list) -> dict:
    conn = connect(database)
    try:
        problems: list[str] = []
        if integrity_check(conn) != ["ok"]:
            problems.append("integrity_check failed")
        lost = 0
        for kind, ident, text in acked:
            table = "mem1_messages" if kind == "mem1" else "memory_records"
            row = conn.execute(f"select content from {table} where id = ?", (ident,)).fetchone()
            lost += row is None or row[0] != (text.strip() if kind == "amp" else text)
        half = conn.execute(
            "select count(*) from memory_records r where r.version != (select count(*) from"
            " memory_versions v where v.memory_id = r.id)"
        ).fetchone()[0]
        half += conn.execute(
            "select count(*) from memory_records r where r.source = 'memory_delta' and ("
            " not exists (select 1 from memory_deltas d where d.memory_id = r.id) or"
            " not exists (select 1 from summary_cards c where c.memory_id = r.id))"
        ).fetchone()[0]
        half += conn.execute(
            "select count(*) from mem1_messages m where not exists (select 1 from memory_records r"
            " where json_extract(r.provenance, '$.message_id') = m.id and r.kind != 'summary')"
        ).fetchone()[0]
        for digest_ok in conn.execute("select content, content_sha256 from memory_records"):
            if hashlib.sha256(digest_ok[0].encode()).hexdigest() != digest_ok[1]:
                half += 1
        indexes = check_indexes(conn)
        if not all(r.ok for r in indexes.values()):
            problems.append(json.dumps({k: r.describe() for k, r in indexes.items()}))
        return {
            "lost": lost,
            "half": half,
            "problems": problems,
            "records": conn.execute("select count(*) from memory_records").fetchone()[0],
        }
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=30)
    parser.add_argument("--write", action="store_true", help="record the result in bench/RESULTS.md")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="mc-crash-soak-"))
    env = {**os.environ, "MEMORYCLOUD_HOME": str(home), "MEMORYCLOUD_SECRETS": "file"}
    keys = [
        json.loads(cli(env, "agent", "add", f"soak-{n}", "--runtime", "codex", "--json"))["api_key"]
        for n in range(2)
    ]
    totals = {"acked": 0, "lost": 0, "half": 0, "problems": 0}
    restarts: list[float] = []
    began = time.perf_counter()
    for cycle in range(args.cycles):
        process, url, restart = start(env, home)
        restarts.append(restart)
        setup = {
            "store": httpx.post(
                f"{url}{STORES}",
                json={"name": f"soak {cycle}"},
                headers={"Authorization": f"Bearer {keys[0]}"},
            ).json()["id"]
        }
        receipts = [
            httpx.post(
                f"{url}/api/agent/bootstrap/context",
                json={"project_key": "soak"},
                headers={"Authorization": f"Bearer {k}"},
            ).json()["receipt_id"]
            for k in keys
        ]
        acked: list = []
        stop = threading.Event()
        threads = [
            threading.Thread(
                target=writer,
                args=(url, key, kind, f"{kind}{n}-{cycle}", {**setup, "receipt": receipt}, acked, stop),
            )
            for n, (key, kind, receipt) in enumerate(
                [
                    (keys[0], "amp", receipts[0]),
                    (keys[1], "amp", receipts[1]),
                    (keys[0], "stores", None),
                    (keys[1], "mem1", None),
                ]
            )
        ]
        for thread in threads:
            thread.start()
        time.sleep(random.uniform(0.2, 1.5))
        process.send_signal(signal.SIGKILL)
        process.wait()
        for thread in threads:
            thread.join(20)
        result = verify(home / "data" / "memorycloud.db", acked)
        totals["acked"] += len(acked)
        totals["lost"] += result["lost"]
        totals["half"] += result["half"]
        totals["problems"] += len(result["problems"])
        print(
            f"cycle {cycle + 1}/{args.cycles}: {len(acked)} acknowledged, {result['lost']} lost,"
            f" {result['half']} half-written, {result['records']} records,"
            f" restart {restart:.2f} s {result['problems'] or ''}",
            flush=True,
        )
    elapsed = time.perf_counter() - began
    ok = totals["lost"] == totals["half"] == totals["problems"] == 0
    restarts.sort()
    section = "\n".join(
        [
            SECTION,
            "",
            f"Command: `python bench/crash_soak.py --cycles {args.cycles} --write` (repository root)."
            f" Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Machine: {platform.system()}"
            f" {platform.machine()}, {os.cpu_count()} cores (shared).",
            "",
            "Each cycle: the real daemon process, four clients writing at full speed (AMP deltas from"
            " two agents, Memory Stores documents, agent-memory1.0 messages), SIGKILL after a random"
            " 0.2-1.5 s, then the database file is checked directly (every acknowledged write with its"
            " exact content; versions, delta log, summary cards and mem1 message/memory pairs complete;"
            " content sha256; PRAGMA integrity_check; FTS and vector indexes against the records).",
            "",
            "| cycles | acknowledged writes | lost | half-written | integrity or index problems |"
            " restart p50 s | restart max s | wall time s | promise kept |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---|",
            f"| {args.cycles} | {totals['acked']} | {totals['lost']} | {totals['half']} |"
            f" {totals['problems']} | {restarts[len(restarts) // 2]:.2f} | {restarts[-1]:.2f} |"
            f" {elapsed:.0f} | {'yes' if ok else 'NO'} |",
        ]
    )
    print(section)
    if args.write:
        write_section(SECTION, section)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
