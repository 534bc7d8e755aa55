"""bench/RESULTS.md: each benchmark owns one ``## `` section and replaces only that."""

from __future__ import annotations

import os
from pathlib import Path

RESULTS_PATH = Path(__file__).resolve().parent / "RESULTS.md"
TOP_HEADING = "# Benchmark results"


def replace_section(document: str, heading: str, section: str) -> str:
    """Replace the section starting at ``heading`` (up to the next '## ') or append it."""
    lines = document.splitlines(keepends=True)
    block = section.rstrip("\n") + "\n"
    start = next((i for i, line in enumerate(lines) if line.rstrip() == heading), None)
    if start is None:
        body = document.rstrip("\n")
        return f"{body}\n\n{block}" if body else block
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    tail = "".join(lines[end:])
    return "".join(lines[:start]) + block + ("\n" + tail if tail else "")


def write_section(heading: str, section: str, path: Path = RESULTS_PATH) -> None:
    """Atomically rewrite RESULTS.md with our section replaced."""
    document = path.read_text(encoding="utf-8") if path.exists() else f"{TOP_HEADING}\n"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(replace_section(document, heading, section), encoding="utf-8")
    os.replace(tmp, path)
