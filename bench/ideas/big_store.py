"""The conversations of a split in a store that also holds thousands of other turns.

    python bench/ideas/big_store.py [--write]      # the three datasets, the table below
    python bench/retrieval_turns.py DATASET --ideas bench/ideas/big_store.py

bench/retrieval_turns.py gives each split a store of its own (~300-700 turns), so BM25's
word statistics are those of a few conversations and every query is ranked exactly (state/
search.py MAX_RANKED_MATCHES). A harness that puts all its conversations into one store
(LoCoMo's ten hold ~5,900 turns), or a user whose store holds other work, changes both: a
person's name is rare in the store but held by half the turns of their conversation, and
queries are ranked over a bounded set. Here the split's turns are stored first, then
PADDING_TURNS turns of the three datasets' other conversations (copies, each copy in a
namespace of its own), so that the split's turns are the older ones; the Porter baseline's
index gets the same padding. ``exact BM25`` ranks every match (no bounded set) in the same
padded store.

Tried here and dropped: leaving out of a query the words held by more than 15, 25 or 40 % of
its namespace's records (a name in a conversation of that person), which store-wide word
counts cannot see. It cost recall@10 on every dataset, padded or not (companion tune 0.814 ->
0.781-0.792, assistant-chats report 0.895 -> 0.850-0.879).
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BENCH))

import retrieval_turns as rt  # noqa: E402
import turns_dataset  # noqa: E402
from results import write_section  # noqa: E402
from retrieval_turns import BASELINE, DEFAULT, Config, porter_rank  # noqa: E402
from turns_dataset import Turn  # noqa: E402

import state.search as search_module  # noqa: E402

PADDING_TURNS = 6000
DATA = BENCH / "data" / "conversations"
DATASETS = ("companion-conversations", "locomo-style-2", "assistant-chats", "long-conversations")
SECTION = "## Retrieval quality: conversations in a store of 6,000 other turns"

_INGEST = rt.ingest  # the harness's own, before a config patches it
_ADD_ALL = rt.PorterIndex.add_all


def padding(excluded: set[str]) -> list[Turn]:
    """PADDING_TURNS turns of other conversations, copied into namespaces of their own."""
    others = [
        turn
        for name in DATASETS
        for conversation in turns_dataset.load(DATA / f"{name}.json").conversations
        if conversation.id not in excluded
        for turn in conversation.turns
    ]
    turns: list[Turn] = []
    copy = 0
    while len(turns) < PADDING_TURNS:
        turns += [dataclasses.replace(t, conversation=f"pad{copy}-{t.conversation}") for t in others]
        copy += 1
    return turns[:PADDING_TURNS]


def padded_ingest(store, turns: Sequence[Turn], **options):  # type: ignore[no-untyped-def]
    keys = _INGEST(store, turns, **options)
    _INGEST(store, padding({t.conversation for t in turns}), **options)
    return keys


def padded_add_all(self, rows: Iterable[tuple]) -> None:  # type: ignore[no-untyped-def]
    rows = list(rows)
    _ADD_ALL(self, rows)
    excluded = {key[0] for key, _, _ in rows}
    _ADD_ALL(
        self,
        (
            ((t.conversation, t.id), rt.namespace(t.conversation), rt.memory_text(t))
            for t in padding(excluded)
        ),
    )


PADDED = ((rt, "ingest", padded_ingest), (rt.PorterIndex, "add_all", padded_add_all))
PADDED_BASELINE = Config("porter fts5, padded store", rank=porter_rank, patches=PADDED)
PADDED_DEFAULT = Config.shipped("default, padded store", patches=PADDED)
PADDED_EXACT = Config.shipped(
    "default, padded store, exact BM25", patches=(*PADDED, (search_module, "MAX_RANKED_MATCHES", 10**9))
)


def ideas() -> list[Config]:
    return [PADDED_BASELINE, PADDED_DEFAULT, PADDED_EXACT]


METRICS = ("R@10", "R@2000c")


def cell(result: rt.RunResult, label: str, base: str, split: str, metric: str) -> str:
    """``metric`` of ``label``, relative to ``base`` and their paired difference ± one SE."""
    value, against = result.mean(label, split, metric), result.mean(base, split, metric)
    mean, se = rt.paired(result, label, base, split, metric)
    return f"{value:.3f} ({rt.relative(value, against)}; {mean:+.3f} ± {se:.3f})"


def gains(results: dict[str, rt.RunResult], metric: str) -> dict[tuple[str, str], float]:
    """The default's relative gain over the Porter baseline in the padded store, by column."""
    return {
        (n, s): results[n].mean(PADDED_DEFAULT.label, s, metric)
        / results[n].mean(PADDED_BASELINE.label, s, metric)
        - 1
        for n in DATASETS
        for s in results[n].splits
    }


def section(results: dict[str, rt.RunResult], command: str) -> str:
    columns = [(name, split) for name in DATASETS for split in results[name].splits]
    rows = [
        (f"Porter baseline, {name}", label, base)
        for name, label, base in (
            ("own store", BASELINE.label, None),
            ("padded store", PADDED_BASELINE.label, None),
        )
    ] + [
        ("default, own store (against the Porter baseline, own store)", DEFAULT.label, BASELINE.label),
        (
            "default, padded store (against the Porter baseline, padded store)",
            PADDED_DEFAULT.label,
            PADDED_BASELINE.label,
        ),
        ("default, padded store, exact BM25 (against the same)", PADDED_EXACT.label, PADDED_BASELINE.label),
    ]
    lines = [
        SECTION,
        "",
        f"Command (repository root, project venv): `{command}`  ",
        rt.machine_line(sum(r.seconds for r in results.values())),
        "",
        f"Each split's conversations stored first, then {PADDING_TURNS:,} turns of the three datasets' other"
        " conversations (copies, each in a namespace of its own) in the same store, and in the Porter"
        " baseline's index (bench/ideas/big_store.py). Recall@10, then recall within 2,000 returned"
        " characters; in brackets, relative to the baseline of the same store and the paired per-question"
        " difference ± one standard error.",
    ]
    for metric in METRICS:
        lines += [
            "",
            f"| {metric} | " + " | ".join(f"{n} {s}" for n, s in columns) + " |",
            "|---|" + "---:|" * len(columns),
        ]
        for title, label, base in rows:
            cells = [
                f"{results[n].mean(label, s, metric):.3f}"
                if base is None
                else cell(results[n], label, base, s, metric)
                for n, s in columns
            ]
            lines.append(f"| {title} | " + " | ".join(cells) + " |")
    lowest = []
    for metric in METRICS:
        (low_name, low_split), low = min(gains(results, metric).items(), key=lambda item: item[1])
        lowest.append(f"{low:+.1%} in {metric} ({low_name}, {low_split})")
    differing = sum(
        tops != results[n].ranked[PADDED_EXACT.label][qid]
        for n in DATASETS
        for qid, tops in results[n].ranked[PADDED_DEFAULT.label].items()
    )
    lines += [
        "",
        f"In the padded store the default's smallest gains over that store's baseline are {' and '.join(lowest)}."
        " The bounded set and exact BM25 rank the same top 10 for all but"
        f" {differing} of {sum(len(r.questions()) for r in results.values())} questions.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    configs = [BASELINE, DEFAULT, *ideas()]
    results = {}
    for name in DATASETS:
        print(f"{name} ...", file=sys.stderr)
        results[name] = rt.run(turns_dataset.load(DATA / f"{name}.json"), configs)
    command = shlex.join(["python", "bench/ideas/big_store.py", *(sys.argv[1:] if argv is None else argv)])
    text = section(results, command)
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
