"""Measured for issue #16 and not taken: sqlite-vec's chunk size for the vector table.

sqlite-vec keeps a partition's vectors in chunks of ``chunk_size`` (default 1024), and the
store's vector table (state/index_builds.py: int8[1024] plus a bit[576] coarse code,
partitioned by namespace) makes a whole chunk the moment a namespace gets its first vector:
a 1 MiB blob of int8 vectors and its coarse codes, written to the WAL at that COMMIT and
kept in the file however few records the namespace holds. The chunk size also sets how long
an insert walks a chunk's overflow pages and how many chunks a scan opens.

This script measures the trade without changing the product: for each chunk size, alternating
over ``--rounds``, one vec0 table as the store makes it (same columns and metric) on tmpfs,
filled with ``--vectors`` hashing vectors of bench/latency.py's texts in one partition (one
transaction), then

* insert: CPU-free wall time per vector of that fill;
* a new namespace: wall time of a transaction that writes a namespace's first vector, and
  the bytes the file grows by per such namespace (after a checkpoint);
* the coarse scan of the large partition (``coarse match ... and k = 32``, as state/search.py
  _knn runs it past EXACT_SCAN_MAX_CHUNKS), p50 and p95 over 100 queries;
* the exact int8 scan of the large partition (``k = 50``), p50 over 20 queries.

Taking a smaller chunk would also need state/search.py's switch to the coarse scan counted
in vectors (a chunk count means 4 x 1024 vectors today), and existing stores keep their
1024-vector chunks until their vectors are rebuilt.

    python bench/ideas/vector_chunk_size.py --sizes 1024,512,256 --rounds 2 --write
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness import code_state, machine_line  # noqa: E402
from latency import memory_text  # noqa: E402
from results import write_section  # noqa: E402

SECTION = "## Measured and not taken: sqlite-vec's chunk size (issue #16)"
NEW_NAMESPACES = 20


def vectors(count: int) -> list[tuple[bytes, bytes]]:
    """(int8 vector, coarse code) of ``count`` distinct texts, as the store writes them."""
    from state.embedders import HashingEmbedder, coarse_code, serialize

    embedder = HashingEmbedder(1024)
    rng = random.Random(3)
    out = []
    for _ in range(count):
        vector = embedder.embed(memory_text(rng))
        int8 = serialize(vector)
        out.append((int8, coarse_code(int8, vector.nonzero)))
    return out


def queries(count: int) -> list[tuple[bytes, bytes]]:
    """(int8 vector, query coarse code) of texts with a word no memory holds, as a misspelt
    query's vector reaches the scan."""
    from state.embedders import HashingEmbedder, coarse_code, serialize

    embedder = HashingEmbedder(1024)
    rng = random.Random(4)
    out = []
    for _ in range(count):
        int8 = serialize(embedder.embed(memory_text(rng) + " xqzt"))
        out.append((int8, coarse_code(int8, document=False)))
    return out


def one_run(
    chunk: int, total: int, pool: list[tuple[bytes, bytes]], asked: list[tuple[bytes, bytes]]
) -> dict:
    from state.db import connect

    directory = Path(
        tempfile.mkdtemp(prefix="mc-chunks-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    )
    try:
        path = directory / "vectors.db"
        conn = connect(path)
        option = f", chunk_size={chunk}" if chunk != 1024 else ""
        conn.execute(
            "create virtual table memory_vec using vec0(namespace text partition key,"
            f" embedding int8[1024] distance_metric=cosine, coarse bit[576]{option})"
        )
        insert = "insert into memory_vec (rowid, namespace, embedding, coarse) values (?, ?, vec_int8(?), vec_bit(?))"
        started = time.perf_counter()
        with conn:
            conn.execute("begin")
            for i in range(total):
                int8, code = pool[i % len(pool)]
                conn.execute(insert, (i + 1, "large", int8, code))
        per_insert = (time.perf_counter() - started) / total * 1e6
        conn.execute("pragma wal_checkpoint(truncate)")
        before = path.stat().st_size
        firsts = []
        for j in range(NEW_NAMESPACES):
            int8, code = pool[j]
            started = time.perf_counter()
            conn.execute("begin")
            conn.execute(insert, (total + 1 + j, f"small-{j}", int8, code))
            conn.execute("commit")
            firsts.append((time.perf_counter() - started) * 1000)
        conn.execute("pragma wal_checkpoint(truncate)")
        per_namespace = (path.stat().st_size - before) / NEW_NAMESPACES

        def timed(sql: str, params: list[tuple]) -> list[float]:
            out = []
            for p in params:
                started = time.perf_counter()
                conn.execute(sql, p).fetchall()
                out.append((time.perf_counter() - started) * 1000)
            return sorted(out)

        coarse = timed(
            "select rowid from memory_vec where coarse match vec_bit(?) and k = 32 and namespace = 'large'",
            [(code,) for _, code in asked],
        )
        exact = timed(
            "select rowid, distance from memory_vec where embedding match vec_int8(?) and k = 50"
            " and namespace = 'large'",
            [(int8,) for int8, _ in asked[:20]],
        )
        conn.close()
        return {
            "insert_us": per_insert,
            "first_ms": statistics.median(firsts),
            "namespace_mb": per_namespace / 2**20,
            "coarse_p50": statistics.median(coarse),
            "coarse_p95": coarse[int(len(coarse) * 0.95)],
            "exact_p50": statistics.median(exact),
        }
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1024,512,256", help="chunk sizes, comma-separated")
    parser.add_argument("--vectors", type=int, default=100_000, help="vectors in the large partition")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    started = datetime.now(UTC)
    pool, asked = vectors(4000), queries(100)
    runs: dict[int, list[dict]] = {size: [] for size in sizes}
    loads = []
    for _ in range(args.rounds):
        for size in sizes:
            runs[size].append(one_run(size, args.vectors, pool, asked))
            loads.append(os.getloadavg()[0])
            print(size, {k: round(v, 2) for k, v in runs[size][-1].items()}, file=sys.stderr)

    def med(size: int, key: str) -> float:
        return statistics.median(run[key] for run in runs[size])

    rows = [
        "| chunk size | insert, us a vector | a namespace's first vector, ms | file per namespace, MiB"
        f" | coarse scan at {args.vectors // 1000}k, p50 / p95 ms | exact scan at {args.vectors // 1000}k, p50 ms |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for size in sizes:
        rows.append(
            f"| {size} | {med(size, 'insert_us'):.1f} | {med(size, 'first_ms'):.2f} |"
            f" {med(size, 'namespace_mb'):.3f} | {med(size, 'coarse_p50'):.2f} / {med(size, 'coarse_p95'):.2f} |"
            f" {med(size, 'exact_p50'):.0f} |"
        )
    command = "python bench/ideas/vector_chunk_size.py " + shlex.join(
        argv if argv is not None else sys.argv[1:]
    )
    text = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command.strip()}` (repository root). Date: {started:%Y-%m-%d %H:%M} UTC."
            f" Code: `{code_state()}`.",
            f"Machine: {machine_line()}. 1-minute load average: {min(loads):.2f}-{max(loads):.2f}.",
            "",
            "The store's vector table (int8[1024] and a bit[576] coarse code, partitioned by"
            " namespace) at each chunk size, medians of the rounds (runs alternate; this"
            " script's docstring says what each column times):",
            "",
            *rows,
        ]
    )
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
