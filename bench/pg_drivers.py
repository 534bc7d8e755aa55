"""psycopg 3 against asyncpg on this machine's PostgreSQL (issue #18: "use a mature async driver
(psycopg 3 with its pool, or asyncpg) and measure which one").

The same work through each driver, one connection, one statement at a time (as the store's
repositories send them): single-row inserts in one transaction, primary-key reads, and KNN
queries over 10k 1024-dimension vectors with an HNSW index (pgvector), in alternating rounds;
wall time per statement, medians of the rounds. PostgreSQL 16 with pgvector from the
``pgserver`` wheel (Unix socket), or ``--url``. asyncpg is not a dependency: install it
beside the project to run this (`pip install asyncpg`).

    python bench/pg_drivers.py --rounds 3 --write
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
import uuid
from pathlib import Path

import harness  # noqa: F401  (puts MC_BENCH_CODE's checkout first on sys.path)
from harness import code_state, load_average, machine_line
from results import write_section

SECTION = "## PostgreSQL drivers: psycopg 3 against asyncpg (issue #18)"
DIMENSION = 1024


def vector_text(rng: random.Random) -> str:
    return "[" + ",".join(str(rng.randint(-127, 127)) for _ in range(DIMENSION)) + "]"


def prepare(url: str, vectors: int, rng: random.Random) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("create extension if not exists vector")
        conn.execute("create table rows (id bigint primary key, body text not null)")
        conn.execute(f"create table vecs (id bigint primary key, v vector({DIMENSION}) not null)")
        with conn.cursor().copy("copy vecs (id, v) from stdin") as copy:
            for n in range(vectors):
                copy.write_row((n, vector_text(rng)))
        conn.execute("create index on vecs using hnsw (v vector_cosine_ops)")
        conn.execute("analyze")


def with_psycopg(url: str, n: int, queries: list[str], base: int) -> dict[str, float]:
    import psycopg

    out = {}
    with psycopg.connect(url, autocommit=True) as conn:
        started = time.perf_counter()
        with conn.transaction():
            for i in range(n):
                conn.execute("insert into rows (id, body) values (%s, %s)", (base + i, f"row {i}"))
        out["insert"] = (time.perf_counter() - started) / n * 1000
        started = time.perf_counter()
        for i in range(n):
            conn.execute("select body from rows where id = %s", (base + i,)).fetchone()
        out["select"] = (time.perf_counter() - started) / n * 1000
        started = time.perf_counter()
        for q in queries:
            conn.execute("select id from vecs order by v <=> %s::vector limit 10", (q,)).fetchall()
        out["knn"] = (time.perf_counter() - started) / len(queries) * 1000
    return out


async def with_asyncpg(url: str, n: int, queries: list[str], base: int) -> dict[str, float]:
    import asyncpg

    out = {}
    host = url.split("host=", 1)[1].split("&")[0] if "host=" in url else None
    conn = await asyncpg.connect(url.split("?")[0], host=host)
    try:
        started = time.perf_counter()
        async with conn.transaction():
            for i in range(n):
                await conn.execute("insert into rows (id, body) values ($1, $2)", base + i, f"row {i}")
        out["insert"] = (time.perf_counter() - started) / n * 1000
        started = time.perf_counter()
        for i in range(n):
            await conn.fetchrow("select body from rows where id = $1", base + i)
        out["select"] = (time.perf_counter() - started) / n * 1000
        started = time.perf_counter()
        for q in queries:
            await conn.fetch("select id from vecs order by v <=> $1::vector limit 10", q)
        out["knn"] = (time.perf_counter() - started) / len(queries) * 1000
    finally:
        await conn.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--statements", type=int, default=2000)
    parser.add_argument("--vectors", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--url", help="an empty PostgreSQL database of your own, with pgvector available")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()
    command = shlex.join(["python", "bench/pg_drivers.py", *sys.argv[1:]])
    rng = random.Random(20261206)
    load_start = load_average()[0]
    results: dict[str, list[dict[str, float]]] = {"psycopg": [], "asyncpg": []}
    with tempfile.TemporaryDirectory(prefix="mc-pgdrivers-") as tmp:
        server = None
        url = args.url
        if url is None:
            import pgserver

            server = pgserver.get_server(Path(tmp) / "pgdata", cleanup_mode="stop")
            import psycopg

            name = f"drivers_{uuid.uuid4().hex[:8]}"
            with psycopg.connect(server.get_uri(), autocommit=True) as admin:
                admin.execute(f'create database "{name}"')
            base, _, query = server.get_uri().partition("?")
            url = f"{base.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")
        try:
            prepare(url, args.vectors, rng)
            queries = [vector_text(rng) for _ in range(args.queries)]
            base_id = 0
            for round_ in range(args.rounds):
                for driver in ("psycopg", "asyncpg"):
                    if driver == "psycopg":
                        figures = with_psycopg(url, args.statements, queries, base_id)
                    else:
                        figures = asyncio.run(with_asyncpg(url, args.statements, queries, base_id))
                    base_id += args.statements
                    results[driver].append(figures)
                    print(f"round {round_ + 1} {driver}: {figures}", file=sys.stderr)
        finally:
            if server is not None:
                server.cleanup()

    def med(driver: str, key: str) -> float:
        return statistics.median(r[key] for r in results[driver])

    rows = [
        f"| {label} | {med('psycopg', key):.3f} ms | {med('asyncpg', key):.3f} ms |"
        f" {med('asyncpg', key) / med('psycopg', key):.2f}x |"
        for key, label in (
            ("insert", "single-row insert (in one transaction)"),
            ("select", "primary-key read"),
            ("knn", f"KNN, 10 of {args.vectors // 1000}k vectors, HNSW"),
        )
    ]
    section = f"""{SECTION}

Command: `{command}` (repository root). Date: {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}. Code: `{code_state()}`.
{machine_line()} 1-minute load average at the start: {load_start:.2f}, at the end: {load_average()[0]:.2f}.

One connection per driver, one statement at a time, {args.statements} inserts and reads and
{args.queries} KNN queries a round, {args.rounds} alternating rounds, medians; PostgreSQL 16 with
pgvector 0.6 (pgserver wheel, Unix socket) on the same two cores. psycopg 3 (sync, as the
store calls it) and asyncpg (async).

| statement | psycopg 3 | asyncpg | asyncpg / psycopg |
|---|---:|---:|---:|
{chr(10).join(rows)}
"""
    print(section)
    if args.write:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
