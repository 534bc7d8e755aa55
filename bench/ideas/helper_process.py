"""Tried for issue #16: a write's tokens and vectors made by a helper process on the second
core, handed over for real, against the daemon as shipped and against the bound of
bench/ideas/free_compute.py (the same texts remembered: the hand-over costs nothing).

``--serve`` starts the real daemon patched so that, before a memory delta's handler runs,
the text its record will be indexed by (state/search.py record_text of the body's summary,
reason and triggers, as DeltaService.record makes it) goes to a helper process forked at
start; the handler awaits its index tokens, int8 vector and coarse code, and the write uses
them (``tokenize.index_text`` and ``SearchIndex._insert_vector`` look the text up first; a
text not prepared is made inline, as shipped, and counted). Requests that arrive in one
turn of the event loop go to the helper as one batch over a pipe (pickle); the helper
answers batches in order. Everything else (HTTP, validation, the statements, the group
commit) is the daemon as shipped. This is a measurement, not a design: a product version
would prepare every write's texts (mem1 turns, local memories, Memory Stores documents).

Each daemon (as shipped, remembered, helper; rounds alternate, a fresh daemon and a store
seeded with 5,000 memories each) is sent the same bodies twice by 8 clients, as in
free_compute.py: only the second pass is measured, where the remembered daemon makes no
tokens and no vectors and the helper daemon hands every text over again.

    python bench/ideas/helper_process.py --rounds 3 --write
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import pickle
import shlex
import statistics
import sys
from collections import deque
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import free_compute  # noqa: E402
import writes  # noqa: E402
from harness import Daemon, ScriptDaemon, code_state, machine_line, serve_or_run  # noqa: E402
from results import write_section  # noqa: E402

SECTION = "## Measured and not taken: a write's tokens and vectors made by a helper process (issue #16)"
DELTA_PATH = "/api/agent/memory-delta"
BATCHED = os.environ.get("MC_HELPER_BATCHED", "1") == "1"


def _helper(conn: Any, dimension: int) -> None:
    """The helper process: a batch of texts in, (tokens, int8 vector, coarse code) out."""
    from state import tokenize
    from state.embedders import HashingEmbedder, coarse_code, serialize

    embedder = HashingEmbedder(dimension)
    while True:
        try:
            texts = pickle.loads(conn.recv_bytes())
        except EOFError:
            return
        out = []
        for text in texts:
            vector = embedder.embed(text)
            embedding = serialize(vector)
            out.append((tokenize.index_text(text), embedding, coarse_code(embedding, vector.nonzero)))
        conn.send_bytes(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))


class Helper:
    """The daemon's side: batches of texts to the helper, futures answered in order."""

    def __init__(self, dimension: int) -> None:
        context = multiprocessing.get_context("fork")  # before the event loop and any thread
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_helper, args=(child, dimension), daemon=True)
        self.process.start()
        child.close()
        self.prepared: dict[str, tuple[str, bytes, bytes]] = {}
        self.waiting: deque[tuple[str, asyncio.Future[None]]] = deque()
        self.batch: list[tuple[str, asyncio.Future[None]]] = []
        self.reading = False
        self.hits = self.misses = 0

    async def prepare(self, text: str) -> None:
        loop = asyncio.get_running_loop()
        if not self.reading:
            loop.add_reader(self.conn.fileno(), self._answered)
            self.reading = True
        future: asyncio.Future[None] = loop.create_future()
        if BATCHED:
            if not self.batch:
                loop.call_soon(self._send)  # after the other requests of this turn of the loop
            self.batch.append((text, future))
        else:
            self.conn.send_bytes(pickle.dumps([text], protocol=pickle.HIGHEST_PROTOCOL))
            self.waiting.append((text, future))
        await future

    def _send(self) -> None:
        batch, self.batch = self.batch, []
        self.conn.send_bytes(pickle.dumps([text for text, _ in batch], protocol=pickle.HIGHEST_PROTOCOL))
        self.waiting.extend(batch)

    def _answered(self) -> None:
        results = pickle.loads(self.conn.recv_bytes())
        for result in results:
            text, future = self.waiting.popleft()
            self.prepared[text] = result
            if not future.done():
                future.set_result(None)

    def take(self, text: str) -> tuple[str, bytes, bytes] | None:
        found = self.prepared.get(text)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found


def patch_daemon() -> None:
    """Tokens and vectors of a memory delta's record made by the helper (module docstring)."""
    from daemon import endpoints
    from state import search, tokenize
    from state.settings import Settings

    helper = Helper(Settings().dimension)
    run_once = endpoints._run_once
    index_text = tokenize.index_text
    insert_vector = search.SearchIndex._insert_vector

    async def prepared_run_once(request, call, endpoint, key):  # noqa: ANN001, ANN202
        if endpoint.path == DELTA_PATH and endpoint.method == "POST" and call.body:
            body = call.body
            summary, reason = body["summary"], body.get("why_it_matters")
            content = summary if not reason else f"{summary}\n\nWhy it matters: {reason}"
            await helper.prepare(search.record_text(summary[:200], content, body["retrieval_triggers"]))
        return await run_once(request, call, endpoint, key)

    def prepared_index_text(text: str) -> str:
        found = helper.prepared.get(text)
        return found[0] if found is not None else index_text(text)

    def prepared_insert_vector(self, seq: int, namespace: str, text: str) -> None:  # noqa: ANN001
        found = helper.take(text)
        if found is None:
            insert_vector(self, seq, namespace, text)
            return
        helper.prepared.pop(text, None)
        self.pending_vectors.discard(seq)
        self.conn.execute(
            "insert into memory_vec (rowid, namespace, embedding, coarse) values (?, ?, vec_int8(?), vec_bit(?))",
            (seq, namespace, found[1], found[2]),
        )

    endpoints._run_once = prepared_run_once
    tokenize.index_text = prepared_index_text
    search.SearchIndex._insert_vector = prepared_insert_vector

    def report() -> None:
        line = f"helper: {helper.hits} texts prepared, {helper.misses} made inline\n"
        if stats := os.environ.get("MC_HELPER_STATS"):
            with open(stats, "a", encoding="utf-8") as out:
                out.write(line)

    import atexit

    atexit.register(report)


class HelperDaemon(ScriptDaemon):
    """bench/harness.py's daemon, started through this script's ``--serve``."""

    script = __file__


VARIANTS = {
    "as shipped": Daemon,
    "tokens and vectors free (remembered)": free_compute.PatchedDaemon,
    "helper process (handed over)": HelperDaemon,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the daemons")
    parser.add_argument("--first", type=float, default=18.0, help="seconds of the first pass")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of the measured second pass")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    started = datetime.now(UTC)
    loads = [os.getloadavg()[0]]
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
    for _ in range(args.rounds):
        for name, daemon in VARIANTS.items():
            runs[name].append(free_compute.one_run(daemon, args.first, args.seconds))
            loads.append(os.getloadavg()[0])
            print(name, runs[name][-1], file=sys.stderr)
    rate = {name: statistics.median(r for r, _ in runs[name]) for name in runs}
    cpu = {name: statistics.median(c for _, c in runs[name]) for name in runs}
    shipped = "as shipped"
    rows = [
        "| daemon | deltas per second, 8 clients (each round) | median | ratio | daemon CPU ms a delta (median) |",
        "|---|---|---:|---:|---:|",
        *(
            f"| {name} | {', '.join(f'{r:.0f}' for r, _ in runs[name])} | {rate[name]:.0f} |"
            f" {rate[name] / rate[shipped]:.2f}x | {cpu[name]:.2f} |"
            for name in runs
        ),
    ]
    command = "python bench/ideas/helper_process.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    text = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command.strip()}` (repository root). Date: {started:%Y-%m-%d %H:%M} UTC."
            f" Code: `{code_state()}`.",
            f"Machine: {machine_line()}. 1-minute load average: {min(loads):.2f}-{max(loads):.2f}.",
            "",
            "Memory deltas (with receipt) by 8 clients, the second pass over the first pass's bodies"
            " (this script's docstring). A fresh daemon each run,"
            f" {free_compute.SEED:,} memories seeded, rounds alternating. Daemon CPU: the daemon"
            " process's own (the helper process's is not in it):",
            "",
            *rows,
            "",
            f"Aim: {writes.AIM_RATE:,.0f} a second.",
            "",
        ]
    )
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    serve_or_run(patch_daemon, main)
