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

Filling. SQLite: ``store.memories.create`` in transactions of 1,000, always. PostgreSQL,
``--pg-fill``:

* ``rows``: ``PgSearchIndex.add`` per record in transactions of 1,000, the HNSW index kept, so
  each row is inserted into the graph (what a running server does; ~320/s on 2 cores, i.e.
  ~55 minutes for 1M);
* ``bulk``: the HNSW index's definition is read from ``pg_indexes`` (as
  ``PgSearchIndex.ensure_vectors`` created it), the index dropped, the rows loaded by the same
  ``PgSearchIndex.add`` in transactions of 1,000 sent in psycopg's pipeline mode (no wait for
  each statement's answer), then the index created again from that definition in one build
  (``--build-memory`` as maintenance_work_mem, one parallel worker) and checked to be the same;
* ``auto`` (default): ``bulk`` from 1M records, ``rows`` below.

Then VACUUM (ANALYZE) on PostgreSQL (the statistics, and nothing left for autovacuum to do
while the queries are timed); the SQLite store as the store leaves it.
``--keep DIR`` keeps each size's filled databases in DIR/size-N and reuses them (with the
fill figures of the run that filled them) when run again: to time the queries again without
filling again.

    python bench/pg_search.py --sizes 10000 --queries 200
    python bench/pg_search.py --sizes 10000,100000,1000000 --queries 200 --write
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import harness  # puts MC_BENCH_CODE's checkout first on sys.path
from harness import code_state, machine_line, wait_for_quiet
from latency import memory_text, search_query, typo_query
from results import write_section
from scale import brief_task, long_query

from state.config import Settings
from state.memories import NewMemory
from state.pg.engine import connect
from state.pg.migrations import migrate
from state.pg.search import PgSearchIndex
from state.search import record_text
from state.store import Store

SECTION = "## Search on PostgreSQL against SQLite (issue #18)"
NAMESPACE = "wsp_bench"
BULK_FROM = 1_000_000  # --pg-fill auto: bulk load from this size
KINDS: dict[str, Callable[[random.Random], str]] = {
    "vocabulary": search_query,
    "misspelt (vectors)": typo_query,
    "a brief's task": brief_task,
    "long (120 words, or 60 Chinese characters)": long_query,
}


def log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


def rss_mb() -> tuple[float, float]:
    """(anonymous, file-backed) resident memory of this process, MB."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("RssAnon", "RssFile"):
            fields[name] = int(value.split()[0]) / 1024
    return fields.get("RssAnon", 0.0), fields.get("RssFile", 0.0)


def hnsw_definition(conn: Any) -> tuple[str, str]:
    """(name, CREATE INDEX statement) of memory_vectors' HNSW index, as the database holds it."""
    rows = conn.execute(
        "select indexname, indexdef from pg_indexes"
        " where tablename = 'memory_vectors' and indexdef ~* ' using hnsw '"
    ).fetchall()
    if len(rows) != 1:
        raise RuntimeError(f"expected one HNSW index on memory_vectors, found {len(rows)}")
    return rows[0][0], rows[0][1]


def fill(
    store: Store,
    index: PgSearchIndex,
    count: int,
    rng: random.Random,
    *,
    bulk: bool,
    peak: list[float],
    loads: list[float],
) -> tuple[float, float]:
    """``count`` memories into both engines, in transactions of 1,000; seconds each took.
    ``bulk``: PostgreSQL's statements of a transaction are pipelined. ``peak``: the largest
    (anonymous, file-backed) RSS seen, updated; ``loads``: the 1-minute load averages seen."""
    sqlite_seconds = pg_seconds = 0.0
    every = max(1000, count // 50)
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
        with index.conn.pipeline() if bulk else contextlib.nullcontext():
            with index.conn.transaction():
                for record in records:
                    index.add(record["seq"], NAMESPACE, record_text(record["title"], record["content"], []))
        pg_seconds += time.perf_counter() - started
        written = first + len(texts)
        anon, file = rss_mb()
        peak[0], peak[1] = max(peak[0], anon), max(peak[1], file)
        if written % every == 0 or written == count:
            loads.append(os.getloadavg()[0])
            log(
                f"  {written} written: SQLite {written / sqlite_seconds:.0f}/s, PostgreSQL"
                f" {written / pg_seconds:.0f}/s; RSS {anon:.0f} MB anonymous, {file:.0f} MB file;"
                f" load {os.getloadavg()[0]:.2f}"
            )
    return sqlite_seconds, pg_seconds


def build_memory(size: int, dimension: int, asked: str) -> str:
    """maintenance_work_mem for the HNSW build: ``asked``, or (auto) enough for pgvector to
    build the whole graph in memory (~4 bytes a dimension and ~1 KB more per record: 4.8 KB at
    1,024 dimensions, from its "graph no longer fits" notice), at least 1GB, at most half
    the memory available; past that, the rest of the rows are inserted one by one into the
    graph on disk (3x slower at 100k with 56 % of them so)."""
    if asked != "auto":
        return asked
    wanted = size * (4 * dimension + 1024) * 1.2 / 2**30
    available = next(
        int(line.split()[1]) / 2**20
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemAvailable:")
    )
    return f"{max(1, min(math.ceil(wanted), int(available / 2)))}GB"


def build_index(conn: Any, definition: str, memory: str) -> tuple[float, list[str]]:
    """Create the index from ``definition`` in one build; (seconds, the server's notices)."""
    notices: list[str] = []

    def keep(diagnostic: Any) -> None:
        notices.append(diagnostic.message_primary or "")

    conn.add_notice_handler(keep)
    try:
        conn.execute("select set_config('maintenance_work_mem', %s, false)", (memory,))
        conn.execute("set max_parallel_maintenance_workers = 1")
        started = time.perf_counter()
        conn.execute(definition)
        took = time.perf_counter() - started
        conn.execute("reset maintenance_work_mem")
        conn.execute("reset max_parallel_maintenance_workers")
    finally:
        conn.remove_notice_handler(keep)
    return took, notices


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


@contextlib.contextmanager
def place(keep: Path | None, size: int) -> Iterator[Path]:
    """Where one size's databases live: DIR/size-N (kept), or a temporary directory."""
    if keep is None:
        with tempfile.TemporaryDirectory(prefix="pg-search-") as tmp:
            yield Path(tmp)
    else:
        where = keep / f"size-{size}"
        where.mkdir(parents=True, exist_ok=True)
        yield where


def label(size: int) -> str:
    return f"{size // 1_000_000}M" if size % 1_000_000 == 0 else f"{size // 1000}k"


def measure(size: int, args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """Table rows and notes for one size."""
    bulk = args.pg_fill == "bulk" or (args.pg_fill == "auto" and size >= BULK_FROM)
    rng = random.Random(f"{args.random_seed}/queries/{size}")
    with place(args.keep, size) as where:
        server = None
        url = args.url
        if url is None:
            import pgserver

            server = pgserver.get_server(where / "pgdata", cleanup_mode="stop")
            url = server.get_uri()
        filled_file = where / "fill.json"
        store = Store.open(where / "bench.db", Settings())
        conn = connect(url)
        try:
            reused = filled_file.exists()
            if reused:
                filled = json.loads(filled_file.read_text())
                log(
                    f"{label(size)}: reusing the databases filled {filled['date']} ({filled['code']}) in {where}"
                )
                migrate(conn)
            else:
                filled = fill_both(store, conn, size, bulk, args, where / "bench.db")
                filled_file.write_text(json.dumps(filled, indent=1))
            index = PgSearchIndex(conn, store.embedder)
            held = conn.execute("select count(*) from memory_vectors").fetchone()[0]
            if held != size:
                raise RuntimeError(f"PostgreSQL holds {held} vectors, not {size}")
            rows = ingest_rows(size, filled)
            loads = [os.getloadavg()[0]]
            if args.max_load is not None:
                loads[0], waited = wait_for_quiet(args.max_load, args.max_wait)
                if waited:
                    log(f"waited {waited:.0f} s for load <= {args.max_load}")
            for kind, make in KINDS.items():
                asked = [make(rng) for _ in range(args.queries)]
                ours = timed(lambda q: store.search.search(q, [NAMESPACE], limit=10), asked)
                theirs = timed(lambda q: index.search(q, [NAMESPACE], limit=10), asked)
                loads.append(os.getloadavg()[0])
                rows.append(
                    f"| {label(size)} | {kind} | {statistics.median(ours):.2f} / {p(ours, 99):.2f} ms |"
                    f" {statistics.median(theirs):.2f} / {p(theirs, 99):.2f} ms |"
                    f" {statistics.median(theirs) / statistics.median(ours):.2f}x |"
                )
                log(rows[-1])
            anon, file = rss_mb()
            filling = filled.get("fill_load")  # not in the fill.json of an older run
            notes = [
                f"{label(size)}: load average (1 min)"
                + (
                    f" {filling[0]:.2f}-{filling[1]:.2f} (mean {filling[2]:.2f}) while filling,"
                    if filling
                    else ""
                )
                + f" {min(loads):.2f}-{max(loads):.2f} while the queries were timed; this process's"
                f" peak RSS while filling {filled['peak_rss_mb'][0]:.0f} MB anonymous and"
                f" {filled['peak_rss_mb'][1]:.0f} MB file-backed (the SQLite file mapped), {anon:.0f} +"
                f" {file:.0f} MB after the queries; databases: SQLite {filled['sqlite_mb']:.0f} MB,"
                f" PostgreSQL {filled['pg_mb']:.0f} MB"
                + (f"; filled {filled['date']} by {filled['code']}, databases reused" if reused else "")
                + "."
            ]
            if filled.get("build_notices"):
                notes.append(f"{label(size)}: the HNSW build said: {'; '.join(filled['build_notices'])}.")
        finally:
            conn.close()
            store.close()
            if server is not None:
                server.cleanup()
    return rows, notes


def fill_both(
    store: Store, conn: Any, size: int, bulk: bool, args: argparse.Namespace, db: Path
) -> dict[str, Any]:
    """Fill both engines with ``size`` memories, then VACUUM (ANALYZE) PostgreSQL: the figures."""
    rng = random.Random(f"{args.random_seed}/texts/{size}")
    migrate(conn)
    index = PgSearchIndex(conn, store.embedder)
    filled: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "code": code_state(),
        "bulk": bulk,
    }
    definition = None
    if bulk:
        index.ensure_vectors()  # the table and its indexes, as the product creates them
        name, definition = hnsw_definition(conn)
        conn.execute(f'drop index "{name}"')
        log(f"{label(size)}: bulk load; HNSW index dropped, to be built after: {definition}")
    else:
        log(f"{label(size)}: row by row, HNSW index kept")
    peak = [0.0, 0.0]
    loads: list[float] = []
    filled["sqlite_seconds"], filled["pg_seconds"] = fill(
        store, index, size, rng, bulk=bulk, peak=peak, loads=loads
    )
    if definition is not None:
        memory = build_memory(size, int(store.embedder.dimension), args.build_memory)
        log(f"{label(size)}: building the HNSW index (maintenance_work_mem {memory})")
        filled["build_seconds"], filled["build_notices"] = build_index(conn, definition, memory)
        filled["build_memory"] = memory
        if hnsw_definition(conn) != (name, definition):
            raise RuntimeError(f"the rebuilt index differs: {hnsw_definition(conn)}")
        log(f"{label(size)}: HNSW index built in {filled['build_seconds']:.0f} s {filled['build_notices']}")
    started = time.perf_counter()
    conn.execute("vacuum (analyze)")
    filled["vacuum_seconds"] = time.perf_counter() - started
    log(f"{label(size)}: vacuum (analyze) {filled['vacuum_seconds']:.0f} s")
    filled["peak_rss_mb"] = peak
    loads.append(os.getloadavg()[0])
    filled["fill_load"] = [min(loads), max(loads), statistics.mean(loads)]
    filled["pg_mb"] = conn.execute("select pg_database_size(current_database())").fetchone()[0] / 2**20
    filled["sqlite_mb"] = sum(f.stat().st_size for f in db.parent.glob(db.name + "*")) / 2**20
    return filled


def ingest_rows(size: int, filled: dict[str, Any]) -> list[str]:
    sqlite_rate = size / filled["sqlite_seconds"]
    pg_rate = size / filled["pg_seconds"]
    if not filled["bulk"]:
        return [
            f"| {label(size)} | ingest, row by row (transactions of 1,000; HNSW index kept) |"
            f" {sqlite_rate:.0f}/s | {pg_rate:.0f}/s | {pg_rate / sqlite_rate:.2f}x |"
        ]
    both = size / (filled["pg_seconds"] + filled["build_seconds"])
    return [
        f"| {label(size)} | ingest, bulk load: rows without the HNSW index (transactions of 1,000,"
        f" PostgreSQL's pipelined) | {sqlite_rate:.0f}/s | {pg_rate:.0f}/s | {pg_rate / sqlite_rate:.2f}x |",
        f"| {label(size)} | HNSW index built after the load (maintenance_work_mem"
        f" {filled['build_memory']}, 1 parallel worker) | - | {filled['build_seconds']:.0f} s"
        f" (load and build: {both:.0f}/s) | {both / sqlite_rate:.2f}x (load and build) |",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated memory counts")
    parser.add_argument("--queries", type=int, default=200, help="timed searches per kind")
    parser.add_argument("--url", help="a PostgreSQL database of your own (empty), instead of pgserver")
    parser.add_argument(
        "--pg-fill",
        choices=("auto", "rows", "bulk"),
        default="auto",
        help=f"PostgreSQL fill: row by row with the HNSW index, or bulk load and build it after"
        f" (auto: bulk from {BULK_FROM:,} records)",
    )
    parser.add_argument(
        "--build-memory",
        default="auto",
        help="maintenance_work_mem for the HNSW build (auto: enough for the graph, at least 1GB)",
    )
    parser.add_argument("--keep", type=Path, help="keep (and reuse) each size's filled databases here")
    parser.add_argument("--max-load", type=float, help="wait for this 1-minute load before timing queries")
    parser.add_argument("--max-wait", type=float, default=600.0, help="at most this long (s) for --max-load")
    parser.add_argument("--random-seed", type=int, default=20241204)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    parser.add_argument(
        "--section",
        default=SECTION,
        help="the section of bench/RESULTS.md to write (another title keeps the default's figures)",
    )
    args = parser.parse_args()
    if args.keep is not None and args.url is not None:
        parser.error("--keep keeps pgserver's databases: not with --url")
    command = shlex.join(["python", "bench/pg_search.py", *sys.argv[1:]])
    if harness.CODE != harness.ROOT:  # the code measured is another tree's
        command = f"MC_BENCH_CODE={shlex.quote(str(harness.CODE))} {command}"
    started = time.monotonic()
    rows: list[str] = []
    notes: list[str] = []
    for size in (int(s) for s in args.sizes.split(",")):
        more_rows, more_notes = measure(size, args)
        rows += more_rows
        notes += more_notes
    log(f"all sizes in {(time.monotonic() - started) / 60:.1f} min")
    text = f"""{args.section}

Command: `{command}` (repository root). Date: {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}. Code: `{code_state()}`.
Machine: {machine_line()}.

One process, the same memories (bench/latency.py's mixed English and Chinese texts, one
namespace) in a SQLite store and in PostgreSQL 16 with pgvector (pgserver wheel, Unix socket,
its default settings);
each search at limit 10, the shipped settings; wall time, p50 / p99 over {args.queries} queries of each kind.
Ingest: SQLite through `store.memories.create`, PostgreSQL through `PgSearchIndex.add`, in
transactions of 1,000. Row by row: the HNSW index kept, each row inserted into its graph.
Bulk load (`--pg-fill`, the default from 1M): the HNSW index's definition read from
`pg_indexes`, the index dropped, the rows loaded (statements pipelined), the index created
again from that definition in one build. Then VACUUM (ANALYZE) on PostgreSQL.

| size | queries | SQLite p50 / p99 | PostgreSQL p50 / p99 | PostgreSQL / SQLite (p50) |
|---|---|---:|---:|---:|
{chr(10).join(rows)}

{chr(10).join(notes)}
"""
    print(text)
    if args.write:
        write_section(args.section, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
