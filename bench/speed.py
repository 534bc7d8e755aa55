"""Every speed and scale figure of issues #9 and #16 in one run, and the summary table of aims.

Runs, one after the other (each against its own real daemon process, each writing its own
section of bench/RESULTS.md with ``--write``): bench/launcher.py, bench/scale.py,
bench/writes.py, bench/concurrency.py and bench/footprint.py; then writes the section
"Speed and scale: aims", one row per aim with the measured median and p99, whether it is
met, and the 1-minute load average of the machine during that measurement (it is shared).

    python bench/speed.py --write            # about 20 minutes
    python bench/speed.py --quick            # smaller sizes and shorter runs, to try it

``--max-load L --max-wait S`` make each benchmark wait (up to S seconds) for the 1-minute
load average to fall to L before it starts. ``MC_BENCH_CODE=DIR`` measures another checkout
(see bench/harness.py).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import sys
import time
from datetime import UTC, datetime

import concurrency
import footprint
import harness  # noqa: F401  (puts the measured checkout first on sys.path)
import launcher
import scale
import writes
from harness import code_state, machine_line
from results import write_section

SECTION = "## Speed and scale: aims"


def run_launcher(argv: list[str]) -> dict[str, tuple[float, float, float]]:
    """Run bench/launcher.py; its table rows by (interpreter, state): (p50, p95, load)."""
    buffer = io.StringIO()
    load = os.getloadavg()[0]
    cwd = os.getcwd()
    os.chdir(harness.CODE)  # its ``python -m daemon`` processes import from the working directory
    try:
        with contextlib.redirect_stdout(buffer):
            launcher.main(argv)
    finally:
        os.chdir(cwd)
    text = buffer.getvalue()
    print(text)
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| (\S+) \| daemon (up|down) \| ([\d.]+) \| ([\d.]+) \|", line)
        if m:
            rows[(m.group(1), m.group(2))] = (float(m.group(3)), float(m.group(4)), load)
    return rows


def verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def summary(launch: dict, args: argparse.Namespace, command: str, started: float) -> str:
    s, w, c, f = scale.FIGURES, writes.FIGURES, concurrency.FIGURES, footprint.FIGURES
    rows = ["| aim | measured: p50 / p99 (or as stated) | aim | met | load |", "|---|---|---|---|---|"]
    sizes = s["sizes"]
    small = 10_000 if 10_000 in sizes else sizes[0]
    large = sizes[-1]

    def op(name: str, size: int) -> tuple[float, float]:
        return s["ops"][name][size]

    load_s = f"{s['load'][0]:.1f}-{s['load'][1]:.1f}"
    for name, label in (
        ("search", "vocabulary queries"),
        ("typo_search", "misspelt queries (KNN)"),
        ("long_search", "long queries"),
    ):
        for size, aim in ((small, 10.0), (large, 25.0)):
            p50, p99 = op(name, size)
            # Issue #16: at 100k also p99 <= 60 ms for every query kind.
            tail = size >= 100_000
            rows.append(
                f"| hybrid search, {label}, {size // 1000}k in one namespace | {p50:.2f} / {p99:.2f} ms"
                f" | p50 <= {aim:g} ms{' and p99 <= 60 ms' if tail else ''} |"
                f" {verdict(p50 <= aim and (not tail or p99 <= 60))} | {load_s} |"
            )
    growth = ", ".join(f"{size // 1000}k {op('search', size)[0]:.1f}" for size in sizes)
    rows.append(
        f"| search cost as the namespace grows (p50 ms, vocabulary) | {growth} | report | - | {load_s} |"
    )
    # Issue #9 asked p50 <= 5 ms at 10k for both; issue #16: bootstrap stays <= 2 ms, a
    # brief <= 4 ms (the MemoryCloud reference takes ~10 ms on this machine).
    for name, label, aim in (("bootstrap", "bootstrap/context", 2.0), ("brief", "memory-brief", 4.0)):
        p50_small, p99_small = op(name, small)
        p50_large, p99_large = op(name, large)
        rows.append(
            f"| {label}, {small // 1000}k memories | {p50_small:.2f} / {p99_small:.2f} ms | p50 <= {aim:g} ms |"
            f" {verdict(p50_small <= aim)} | {load_s} |"
        )
        rows.append(
            f"| {label}, {large // 1000}k memories | {p50_large:.2f} / {p99_large:.2f} ms"
            f" ({p50_large / p50_small:.1f}x the {small // 1000}k p50) | <= 1.5x the {small // 1000}k p50 (and <= 7.5 ms) |"
            f" {verdict(p50_large <= 1.5 * p50_small and p50_large <= 7.5)} | {load_s} |"
        )
    load_w = f"{w['load'][0]:.1f}-{w['load'][1]:.1f}"
    for kind, label in (("delta", "memory-delta (with receipt)"), ("mem1", "mem1 add_messages (2 messages)")):
        k = w["kinds"].get(kind)
        if not k:
            continue
        rows.append(
            f"| {label}, one client | {k['single'][0]:.2f} / {k['single'][1]:.2f} ms | p50 <= 2 ms"
            f" (reference 4.5 ms) | {verdict(k['single'][0] <= 2)} | {load_w} |"
        )
        rows.append(
            f"| {label}, 8 concurrent clients | {k['rate']:.0f} per second (latency {k['loaded'][0]:.1f} /"
            f" {k['loaded'][1]:.1f} ms, {k['errors']} errors) | >= 1,000 per second (reference 120-216) |"
            f" {verdict(k['rate'] >= 1000)} | {load_w} |"
        )
    rows.append(
        f"| {large // 1000}k memories ingested over HTTP (8 writers) | {s['ingest_seconds']:.0f} s ({s['ingest_rate']:.0f} per"
        f" second), {s['errors']} errors | >= 1,000 per second (issue #9: <= 180 s) |"
        f" {verdict(s['ingest_rate'] >= 1000)} | {load_s} |"
    )
    load_c = f"{c['load'][0]:.1f}-{c['load'][1]:.1f}"
    for label in ("realistic", "saturation"):
        if label in c:
            r = c[label]
            rows.append(
                f"| 50 concurrent agents, mixed, {args.duration:g} s, {label} | {r['p50']:.1f} / {r['p99']:.1f} ms,"
                f" {r['n']} requests, {r['errors']} errors | no errors, p99 <= 100 ms |"
                f" {verdict(r['errors'] == 0 and r['p99'] <= 100)} | {load_c} |"
            )
    for (python, state), (p50, p95, load) in sorted(launch.items()):
        aim = launcher.TARGETS_MS[state]
        rows.append(
            f"| launcher, daemon {state}, `{python}`{' (a pyenv shim on PATH)' if launcher.is_shim(python) else ''}"
            f" | {p50:.0f} ms p50 / {p95:.0f} ms p95 | p50 <= {aim:.0f} ms |"
            f" {verdict(p50 <= aim)} | {load:.1f} |"
        )
    load_f = f"{f['load'][0]:.1f}-{f['load'][1]:.1f}"
    for label, r in f["rows"]:
        rows.append(
            f"| idle daemon, {label} | RSS {r['rss']:.0f} MB ({r['anon']:.0f} MB anonymous), CPU"
            f" {r['cpu']:.2%} of a core, {r['wakes']:.1f} wake-ups/s | RSS <= 120 MB, CPU near zero |"
            f" {verdict(r['rss'] <= 120 and r['cpu'] < 0.01)} | {load_f} |"
        )
    rows.append(
        f"| database size per 100k memories | {s['db_file_mb_per_100k']:.0f} MB file"
        f" (+ WAL, at most {s['max_wal_mb']:.0f} MB seen) | report | - | {load_s} |"
    )
    minutes = (time.time() - started) / 60
    return f"""{SECTION}

Command: `{command}` (repository root); it runs each benchmark below and writes its section.
Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {minutes:.0f} minutes. Code: `{code_state()}`.
Machine: {machine_line()}.
All figures over HTTP against a real daemon process on loopback; client and daemon share the
two cores. "load" is the machine's 1-minute load average at the start and end of that
benchmark (other work shares the machine; at a load above ~1 the figures are slower than the
machine can do). Details, method and profiles in the sections below.

{chr(10).join(rows)}

Peers: the issue's reference figures (the public AMP reference implementation on this
machine: bootstrap/context 5 ms at 1k deltas, 40 ms at 11k, linear; memory-delta 4.5 ms,
120-216 per second) are quoted, not re-measured: its server cannot be fetched here (no
network beyond the package registries). No other agent-memory server could run offline in
the same run: mem0 (`mem0ai`) and Letta need an LLM and an embedding model (a hosted API or
downloaded weights), Zep and MemOS need their servers and models. So the ratios are to the
quoted figures: memory-delta one client {w["kinds"].get("delta", {}).get("single", (float("nan"),))[0]:.2f} ms vs 4.5 ms
({4.5 / w["kinds"].get("delta", {}).get("single", (float("nan"),))[0]:.1f}x faster); 8 clients {w["kinds"].get("delta", {}).get("rate", float("nan")):.0f} vs 120-216 per second
({w["kinds"].get("delta", {}).get("rate", float("nan")) / 216:.1f}x the best); bootstrap/context at {small // 1000}k {op("bootstrap", small)[0]:.2f} ms vs
{5 + 3.5 * (small / 1000 - 1):.0f} ms for the reference (linear from 5 ms at 1k to 40 ms at 11k), {(5 + 3.5 * (small / 1000 - 1)) / op("bootstrap", small)[0]:.0f}x.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="small sizes and short runs")
    parser.add_argument("--max-load", type=float, default=1.5)
    parser.add_argument("--max-wait", type=float, default=0.0)
    parser.add_argument("--duration", type=float, default=60.0, help="concurrency run seconds")
    parser.add_argument(
        "--skip",
        default="",
        help="comma-separated: launcher,scale,writes,concurrency,footprint"
        " (their figures are then missing from the summary; for trying only)",
    )
    args = parser.parse_args(argv)
    command = shlex.join(["python", "bench/speed.py", *(sys.argv[1:] if argv is None else argv)])
    started = time.time()
    wait = ["--max-load", str(args.max_load), "--max-wait", str(args.max_wait)]
    out = ["--write"] if args.write else []
    skip = set(filter(None, args.skip.split(",")))
    if args.quick:
        args.duration = min(args.duration, 10.0)
    launch = {}
    if "launcher" not in skip:
        launch = run_launcher(out + (["--runs", "10", "--repeat", "1"] if args.quick else []))
    if "scale" not in skip:
        scale.main(
            out + wait + (["--sizes", "1000,5000", "--requests", "50", "--repeat", "1"] if args.quick else [])
        )
    if "writes" not in skip:
        writes.main(
            out
            + wait
            + (
                ["--seed", "2000", "--requests", "100", "--repeat", "1", "--duration", "5", "--settle", "1"]
                if args.quick
                else []
            )
        )
    if "concurrency" not in skip:
        concurrency.main(
            out
            + wait
            + ["--duration", str(args.duration)]
            + (["--seed", "2000", "--settle", "1"] if args.quick else [])
        )
    if "footprint" not in skip:
        footprint.main(
            out + wait + (["--idle", "10", "--seed", "2000", "--requests", "100"] if args.quick else [])
        )
    if skip:
        return 0
    text = summary(launch, args, command, started)
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
