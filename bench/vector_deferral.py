"""Should the daemon make the hashing embedder's vectors after the write (daemon/vector_worker.py)
instead of inside it? CPU time per memory delta, in process, the daemon's way of writing.

A store of ``--memories`` memories in one workspace (bench/profile_speed.py's), then rounds of
``--deltas`` deltas written through ``DeltaService.record`` by 8 writer tasks on one event loop
with group commit on (state/group_commit.py: as in the daemon, the writes of one loop turn
share a COMMIT), alternating: vectors inside each write (what the daemon does with the hashing
embedder), and vectors left to the worker, which makes them after the writes in batches (what
it does for a model or an embedding server). The round's CPU time (process, so the machine's
load matters little) includes the worker's catching up.

    python bench/vector_deferral.py --write
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

from harness import code_state, machine_line, record_delta
from latency import delta_body
from profile_speed import NoChanges, build_store
from results import write_section

SECTION = "## Before and after: vectors off the write path"
WRITERS = 8


async def one_round(store, identity, service, bodies, deferred: bool, count: int) -> float:
    """CPU milliseconds per delta for ``count`` deltas by WRITERS tasks."""
    from daemon.vector_worker import VectorWorker
    from state.group_commit import disable_group_commit, enable_group_commit

    enable_group_commit(store.conn, asyncio.get_running_loop())
    store.embedder.runs_inline = not deferred  # the worker defers an embedder that blocks
    worker = VectorWorker(store.search)
    worker.start()

    async def writer(share: int) -> None:
        for _ in range(share):
            body = next(bodies)
            with store.transaction():
                record_delta(service, identity, body)
            await asyncio.sleep(0)  # the next writer's turn, as requests interleave

    started = time.process_time()
    await asyncio.gather(*(writer(count // WRITERS) for _ in range(WRITERS)))
    await worker.stop()  # the deferred vectors are made before the round ends
    disable_group_commit(store.conn)
    assert not store.search.pending_vectors
    return (time.process_time() - started) / count * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--deltas", type=int, default=1500, help="deltas per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)

    from daemon.runtime.deltas import DeltaService

    home = Path(tempfile.mkdtemp(prefix="mc-deferral-"))
    load_start = __import__("os").getloadavg()[0]
    store, identity = build_store(home, args.memories)
    service = DeltaService(store, NoChanges())
    rng = random.Random(7)
    bodies = iter([delta_body(rng) for _ in range(args.deltas * (2 * args.rounds + 1))])
    figures: dict[bool, list[float]] = {False: [], True: []}

    async def rounds() -> None:
        await one_round(store, identity, service, bodies, False, args.deltas)  # warm-up
        for _ in range(args.rounds):
            for deferred in (False, True):
                figures[deferred].append(
                    await one_round(store, identity, service, bodies, deferred, args.deltas)
                )

    asyncio.run(rounds())
    store.close()
    inline, deferred = (statistics.median(figures[k]) for k in (False, True))
    lines = [
        SECTION,
        "",
        f"Command: `python {shlex.join(['bench/vector_deferral.py', *(argv if argv is not None else sys.argv[1:])])}`"
        f" (repository root). Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Code: `{code_state()}`.",
        f"{machine_line()}. 1-minute load average at the start: {load_start:.2f}, at the end:"
        f" {__import__('os').getloadavg()[0]:.2f}.",
        "",
        f"In process, {args.memories} memories in one workspace, then {args.rounds} alternating rounds of"
        f" {args.deltas} memory deltas by {WRITERS} writer tasks on one event loop with group commit"
        " (the daemon's way of writing), hashing embedder. CPU time of the process per delta,"
        " the deferred vectors' catching up included:",
        "",
        "| vectors | CPU ms per delta, each round | median | ratio |",
        "|---|---|---:|---:|",
        f"| inside the write (the daemon, hashing embedder) | {', '.join(f'{x:.3f}' for x in figures[False])}"
        f" | {inline:.3f} | 1.00 |",
        f"| after it, by the worker (daemon/vector_worker.py) | {', '.join(f'{x:.3f}' for x in figures[True])}"
        f" | {deferred:.3f} | {deferred / inline:.2f} |",
        "",
        "So the daemon defers only embedders that block (a model, an embedding server: their"
        " embeddings run in the worker's thread, off the event loop); the hashing embedder stays"
        " inside the write. Group commit already sends a batch's vector pages to the WAL once, and"
        " the worker's batches add a re-read of each record.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
