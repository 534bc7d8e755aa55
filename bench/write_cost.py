"""What one write costs the daemon's event loop, in process: memory deltas or mem1 turns by 8
writer tasks on one event loop with group commit on (state/group_commit.py), as the daemon
writes them under bench/writes.py's load, but without HTTP.

A store of ``--memories`` memories is made once (bench/profile_speed.py's) and copied for
each run. ``--instructions`` runs the writes under callgrind twice (no timed calls, then
``--calls``) and reports the difference per call: instruction counts do not move with the
machine's load, which on this shared machine moves CPU time by 10-30 % between runs.
Without it, CPU time per call (time.process_time).

    python bench/write_cost.py --kind delta --calls 160 --instructions
    MC_BENCH_CODE=DIR python bench/write_cost.py ...   # another checkout (bench/harness.py)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
import writes
from harness import record_delta
from latency import delta_body
from profile_speed import NoChanges, build_store

WRITERS = 8
WARMUP = 3  # untimed calls per writer: statement cache and page cache filled


def prepare(home: Path, memories: int) -> None:
    home.mkdir(parents=True, exist_ok=True)  # build_store starts a daemon there
    store, identity = build_store(home, memories)
    store.close()
    (home / "identity.json").write_text(json.dumps(identity["id"]), encoding="utf-8")


def mem1_body(turns: writes.Mem1Turns) -> dict:
    """bench/writes.py's chat turn, with the defaults the endpoint's schema fills in."""
    return {
        **turns.body(),
        "scope_id": "__default__",
        "mem_variables": [],
        **{
            f"enable_{flag}": True
            for flag in (
                "long_term_mem",
                "user_profile",
                "semantic_memory",
                "episodic_memory",
                "summary_memory",
            )
        },
    }


def run(seeded: Path, kind: str, calls: int) -> float:
    """Write ``calls`` calls into a copy of ``seeded``; CPU ms per call."""
    from daemon.runtime.deltas import DeltaService
    from daemon.runtime.mem1 import Mem1Service
    from state.config import load_settings
    from state.group_commit import disable_group_commit, enable_group_commit
    from state.paths import resolve_paths
    from state.store import Store

    home = Path(tempfile.mkdtemp(prefix="mc-write-cost-"))
    try:
        shutil.copytree(seeded, home, dirs_exist_ok=True)
        paths = resolve_paths({"MEMORYCLOUD_HOME": str(home)})
        store = Store.open(paths.database, load_settings(paths.config_file))
        identity = store.identities.get(json.loads((home / "identity.json").read_text()))
        deltas, mem1 = DeltaService(store, NoChanges()), Mem1Service(store)
        # Summaries rebuilt once, at the end: in the daemon (5 s delay, sessions of 10 turns
        # under 8 clients) a session's summary is rebuilt about once.
        mem1.summary_delay = 3600.0
        rng = random.Random(7)
        turns = [writes.Mem1Turns(random.Random(i), f"c{i}") for i in range(WRITERS)]
        bodies = [
            [
                mem1_body(turns[i]) if kind == "mem1" else delta_body(rng)
                for _ in range(WARMUP + calls // WRITERS)
            ]
            for i in range(WRITERS)
        ]

        def write(body: dict) -> None:
            if kind == "mem1":
                mem1.add_messages(identity, body)
                return
            with store.transaction():
                record_delta(deltas, identity, body)

        async def writer(part: list[dict]) -> None:
            for body in part:
                write(body)
                await asyncio.sleep(0)  # the next writer's turn, as requests interleave

        async def main() -> float:
            enable_group_commit(store.conn, asyncio.get_running_loop())
            await asyncio.gather(*(writer(b[:WARMUP]) for b in bodies))
            await asyncio.sleep(0.01)
            started = time.process_time()
            await asyncio.gather(*(writer(b[WARMUP:]) for b in bodies))
            await asyncio.sleep(0.01)
            mem1.flush_summaries()
            spent = time.process_time() - started
            disable_group_commit(store.conn)
            return spent / max(calls, 1) * 1000

        try:
            return asyncio.run(main())
        finally:
            store.close()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def instructions(seeded: Path, kind: str, calls: int) -> float:
    """Instructions per call: callgrind's totals of a run with ``calls`` minus one with none."""
    totals = []
    for n in (0, calls):
        with tempfile.TemporaryDirectory(prefix="mc-callgrind-") as tmp:
            out = Path(tmp) / "callgrind.out"
            subprocess.run(
                [
                    "valgrind",
                    "--tool=callgrind",
                    f"--callgrind-out-file={out}",
                    sys.executable,
                    __file__,
                    "--store",
                    str(seeded),
                    "--kind",
                    kind,
                    "--calls",
                    str(n),
                ],
                check=True,
                capture_output=True,
                env={**os.environ, "PYTHONHASHSEED": "0"},
            )
            totals.append(int(re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M).group(1)))
    return (totals[1] - totals[0]) / calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("delta", "mem1"), default="delta")
    parser.add_argument("--calls", type=int, default=160)
    parser.add_argument("--memories", type=int, default=2000, help="the store written first")
    parser.add_argument("--store", help="a store made before (this run's is then not made)")
    parser.add_argument("--instructions", action="store_true", help="count under callgrind")
    args = parser.parse_args(argv)
    made = None
    if args.store is None:
        made = Path(tempfile.mkdtemp(prefix="mc-write-cost-store-"))
        prepare(made / "home", args.memories)
    seeded = Path(args.store) if args.store else made / "home"
    try:
        if args.instructions:
            print(
                f"{args.kind}: {instructions(seeded, args.kind, args.calls) / 1e6:.3f} M instructions"
                f" per call ({args.calls} calls, code {harness.code_state()})"
            )
        else:
            print(
                f"{args.kind}: {run(seeded, args.kind, args.calls):.3f} ms CPU per call"
                f" ({args.calls} calls, code {harness.code_state()})"
            )
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
