"""Tried for issue #16: how many memory deltas a second the daemon would answer if a write's
tokens and vectors cost nothing, the bound of any design that makes them elsewhere (a helper
process on the second core, a pool).

A native profile of the daemon under 8 clients' deltas puts the hashing vectors (embedding,
int8 form, coarse code, the vec0 insert) at ~23 % of the event loop's samples and the tokens at
~6 % (bench/RESULTS.md, "Measured and not taken: the write aims"), which projected ~1.3-1.4x.
This measures it instead: ``--serve`` starts the real daemon with ``index_text``, the hashing
embedder's ``embed``, ``serialize`` and ``coarse_code`` remembered by their input, so a text
seen before costs a dictionary lookup. Each daemon (plain, then patched; rounds alternate, a
fresh daemon and a store seeded with 5,000 memories each) is sent the same bodies twice by 8
clients: a first pass of ``--first`` seconds (every text new: the patched daemon fills its
memory) and a second pass of ``--seconds`` over the same bodies from the start (the patched
daemon then makes no tokens and no vectors; the vec0 insert and every other statement still
run). The second passes are compared; the store grows alike in both daemons.

    python bench/ideas/free_compute.py --rounds 3 --write
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shlex
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import writes  # noqa: E402
from harness import (  # noqa: E402
    Daemon,
    ProcStat,
    ScriptDaemon,
    code_state,
    create_agents,
    daemon_env,
    machine_line,
    owner_key,
    serve_or_run,
)
from results import write_section  # noqa: E402
from scale import ingest  # noqa: E402

SECTION = "## Measured and not taken: a write's tokens and vectors made elsewhere (issue #16)"
SEED = 5000
BODIES_PER_CLIENT = 6000  # more than a first pass can send (~1,000 a second over 8 clients)


def patch_daemon() -> None:
    """Tokens and vectors remembered by their input (see the module docstring)."""
    from state import embedders, search, tokenize

    def remembered(function, key=lambda *args: args):  # noqa: ANN001, ANN202
        memory: dict = {}

        def call(*args):  # noqa: ANN002, ANN202
            k = key(*args)
            found = memory.get(k)
            if found is None:
                found = memory[k] = function(*args)
            return found

        return call

    # A vector is remembered by identity: ``embed`` gives the same object for the same text.
    tokenize.index_text = remembered(tokenize.index_text)
    embedders.HashingEmbedder.embed = remembered(
        embedders.HashingEmbedder.embed, key=lambda _self, text: text
    )
    search.serialize = remembered(search.serialize, key=id)
    search.coarse_code = remembered(search.coarse_code, key=lambda embedding, _nonzero=None: embedding)


class PatchedDaemon(ScriptDaemon):
    """bench/harness.py's daemon, started through this script's ``--serve``."""

    script = __file__


async def send_for(
    clients: list[writes.Client], queues: list[list[bytes]], seconds: float
) -> tuple[int, int]:
    """Each client sends its queue from the start, one request at a time, for ``seconds``:
    (writes answered 200, others)."""
    deadline = time.perf_counter() + seconds
    done = failed = 0

    async def work(index: int) -> None:
        nonlocal done, failed
        for raw in queues[index]:
            if time.perf_counter() >= deadline:
                return
            status, _ = await clients[index].http.send(raw)
            if status == 200:
                done += 1
            else:
                failed += 1

    await asyncio.gather(*(work(i) for i in range(len(clients))))
    return done, failed


def one_run(kind: type[Daemon], first: float, seconds: float) -> tuple[float, float]:
    """(the second pass's deltas per second, the daemon's CPU ms per delta in it), for a
    daemon of class ``kind`` (bench/ideas/helper_process.py runs its own too)."""
    with tempfile.TemporaryDirectory(prefix="mc-free-compute-") as tmp:
        home = Path(tmp)
        daemon = kind(home, daemon_env(home))
        daemon.start()
        try:

            async def load() -> tuple[float, float]:
                rng = random.Random(3)
                agents = await create_agents(daemon.port, owner_key(home), writes.CLIENTS)
                await ingest(daemon.port, agents, SEED, rng, [])
                await asyncio.sleep(6)  # the checkpoint job and the segment merge settle
                clients = [
                    await writes.open_client(daemon.port, a, rng, f"c{i}") for i, a in enumerate(agents)
                ]
                bodies = random.Random(11)
                queues = [[c.request("delta", bodies) for _ in range(BODIES_PER_CLIENT)] for c in clients]
                _, failed = await send_for(clients, queues, first)
                await asyncio.sleep(3)
                cpu = ProcStat.read(daemon.process.pid).cpu_seconds
                started = time.perf_counter()
                done, failed_again = await send_for(clients, queues, seconds)
                wall = time.perf_counter() - started
                cpu = ProcStat.read(daemon.process.pid).cpu_seconds - cpu
                for client in clients:
                    await client.http.close()
                if failed or failed_again:
                    raise RuntimeError(f"{failed + failed_again} deltas failed")
                return done / wall, cpu / done * 1000

            return asyncio.run(load())
        finally:
            daemon.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of both daemons")
    parser.add_argument("--first", type=float, default=18.0, help="seconds of the first pass")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of the measured second pass")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    if args.seconds >= args.first:
        parser.error("--seconds must be shorter than --first (the second pass replays the first's texts)")
    started = datetime.now(UTC)
    loads = [os.getloadavg()[0]]
    runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(args.rounds):
        for patched in (False, True):
            runs[patched].append(one_run(PatchedDaemon if patched else Daemon, args.first, args.seconds))
            loads.append(os.getloadavg()[0])
            print("free tokens and vectors" if patched else "as shipped", runs[patched][-1], file=sys.stderr)
    rate = {p: statistics.median(r for r, _ in runs[p]) for p in runs}
    cpu = {p: statistics.median(c for _, c in runs[p]) for p in runs}
    label = {False: "as shipped", True: "tokens and vectors free (remembered)"}
    rows = [
        "| daemon | deltas per second, 8 clients (each round) | median | daemon CPU ms a delta (median) |",
        "|---|---|---:|---:|",
        *(
            f"| {label[p]} | {', '.join(f'{r:.0f}' for r, _ in runs[p])} | {rate[p]:.0f} | {cpu[p]:.2f} |"
            for p in (False, True)
        ),
    ]
    command = "python bench/ideas/free_compute.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    text = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command.strip()}` (repository root). Date: {started:%Y-%m-%d %H:%M} UTC."
            f" Code: `{code_state()}`.",
            f"Machine: {machine_line()}. 1-minute load average: {min(loads):.2f}-{max(loads):.2f}.",
            "",
            "Memory deltas (with receipt) by 8 clients; the second pass over the first pass's"
            " bodies, in which the patched daemon makes no tokens and no vectors (this script's"
            f" docstring). A fresh daemon each run, {SEED:,} memories seeded, rounds alternating:",
            "",
            *rows,
            "",
            f"By the medians: {rate[True] / rate[False]:.2f}x the deltas a second and"
            f" {cpu[True] / cpu[False]:.2f}x the CPU a delta. That bounds every design that"
            " makes a write's tokens and vectors away from the event loop (a helper process on"
            " the second core), before the hand-over's own cost: "
            + (
                f"at most {rate[True]:.0f} deltas a second here, under the aim of 1,000. What stays on"
                " the event loop whatever computes them: HTTP, validation, the services' Python and"
                " the statements."
                if rate[True] < writes.AIM_RATE
                else f"{rate[True]:.0f} deltas a second here, at or above the aim of 1,000."
            ),
            "",
        ]
    )
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    serve_or_run(patch_daemon, main)
