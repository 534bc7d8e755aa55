"""Before and after a product change: the same benchmark against two commits, alternating.

Each commit is exported (``git archive REV``) to a temporary directory and measured with
``MC_BENCH_CODE`` pointing there (bench/harness.py: the daemon process and the client's
``state`` imports come from that tree; the benchmark scripts are this checkout's). The runs
alternate (before, after, before, after, ...) so that the machine's changing load falls on
both alike. The Markdown tables each run prints are kept, and with ``--write`` they go to
the section named by ``--title``.

    python bench/before_after.py --before 3710bcd --after 6943744 --rounds 2 \\
        --title "mem1 add_messages: plain FTS deletes for the session summary" \\
        -- bench/writes.py --kinds mem1 --seed 5000
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tarfile
import tempfile
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

from results import write_section

ROOT = Path(__file__).resolve().parent.parent


def export(rev: str, into: Path) -> str:
    """The commit's tree in ``into``; returns its short hash."""
    short = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    data = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(data)) as archive:
        archive.extractall(into, filter="data")
    (into / ".bench-rev").write_text(f"{short} (clean export of the commit)\n", encoding="utf-8")
    return short


def tables(output: str) -> str:
    """The Markdown table lines of a benchmark's printed section."""
    return "\n".join(line for line in output.splitlines() if line.startswith("|"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        print(
            "usage: before_after.py --before REV --after REV [--rounds N] [--title T] [--write]"
            " -- bench/SCRIPT.py [its arguments]",
            file=sys.stderr,
        )
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", default="HEAD")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--title", required=True, help="what changed (the section's name)")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv[:split])
    bench = argv[split + 1 :]
    command = shlex.join(["python", "bench/before_after.py", *argv])
    outputs: dict[str, list[tuple[float, str]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory(prefix="mc-before-after-") as tmp:
        trees = {}
        for label in ("before", "after"):
            tree = Path(tmp) / label
            tree.mkdir()
            trees[label] = (tree, export(getattr(args, label), tree))
        for round_index in range(args.rounds):
            for label in ("before", "after"):
                tree, short = trees[label]
                load = os.getloadavg()[0]
                print(f"round {round_index + 1} {label} ({short}), load {load:.2f}", file=sys.stderr)
                run = subprocess.run(
                    [sys.executable, *bench],
                    cwd=ROOT,
                    text=True,
                    capture_output=True,
                    env={**os.environ, "MC_BENCH_CODE": str(tree)},
                )
                if run.returncode != 0:
                    print(run.stderr[-3000:], file=sys.stderr)
                    raise SystemExit(f"{bench[0]} failed on {label}")
                outputs[label].append((load, tables(run.stdout)))
                print(tables(run.stdout), file=sys.stderr)
    parts = [
        f"## Before and after: {args.title}",
        "",
        f"Command: `{command}` (repository root). Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.",
        f"Before: `{trees['before'][1]}`; after: `{trees['after'][1]}`. Runs alternate"
        f" (before, after, ...) so the shared machine's load falls on both; 1-minute load"
        f" average at the start of each run in brackets.",
        "",
    ]
    for round_index in range(args.rounds):
        for label in ("before", "after"):
            load, text = outputs[label][round_index]
            parts += [f"{label.capitalize()}, round {round_index + 1} (load {load:.2f}):", "", text, ""]
    text = "\n".join(parts)
    print(text)
    if args.write:
        write_section(f"## Before and after: {args.title}", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
