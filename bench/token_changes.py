"""Which texts of the retrieval datasets a tokenizer change tokenizes differently.

A change to state/tokenize.py that is meant for some scripts only (tokenizer 6: Hebrew,
Arabic-script, Indic, Cyrillic apostrophes, traditional Chinese) should leave the recall
figures of bench/RESULTS.md as they are; if no text of a dataset gets other index tokens or
other query terms, those figures stand without measuring them again. This compares every
string of each dataset (bench/data/conversations/*.json, MADial-Bench's JSON lines) under
``--old`` (its ``state`` package, from ``git archive``, in a subprocess) and this checkout:
``index_text`` and ``query_terms``.

    python bench/token_changes.py --old 92bfba4 --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path

from results import write_section

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Search: which retrieval texts tokenizer {new} tokenizes differently from {old}"
SHOWN = 5  # changed strings quoted per dataset, so a reader sees whether they are stored texts
MADIAL = Path("/work/shared/eval/data/madial-bench")

# Run in the subprocess, with the old tree first on sys.path: one JSON line per text, the
# sha256 of its index tokens and of its query terms.
OLD_SIDE = """
import hashlib, json, sys
from state import tokenize
from state.tokenize import index_text, query_terms
print(getattr(tokenize, "TOKENIZER_VERSION", 1))  # 1 had no number
for line in sys.stdin:
    text = json.loads(line)
    print(json.dumps([hashlib.sha256(index_text(text).encode()).hexdigest(),
                      hashlib.sha256(" ".join(query_terms(text)).encode()).hexdigest()]))
"""


def strings(value: object) -> Iterator[str]:
    """Every string in a JSON value, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def datasets() -> dict[str, list[str]]:
    """Each dataset's strings, by its name."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "bench" / "data" / "conversations").glob("*.json")):
        found[path.stem] = list(strings(json.loads(path.read_text(encoding="utf-8"))))
    for path in sorted(MADIAL.glob("*/*.json")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        found[f"madial-{path.stem}"] = [s for line in lines for s in strings(line)]
    return found


def digests(texts: list[str]) -> list[list[str]]:
    from state.tokenize import index_text, query_terms

    return [
        [
            hashlib.sha256(index_text(text).encode()).hexdigest(),
            hashlib.sha256(" ".join(query_terms(text)).encode()).hexdigest(),
        ]
        for text in texts
    ]


def old_digests(rev: str, texts: list[str]) -> tuple[str, list[list[str]]]:
    """(the old tokenizer's version, its digests of ``texts``), from ``rev``'s state package."""
    data = subprocess.run(["git", "archive", rev, "state"], cwd=ROOT, check=True, capture_output=True).stdout
    with tempfile.TemporaryDirectory(prefix="mc-token-changes-") as tmp:
        with tarfile.open(fileobj=BytesIO(data)) as archive:
            archive.extractall(tmp, filter="data")
        done = subprocess.run(
            [sys.executable, "-c", OLD_SIDE],
            input="".join(json.dumps(t) + "\n" for t in texts),
            capture_output=True,
            text=True,
            check=True,
            cwd=tmp,  # ``-c`` puts the working directory first on sys.path: the old tree
            env={**os.environ, "PYTHONPATH": tmp},
        )
    version, *rows = done.stdout.splitlines()
    return version, [json.loads(row) for row in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="the commit before the tokenizer change")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from state.tokenize import TOKENIZER_VERSION

    rows = ["| dataset | texts | other index tokens | other query terms |", "|---|---:|---:|---:|"]
    changed = 0
    old_version = "?"
    quoted: list[str] = []
    for name, texts in datasets().items():
        old_version, before = old_digests(args.old, texts)
        after = digests(texts)
        differ = [t for t, b, a in zip(texts, before, after, strict=True) if b != a]
        index = sum(b[0] != a[0] for b, a in zip(before, after, strict=True))
        query = sum(b[1] != a[1] for b, a in zip(before, after, strict=True))
        changed += index + query
        rows.append(f"| {name} | {len(texts)} | {index} | {query} |")
        quoted += [f"- {name}: {json.dumps(t[:100], ensure_ascii=False)}" for t in differ[:SHOWN]]
    new_rev = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    command = "python bench/token_changes.py " + " ".join(argv if argv is not None else sys.argv[1:])
    heading = SECTION.format(new=TOKENIZER_VERSION, old=old_version)
    text = "\n".join(
        [
            heading,
            "",
            f"Command: `{command.strip()}` (repository root). Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC."
            f" Old: `{args.old}` (tokenizer {old_version}); new: `{new_rev}` (tokenizer {TOKENIZER_VERSION}).",
            "",
            "Every string of each retrieval dataset, tokenized by both (`index_text`, `query_terms`):",
            "",
            *rows,
            "",
            "No text tokenizes differently: the recall figures measured before stand."
            if changed == 0
            else "Some texts tokenize differently (the first of each dataset below): unless none of"
            " them is a stored text or a question, measure the recall figures again.",
            "",
            *quoted,
            *([""] if quoted else []),
        ]
    )
    print(text)
    if args.write:
        write_section(heading, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
