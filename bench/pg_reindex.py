"""A team store's search rows made anew after a tokenizer change, on PostgreSQL (issue #16,
state/pg/reindex.py): how long opening takes, how long the re-index takes, how long each
batch holds the write lock (every other write of the team server waits that long), and what
a search costs between batches.

1. A PostgreSQL 16 with pgvector (the ``pgserver`` wheel in a temporary directory, or
   ``--url`` for an empty database of your own) gets ``--memories`` records through
   ``PgStore`` with tokenizer 4's tokens (state/tokenize_v4.py), as the previous release
   wrote them: bench/latency.py's memory texts in one workspace, and every third record a
   conversation turn (sessions of 12), which a re-index gives its context anew. The build row
   is taken away (that release wrote none).
2. ``PgStore.open`` with this code, which only plans the re-index: its time.
3. The job's batches as the daemon runs them (``reindex.step`` on a connection of its own,
   the default ``rebuild_batch_records`` and ``rebuild_batch_ms``), one after another, with a
   search of the workspace between two batches: wall time, batch durations, search latency.

    python bench/pg_reindex.py --memories 10000 --write
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import code_state, machine_line
from latency import memory_text, search_query
from results import write_section

SECTION = "## Search on PostgreSQL: the re-index after a tokenizer change (issue #16)"
NAMESPACE = "wsp_bench"
FILL_BATCH = 1000
TURN_EVERY = 3
SESSION_TURNS = 12


def fill(url: str, count: int, rng: random.Random) -> float:
    """``count`` records with tokenizer 4's tokens and no build row; seconds taken."""
    from state import tokenize, tokenize_v4
    from state.config import Settings
    from state.memories import NewMemory
    from state.pg.store import PgStore

    started = time.perf_counter()
    store = PgStore.open(url, Settings())
    current = tokenize.index_text
    tokenize.index_text = tokenize_v4.index_text  # type: ignore[assignment]
    try:
        for first in range(0, count, FILL_BATCH):
            with store.transaction():
                for n in range(first, min(first + FILL_BATCH, count)):
                    turn = n % TURN_EVERY == 0
                    session = {"session_id": f"s{n // (TURN_EVERY * SESSION_TURNS)}"} if turn else {}
                    store.memories.create(
                        NewMemory(
                            namespace=NAMESPACE,
                            kind="message" if turn else "fact",
                            content=memory_text(rng),
                            source="bench",
                            provenance=session,
                        )
                    )
            print(f"  filled {min(first + FILL_BATCH, count)}", file=sys.stderr)
        store.conn.raw.execute("delete from index_builds")
    finally:
        tokenize.index_text = current  # type: ignore[assignment]
        store.close()
    return time.perf_counter() - started


def reindex(url: str, rng: random.Random) -> dict[str, Any]:
    from state.config import Settings
    from state.pg import reindex as pg_reindex
    from state.pg.store import PgStore

    settings = Settings()
    started = time.perf_counter()
    store = PgStore.open(url, settings)
    opened = time.perf_counter() - started
    apart = store.index_type(store.connect_apart(), store.embedder)  # as the daemon's job
    try:
        assert store.search.reindexing, "the store planned no re-index"
        batches: list[float] = []
        searches: list[float] = []
        started = time.perf_counter()
        while True:
            began = time.perf_counter()
            kind = pg_reindex.step(
                apart,
                max_records=settings.rebuild_batch_records,
                budget_seconds=settings.rebuild_batch_ms / 1000,
            )
            if kind is None:
                break
            batches.append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            store.search.search(search_query(rng), [NAMESPACE], limit=10)
            searches.append((time.perf_counter() - began) * 1000)
        took = time.perf_counter() - started
        after = []
        for _ in range(50):
            began = time.perf_counter()
            store.search.search(search_query(rng), [NAMESPACE], limit=10)
            after.append((time.perf_counter() - began) * 1000)
        rows = store.conn.raw.execute("select count(*) from memory_search").fetchone()[0]
        return {
            "open_ms": opened * 1000,
            "seconds": took,
            "rows": rows,
            "batches": batches,
            "searches": searches,
            "after": after,
            "built_with": pg_reindex.read_build(store.conn.raw).built_with,
        }
    finally:
        apart.conn.close()
        store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--url", help="an empty PostgreSQL database of your own, instead of pgserver")
    parser.add_argument("--random-seed", type=int, default=20241206)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    rng = random.Random(args.random_seed)
    date = datetime.now(UTC)
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="mc-pg-reindex-") as tmp:
        server = None
        url = args.url
        if url is None:
            import pgserver

            server = pgserver.get_server(Path(tmp) / "pgdata", cleanup_mode="stop")
            url = server.get_uri()
        try:
            filled = fill(url, args.memories, rng)
            loads.append(os.getloadavg()[0])
            got = reindex(url, rng)
            loads.append(os.getloadavg()[0])
        finally:
            if server is not None:
                server.cleanup()
    batches = sorted(got["batches"])

    def pct(values: list[float], q: float) -> float:
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    command = "python bench/pg_reindex.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    text = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command.strip()}` (repository root). Date: {date:%Y-%m-%d %H:%M} UTC."
            f" Code: `{code_state()}`.",
            f"Machine: {machine_line()}. 1-minute load average: {min(loads):.2f}-{max(loads):.2f}.",
            "",
            f"{args.memories:,} records written with tokenizer 4's tokens (a third of them"
            f" conversation turns) in {filled:.0f} s, the build row taken away; then this code"
            " (PostgreSQL 16 with pgvector from the pgserver wheel, over its Unix socket; in"
            " process, the daemon job's step on a connection of its own, default batch settings):",
            "",
            "| step | figure |",
            "|---|---:|",
            f"| `PgStore.open` (plans the re-index) | {got['open_ms']:.0f} ms |",
            f"| re-index, wall time (batches only) | {got['seconds']:.1f} s ({got['rows'] / got['seconds']:.0f} rows/s) |",
            f"| batches | {len(batches)} |",
            f"| batch (write lock held): median / p95 / longest | {statistics.median(batches):.1f} /"
            f" {pct(batches, 0.95):.1f} / {batches[-1]:.1f} ms |",
            f"| search between batches: median / p95 | {statistics.median(got['searches']):.2f} /"
            f" {pct(got['searches'], 0.95):.2f} ms |",
            f"| search after: median / p95 | {statistics.median(got['after']):.2f} /"
            f" {pct(got['after'], 0.95):.2f} ms |",
            f"| built with, after | `{got['built_with']}` |",
            "",
            "In the daemon each batch is followed by a pause at least as long (`rebuild_pause_ms`,"
            " 0: the batch's own time), so the re-index takes about twice the batches' wall time,"
            " and a write of another process waits at most one batch.",
            "",
        ]
    )
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
