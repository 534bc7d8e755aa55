"""Request validation per request, before and after the bodies became pydantic models
(issue #17): CPU microseconds to validate a body and name its ignored fields, as the request
wrapper does (daemon/endpoints.py), for the bodies the busiest endpoints get.

The same script runs in two checkouts, the old one in a git worktree of ``--before`` (whose
endpoints still have the hand-made RequestSchema), interleaved round by round so that both
see the same machine load; medians of ``--rounds`` rounds.

    git worktree add /tmp/before <commit>
    python bench/validation.py --before-tree /tmp/before --write
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SECTION = "## Before and after: request validation as pydantic models"

# (method, path, body): valid bodies as clients send them, one with an unknown field.
BODIES = [
    (
        "POST",
        "/api/agent/memory-delta",
        {
            "summary": "Releases go out on Fridays",
            "importance": 4,
            "retrieval_triggers": ["release", "friday"],
            "detail_payload": {"ticket": "OPS-12"},
        },
    ),
    (
        "POST",
        "/api/agent/bootstrap/context",
        {
            "runtime": "codex",
            "task": "fix the release notes",
            "max_items": 8,
            "environment": {"cwd": "/repo"},
        },
    ),
    ("POST", "/api/agent/memory-brief", {"task": "ship the release", "max_items": 8}),
    (
        "POST",
        "/add_messages/",
        {
            "user_id": "u1",
            "scope_id": "s1",
            "session_id": "sess",
            "messages": [{"role": "user", "content": "hello"}],
        },
    ),
    ("POST", "/search_memory/", {"query": "release day", "num": 10, "user_id": "u1", "typo": 1}),
    (
        "POST",
        "/api/memories",
        {
            "title": "Ops Handbook",
            "summary": "How we ship",
            "dreams_markdown": "- calm releases",
            "tags": ["ops"],
        },
    ),
]


def measure(repeats: int) -> dict[str, float]:
    """CPU microseconds per body, in this checkout (run as a child process)."""
    sys.path.insert(0, str(Path.cwd()))
    from daemon.api import all_endpoints

    endpoints = {(e.method, e.path): e for e in all_endpoints()}
    out: dict[str, float] = {}
    for method, path, body in BODIES:
        schema = endpoints[(method, path)].request
        parse = getattr(schema, "parse_body", None) or schema.parse  # after / before
        parse(body), schema.ignored_fields(body)  # warm (pydantic builds lazily)
        start = time.process_time()
        for _ in range(repeats):
            parse(body)
            schema.ignored_fields(body)
        out[path] = (time.process_time() - start) / repeats * 1e6
    return out


def run_tree(tree: Path, repeats: int) -> dict[str, float]:
    answer = subprocess.run(
        [sys.executable, str(HERE / "validation.py"), "--child", str(repeats)],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(answer.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before-tree", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=3000)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return
    if args.before_tree is None:
        parser.error("--before-tree is required")
    after_tree = HERE.parent
    rounds: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for _ in range(args.rounds):
        rounds["before"].append(run_tree(args.before_tree, args.repeats))
        rounds["after"].append(run_tree(after_tree, args.repeats))
    rows = []
    for _, path, _ in BODIES:
        before = statistics.median(r[path] for r in rounds["before"])
        after = statistics.median(r[path] for r in rounds["after"])
        rows.append(f"| `{path}` | {before:.1f} | {after:.1f} | {after / before:.2f} |")
    total_before = statistics.median(sum(r.values()) for r in rounds["before"])
    total_after = statistics.median(sum(r.values()) for r in rounds["after"])
    rows.append(f"| all six | {total_before:.1f} | {total_after:.1f} | {total_after / total_before:.2f} |")
    table = "\n".join(["| body | before µs CPU | after µs CPU | after/before |", "|---|---|---|---|", *rows])
    print(table)
    if args.write:
        sys.path.insert(0, str(HERE))
        from harness import machine_line
        from results import write_section

        write_section(
            SECTION,
            f"{SECTION}\n\nValidating a body and naming its ignored fields"
            f" (daemon/endpoints.py's per-request work), medians of {args.rounds}"
            f" interleaved rounds of {args.repeats} in each checkout;"
            f" `python bench/validation.py --before-tree TREE --write`.\n"
            f"{machine_line()}\n\n{table}\n",
        )


if __name__ == "__main__":
    main()
