"""What the reply lift (the setting reply_lift, state/search.py ANSWER_SHARE) costs a search, in process.

A store of conversation turns (a dataset's conversations copied until it holds ``--turns``
turns, one namespace per copy, every turn in its session as bench/retrieval_turns.py stores
them) is searched with the dataset's questions, each in its own conversation's namespace,
with the lift on and off in alternating rounds on the same store: CPU time per search,
median of the rounds, and the ratio. With the lift, each search reads its 20 best matches
once more and probes the session of each that asks something.

    python bench/answer_lift_cost.py --turns 10000 --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401  (puts MC_BENCH_CODE's checkout first on sys.path)
from retrieval_turns import DEFAULT_DATA, memory_text
from turns_dataset import load

from state.config import Settings
from state.memories import NewMemory
from state.store import Store


def fill(store: Store, dataset, turns: int) -> list[tuple[str, str]]:
    """Copies of the dataset's conversations until ``turns`` turns are stored; the
    (namespace, question) pairs to search."""
    written, copy, queries = 0, 0, []
    while written < turns:
        with store.transaction():
            for conversation in dataset.conversations:
                namespace = f"conv/{copy}/{conversation.id}"
                for turn in conversation.turns:
                    store.memories.create(
                        NewMemory(
                            namespace=namespace,
                            kind="message",
                            content=memory_text(turn),
                            source="bench",
                            provenance={"session_id": turn.session},
                        )
                    )
                    written += 1
                queries += [
                    (namespace, q.question) for q in dataset.questions if q.conversation == conversation.id
                ]
        copy += 1
    return queries


def cpu_per_search(store: Store, queries: list[tuple[str, str]]) -> float:
    """Milliseconds of CPU per search over every query once."""
    started = time.process_time()
    for namespace, question in queries:
        store.search.search(question, [namespace], limit=10)
    return (time.process_time() - started) * 1000 / len(queries)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    dataset = load(args.data)
    shipped = Settings().reply_lift
    with tempfile.TemporaryDirectory(prefix="lift-cost-") as tmp:
        store = Store.open(Path(tmp) / "bench.db", Settings())
        try:
            queries = fill(store, dataset, args.turns)
            print(f"{args.turns} turns or more stored; {len(queries)} questions a round", file=sys.stderr)
            cpu_per_search(store, queries)  # warm the page cache and the term counts
            on: list[float] = []
            off: list[float] = []
            for _ in range(args.rounds):
                for share, figures in ((shipped, on), (0.0, off)):
                    store.search.reply_lift = share
                    figures.append(cpu_per_search(store, queries))
        finally:
            store.close()
    with_lift, without = statistics.median(on), statistics.median(off)
    print("| search, in process | CPU per search, median of rounds |")
    print("|---|---:|")
    print(f"| without the reply lift (reply_lift 0) | {without:.3f} ms |")
    print(f"| with it (reply_lift {shipped}) | {with_lift:.3f} ms ({with_lift / without:.2f}x) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
