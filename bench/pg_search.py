"""Hybrid search on PostgreSQL (state/pg/search.py) against the SQLite engine, same records,
same queries, in one process (issue #18: "search p50/p99 at 100k and 1M memories on
PostgreSQL (HNSW) against SQLite at the same sizes").

For each size, the same memory texts (bench/latency.py's mixed English and Chinese memory
deltas, one namespace) go into a real SQLite store and into a real PostgreSQL 16 with pgvector
(the ``pgserver`` wheel, in a temporary directory; or ``--url`` for a server of your own, whose
database must be empty). Then each engine answers the same vocabulary queries, misspelt
queries (the vector path) and memory-brief task sentences, one at a time; wall time per
search, p50 and p99, and the ratio PostgreSQL / SQLite. Both in this process, so neither pays
for HTTP; PostgreSQL pays for its socket round trips.

    python bench/pg_search.py --sizes 10000 --queries 200
    python bench/pg_search.py --sizes 10000,100000 --write
"""

from __future__ import annotations

import argparse
import random
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import harness  # noqa: F401  (puts MC_BENCH_CODE's checkout first on sys.path)
from harness import code_state, machine_line
from latency import memory_text, search_query, typo_query
from results import write_section
from scale import brief_task

from state.config import Settings
from state.memories import NewMemory
from state.pg.engine import connect
from state.pg.migrations import migrate
from state.pg.search import PgSearchIndex
from state.search import record_text
from state.store import Store

SECTION = "## Search on PostgreSQL against SQLite (issue #18)"
NAMESPACE = "wsp_bench"
KINDS: dict[str, Callable[[random.Random], str]] = {
    "vocabulary": search_query,
    "misspelt (vectors)": typo_query,
    "a brief's task": brief_task,
}


def fill(store: Store, index: PgSearchIndex, count: int, rng: random.Random) -> tuple[float, float]:
    """``count`` memories into both engines, in batches of 1,000; seconds each took."""
    sqlite_seconds = pg_seconds = 0.0
    for first in range(0, count, 1000):
        texts = [memory_text(rng) for _ in range(min(1000, count - first))]
        started = time.perf_counter()
        with store.transaction():
            records = [
                store.memories.create(
                    NewMemory(namespace=NAMESPACE, kind="fact", content=text, source="bench")
                )
                for text in texts
            ]
        sqlite_seconds += time.perf_counter() - started
        started = time.perf_counter()
        with index.conn.transaction():
            for record in records:
                index.add(record["seq"], NAMESPACE, record_text(record["title"], record["content"], []))
        pg_seconds += time.perf_counter() - started
        print(f"  {first + len(texts)} written", file=sys.stderr)
    return sqlite_seconds, pg_seconds


def timed(search: Callable[[str], object], queries: list[str]) -> list[float]:
    for query in queries[:20]:  # warm caches and prepared statements
        search(query)
    samples = []
    for query in queries:
        started = time.perf_counter()
        search(query)
        samples.append((time.perf_counter() - started) * 1000)
    return sorted(samples)


def p(samples: list[float], pct: float) -> float:
    return samples[min(len(samples) - 1, int(pct / 100 * len(samples)))]


def measure(size: int, queries: int, url: str | None, rng: random.Random) -> list[str]:
    """Table rows for one size."""
    with tempfile.TemporaryDirectory(prefix="pg-search-") as tmp:
        server = None
        if url is None:
            import pgserver

            server = pgserver.get_server(Path(tmp) / "pgdata", cleanup_mode="stop")
            url = server.get_uri()
        store = Store.open(Path(tmp) / "bench.db", Settings())
        conn = connect(url)
        try:
            migrate(conn)
            index = PgSearchIndex(conn, store.embedder)
            sqlite_seconds, pg_seconds = fill(store, index, size, rng)
            conn.execute("analyze")
            rows = [
                f"| {size // 1000}k | ingest (in process, batches of 1,000) | {size / sqlite_seconds:.0f}/s |"
                f" {size / pg_seconds:.0f}/s | {sqlite_seconds / pg_seconds:.2f}x |"
            ]
            for kind, make in KINDS.items():
                asked = [make(rng) for _ in range(queries)]
                ours = timed(lambda q: store.search.search(q, [NAMESPACE], limit=10), asked)
                theirs = timed(lambda q: index.search(q, [NAMESPACE], limit=10), asked)
                rows.append(
                    f"| {size // 1000}k | {kind} | {statistics.median(ours):.2f} / {p(ours, 99):.2f} ms |"
                    f" {statistics.median(theirs):.2f} / {p(theirs, 99):.2f} ms |"
                    f" {statistics.median(theirs) / statistics.median(ours):.2f}x |"
                )
                print(rows[-1], file=sys.stderr)
        finally:
            conn.close()
            store.close()
            if server is not None:
                server.cleanup()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated memory counts")
    parser.add_argument("--queries", type=int, default=200, help="timed searches per kind")
    parser.add_argument("--url", help="a PostgreSQL database of your own (empty), instead of pgserver")
    parser.add_argument("--random-seed", type=int, default=20241204)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()
    command = shlex.join(["python", "bench/pg_search.py", *sys.argv[1:]])
    rng = random.Random(args.random_seed)
    rows: list[str] = []
    for size in (int(s) for s in args.sizes.split(",")):
        rows += measure(size, args.queries, args.url, rng)
    text = f"""{SECTION}

Command: `{command}` (repository root). Date: {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}. Code: `{code_state()}`.
Machine: {machine_line()}.

One process, the same memories (bench/latency.py's mixed English and Chinese texts, one
namespace) in a SQLite store and in PostgreSQL 16 with pgvector (pgserver wheel, Unix socket);
each search at limit 10, the shipped settings; wall time, p50 / p99 over {args.queries} queries of each kind.

| size | queries | SQLite p50 / p99 | PostgreSQL p50 / p99 | PostgreSQL / SQLite (p50) |
|---|---|---:|---:|---:|
{chr(10).join(rows)}
"""
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
