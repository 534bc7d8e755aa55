"""Long queries on large stores: what ranking only a query's rarest terms costs and gives up
(state/search.py MAX_BOUNDED_TERMS).

A query of many terms (a pasted paragraph, a brief's task with its context, a dialogue)
costs BM25 in proportion to its terms. On a store large enough for the bounded set, only the
query's ``MAX_BOUNDED_TERMS`` rarest terms are ranked by. Two parts, each comparing the cut
against no cut (and other cuts) in the same run:

1. **Speed.** A store of ``--memories`` memory deltas in one workspace (bench/profile_speed.py's
   store, bench/latency.py's texts), in process. Query kinds: a 200-word paragraph of the
   store's vocabulary, a 30-word task, a long Chinese query. Per kind and cut, the p50 and
   p99 of the whole search (``SearchIndex.search``, 10 hits), cuts alternating query by query.
2. **Quality.** MADial-Bench English (``--data``): each user's memories in their namespace
   with the turns of bench/data/conversations/ (~2,900 English dialogue turns, none about
   those users) added to it as distractors, so that the dialogues' long queries take the
   bounded path. ``full`` (every line before the recall turn) and ``last2`` queries; MRR@10,
   hit@10 and R@2000c per cut, on the even dialogues (where a cut is chosen) and the odd ones
   (held out).

    python bench/long_queries.py --write
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import profile_speed
import retrieval_madial as madial
from harness import Dist, code_state, machine_line
from latency import EN_COMPONENT, EN_PEOPLE, EN_TECH, ZH_COMPONENT, ZH_PROBLEM, ZH_REASON
from results import write_section

import state.search as search_module
from state.config import Settings
from state.memories import NewMemory
from state.store import Store

SECTION = "## Search: long queries on large stores (issue #16)"
CONVERSATIONS = Path(__file__).resolve().parent / "data" / "conversations"
NO_CUT = 10_000  # more distinct terms than any query has
CUTS = (12, 16, 24, 32, 48, NO_CUT)


def cut_label(cut: int) -> str:
    return "no cut" if cut == NO_CUT else f"{cut} terms"


@contextmanager
def cut_at(cut: int) -> Iterator[None]:
    saved = search_module.MAX_BOUNDED_TERMS
    search_module.MAX_BOUNDED_TERMS = cut
    try:
        yield
    finally:
        search_module.MAX_BOUNDED_TERMS = saved


# -- speed ---------------------------------------------------------------------------------


def query_kinds(rng: random.Random) -> dict[str, list[str]]:
    words = [*EN_TECH, *EN_COMPONENT, *EN_PEOPLE, "the", "because", "when", "still", "upgraded"]
    return {
        "paragraph, 200 words": [" ".join(rng.choice(words) for _ in range(200)) for _ in range(60)],
        "task, 30 words": [" ".join(rng.choice(words) for _ in range(30)) for _ in range(60)],
        "Chinese, ~60 characters": [
            "".join(rng.choice(ZH_COMPONENT + ZH_PROBLEM + ZH_REASON) for _ in range(8)) for _ in range(60)
        ],
    }


def speed(memories: int, cuts: tuple[int, ...]) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="mc-long-queries-") as tmp:
        store, identity = profile_speed.build_store(Path(tmp), memories)
        try:
            workspace = identity["workspace_id"]
            rows = [
                "| query | distinct terms (median) | cut | search p50 ms | p99 ms |",
                "|---|---:|---|---:|---:|",
            ]
            for kind, queries in query_kinds(random.Random(7)).items():
                terms = statistics.median(len(set(store.search._bm25_terms(q))) for q in queries)
                samples: dict[int, list[float]] = {cut: [] for cut in cuts}
                for _round in range(2):  # the first warms the caches and is not kept
                    for cut in cuts:
                        samples[cut].clear()
                    for query in queries:
                        for cut in cuts:
                            with cut_at(cut):
                                started = time.perf_counter()
                                store.search.search(query, [workspace], limit=10)
                                samples[cut].append((time.perf_counter() - started) * 1000)
                for cut in cuts:
                    dist = Dist.of(samples[cut])
                    rows.append(
                        f"| {kind} | {terms:g} | {cut_label(cut)} | {dist.p50:.2f} | {dist.p99:.2f} |"
                    )
                print(rows[-1], file=sys.stderr)
            return rows
        finally:
            store.close()


# -- quality -------------------------------------------------------------------------------


def distractors() -> list[str]:
    texts = []
    for path in sorted(CONVERSATIONS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for conv in data["conversations"]:
            for session in conv["sessions"]:
                texts += [f"{turn['speaker']}: {turn['text']}" for turn in session["turns"]]
    return texts


def quality_bench(tmp: Path, data: Path) -> madial.Bench:
    memories = madial.load_memories(data, "en")
    store = Store.open(tmp / "bench.db", Settings())
    ids = madial.ingest(store, memories)
    lengths = {m.madial_id: len(m.text) for m in memories}
    filler = distractors()
    with store.transaction():
        for namespace in sorted({m.namespace for m in memories}):
            for number, text in enumerate(filler):
                record = store.memories.create(
                    NewMemory(namespace=namespace, kind="event", content=text, source="bench", title="")
                )
                ids[record["id"]] = f"filler/{namespace}/{number}"
                lengths[ids[record["id"]]] = len(text)
    return madial.Bench(store, ids, lengths)


def quality(data: Path, cuts: tuple[int, ...]) -> list[str]:
    rows = [
        "| query | cut | MRR@10 even | MRR@10 odd | hit@10 even | hit@10 odd | R@2000c even | R@2000c odd |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory(prefix="mc-long-queries-q-") as tmp:
        bench = quality_bench(Path(tmp), data)
        try:
            records = bench.store.conn.execute("select count(*) from memory_records").fetchone()[0]
            for variant in madial.SUMMARY_VARIANTS:
                queries = madial.load_queries(data, "en", variant)
                for cut in cuts:
                    with cut_at(cut):
                        scores = madial.evaluate(bench, queries, madial.Config.shipped())
                    cells = [
                        f"{scores[split].mean(metric):.3f}"
                        for metric in ("MRR@10", "hit@10", "R@2000c")
                        for split in ("even", "odd")
                    ]
                    rows.append(f"| {variant} | {cut_label(cut)} | {' | '.join(cells)} |")
                    print(rows[-1], file=sys.stderr)
        finally:
            bench.store.close()
    rows.append("")
    rows.append(f"({records:,} records in the store, {records // 2:,} in each of the two users' namespaces.)")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000, help="the speed part's store size")
    parser.add_argument("--data", type=Path, default=madial.DEFAULT_DATA, help="MADial-Bench's directory")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    started = datetime.now(UTC)
    shipped = search_module.MAX_BOUNDED_TERMS
    quality_rows = quality(args.data, CUTS)
    speed_rows = [] if args.skip_speed else speed(args.memories, (12, 16, shipped, 32, NO_CUT))
    command = "python bench/long_queries.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    text = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command.strip()}` (repository root). Date: {started:%Y-%m-%d %H:%M} UTC."
            f" Code: `{code_state()}`.",
            f"Machine: {machine_line()}.",
            "",
            f"Shipped: a bounded set is ranked by the query's {shipped} rarest terms"
            " (state/search.py MAX_BOUNDED_TERMS); this script's docstring says what is measured.",
            "",
            *(
                [
                    f"Speed, in process, {args.memories:,} memories in one workspace (search with"
                    " 10 hits; cuts alternate query by query, 60 queries each, after a warm-up round):",
                    "",
                    *speed_rows,
                    "",
                ]
                if speed_rows
                else []
            ),
            "Quality, MADial-Bench English with distractors (the shipped search otherwise;"
            " even dialogues to choose on, odd held out):",
            "",
            *quality_rows,
            "",
        ]
    )
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
