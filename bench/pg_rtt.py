"""A team server whose PostgreSQL is a network round trip away (issue #18: a managed database
is not on the daemon's machine): one cloud daemon process, 50 agents, the database reached
directly (Unix socket) and through bench/delay_proxy.py, which delays every byte each way.

Half the agents alternate a memory delta and a search, the other half only search, with no
pause (bench/pg_team.py's agents). A statement the daemon runs on its event loop holds the
whole process for its round trip; what this measures is how much of a process's capacity a
round trip takes away, for writes and for the searches beside them. ``select 1``'s median
round trip through the proxy is measured and printed with the figures.

    python bench/pg_rtt.py --delay-ms 0.5 --seconds 20 --rounds 2 --write
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import code_state, load_average, machine_line
from pg_team import Load, run_load
from results import write_section

SECTION = "## Team server on PostgreSQL a network round trip away (issue #18)"
HERE = Path(__file__).resolve().parent


def server_socket(uri: str) -> Path:
    """pgserver's Unix socket, from its URI (``...?host=/dir``)."""
    directory = Path(uri.split("host=", 1)[1].split("&", 1)[0])
    return next(p for p in directory.glob(".s.PGSQL.*") if not p.name.endswith(".lock"))


def start_proxy(socket_path: Path, delay_ms: float) -> tuple[subprocess.Popen[str], int]:
    proxy = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "delay_proxy.py"),
            "--to-unix",
            str(socket_path),
            "--delay-ms",
            str(delay_ms),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proxy.stdout is not None
    return proxy, int(proxy.stdout.readline())


def via_proxy(url: str, port: int) -> str:
    """The database of ``url`` (pgserver's, over its socket) reached at 127.0.0.1:``port``."""
    database = url.split("?", 1)[0].rsplit("/", 1)[1]
    return f"postgresql://postgres@127.0.0.1:{port}/{database}?sslmode=disable"


def round_trip_ms(url: str, count: int = 300) -> float:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        samples = []
        for _ in range(count):
            started = time.perf_counter()
            conn.execute("select 1").fetchone()
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delay-ms", type=float, default=0.5, help="the proxy's delay each way")
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=2, help="direct and delayed runs, alternating")
    parser.add_argument("--random-seed", type=int, default=20261206)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()
    command = shlex.join(["python", "bench/pg_rtt.py", *sys.argv[1:]])
    load_start = load_average()[0]
    runs: dict[str, list[Load]] = {"direct": [], "delayed": []}
    trips: dict[str, list[float]] = {"direct": [], "delayed": []}

    def ops_of(agent: int) -> tuple[str, ...]:
        return ("write", "search") if agent % 2 == 0 else ("search",)

    with tempfile.TemporaryDirectory(prefix="mc-pgrtt-") as name:
        tmp = Path(name)
        import pgserver

        server = pgserver.get_server(tmp / "pgdata", cleanup_mode="stop")
        admin_url = server.get_uri()
        proxy, port = start_proxy(server_socket(admin_url), args.delay_ms)
        try:
            for round_ in range(args.rounds):
                for how in ("direct", "delayed"):
                    mapped = (lambda url: url) if how == "direct" else (lambda url: via_proxy(url, port))
                    trips[how].append(round_trip_ms(mapped(admin_url)))
                    load = run_load(
                        tmp,
                        admin_url,
                        1,
                        args.agents,
                        args.seconds,
                        args.random_seed + round_,
                        mapped,
                        ops_of,
                    )
                    runs[how].append(load)
                    print(
                        f"round {round_ + 1}, {how}: {load.rate('write'):.0f} writes/s,"
                        f" {load.rate('search'):.0f} searches/s, write p50 {load.pct('write', 0.5):.1f},"
                        f" search p50 {load.pct('search', 0.5):.1f} ms, errors {len(load.errors)}",
                        file=sys.stderr,
                    )
                    for error in load.errors[:3]:
                        print(f"  error: {error}", file=sys.stderr)
        finally:
            proxy.kill()
            server.cleanup()
    load_end = load_average()[0]

    def med(how: str, value: Any) -> float:
        return statistics.median(value(load) for load in runs[how])

    rows = []
    for how, label in (("direct", "Unix socket"), ("delayed", f"TCP, {args.delay_ms:g} ms each way")):
        rows.append(
            f"| {label} | {statistics.median(trips[how]):.2f}"
            f" | {med(how, lambda x: x.rate('write')):.0f}"
            f" | {med(how, lambda x: x.pct('write', 0.5)):.1f} / {med(how, lambda x: x.pct('write', 0.99)):.1f}"
            f" | {med(how, lambda x: x.rate('search')):.0f}"
            f" | {med(how, lambda x: x.pct('search', 0.5)):.1f} / {med(how, lambda x: x.pct('search', 0.99)):.1f}"
            f" | {sum(len(x.errors) for x in runs[how])} |"
        )

    def kept(op: str) -> float:
        return med("delayed", lambda x: x.rate(op)) / med("direct", lambda x: x.rate(op))

    section = f"""{SECTION}

Command: `{command}` (repository root). Date: {time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}. Code: `{code_state()}`.
{machine_line()} 1-minute load average at the start: {load_start:.2f}, at the end: {load_end:.2f}.

One cloud daemon process on PostgreSQL 16 with pgvector (pgserver wheel), reached over its
Unix socket or through bench/delay_proxy.py ({args.delay_ms:g} ms each way; `select 1` round
trip in the table). {args.agents} agents with no pause: half alternate a memory delta and a
search, half only search; {args.seconds:.0f} s a run, each on a new database, {args.rounds}
rounds alternating, medians of the rounds.

| database | select 1 ms | writes per second | write p50 / p99 ms | searches per second | search p50 / p99 ms | errors |
|---|---:|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

Kept with the round trip: writes **{kept("write"):.2f}x**, searches **{kept("search"):.2f}x** of the direct rates.
"""
    print(section)
    if args.write:
        write_section(SECTION, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
