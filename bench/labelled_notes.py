"""Notes that start with a label, stored as an agent stores them (issue #16, tokenizers 9 and 10).

An agent's AMP memory delta often says what it is before a colon: "Decision: ...", "Note:
...", "事件：...". Tokenizer 8 took such a text for a speaker's turn (state/turn_context.py
SPEAKER) and indexed each note with the words of the two notes of its kind written before
it, as a conversation's context; tokenizer 9 knows the labels (NOTE_LABELS) and gives those
notes no context, as it gives notes without a label.

MADial-Bench's memories (independent events of a user's life, one namespace per user) are
stored three ways, each in a fresh store, and searched with the dialogues' queries as
bench/retrieval_madial.py does:

* ``plain``: the memory's text (retrieval_madial's own store);
* ``labelled``: "{label}: {text}", the label rotating over three an agent writes (en: Note,
  Event, Memory; zh: 备注, 事件, 记忆), all of kind ``event``, with this code's gate;
* ``labelled, tokenizer 8's gate``: the same texts with ``is_loose_turn`` as tokenizer 8
  had it (any label a speaker), patched for the ingest and the searches.

``--labels headers`` measures a header's labels instead (en: Title, Topic, Project; zh: 标题,
主题, 项目), which tokenizer 10 added (state/turn_context.py HEADER_LABELS): its old-gate row
is then tokenizer 9's labels (the header's words patched out of NOTE_LABELS and
NOTE_ENDINGS), and it writes a section of its own.

Nothing is tuned here: every dialogue counts, and the held-out half (odd dialogues) is shown
as well. BM25 alone over the labelled texts (this code) is the baseline in the same run.

    python bench/labelled_notes.py --write
    python bench/labelled_notes.py --labels headers --write
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import retrieval_madial as rm
from results import RESULTS_PATH, write_section

from state import turn_context


@dataclasses.dataclass(frozen=True)
class LabelSet:
    """Which labels the stored texts start with, the section they go to, and the tokenizer
    whose reading of them is the old-gate row."""

    heading: str
    labels: dict[str, tuple[str, ...]]
    old_tokenizer: int


LABEL_SETS = {
    "notes": LabelSet(
        "## Retrieval quality: notes that start with a label (tokenizer 9)",
        {"en": ("Note", "Event", "Memory"), "zh": ("备注", "事件", "记忆")},
        8,
    ),
    "headers": LabelSet(
        "## Retrieval quality: notes that start with a header (tokenizer 10)",
        {"en": ("Title", "Topic", "Project"), "zh": ("标题", "主题", "项目")},
        9,
    ),
}
VARIANTS = ("full", "last2")
METRICS = ("MRR@10", "hit@5", "R@10")


def labelled(memories: Sequence[rm.Memory], lang: str, label_set: LabelSet) -> list[rm.Memory]:
    """Each memory's text behind a label, as an agent's delta summary may start."""
    colon = ": " if lang == "en" else "："
    labels = label_set.labels[lang]
    return [
        dataclasses.replace(memory, text=f"{labels[n % len(labels)]}{colon}{memory.text}")
        for n, memory in enumerate(memories)
    ]


def _tokenizer_8_gate(kind: str, start: str | None) -> bool:
    return kind == turn_context.LOOSE_TURN_KIND or turn_context.SPEAKER.match(start or "") is not None


def gate(old: int | None) -> contextlib.AbstractContextManager[None]:
    """Tokenizer ``old``'s reading of labels for the duration (None: this code's)."""
    if old == 8:
        return rm.patched([(turn_context, "is_loose_turn", _tokenizer_8_gate)])
    if old == 9:  # the labels before a header's
        return rm.patched(
            [
                (turn_context, "NOTE_LABELS", turn_context.NOTE_LABELS - turn_context.HEADER_LABELS),
                (turn_context, "NOTE_ENDINGS", turn_context.NOTE_ENDINGS[len(turn_context.HEADER_ENDINGS) :]),
            ]
        )
    return contextlib.nullcontext()


def rows(label_set: LabelSet) -> tuple[tuple[str, bool, int | None, rm.Config], ...]:
    """(row label, stored texts labelled?, the old tokenizer's gate or None, search config)."""
    return (
        ("plain, default", False, None, rm.Config.shipped()),
        ("labelled, default", True, None, rm.Config.shipped()),
        (
            f"labelled, tokenizer {label_set.old_tokenizer}'s gate, default",
            True,
            label_set.old_tokenizer,
            rm.Config.shipped(),
        ),
        ("labelled, bm25 only", True, None, rm.BM25),
    )


def measure(data: Path, label_set: LabelSet) -> dict[tuple[str, str, str, str], rm.Scores]:
    """(lang, variant, row, split) -> scores."""
    results: dict[tuple[str, str, str, str], rm.Scores] = {}
    for lang in rm.LANGS:
        memories = rm.load_memories(data, lang)
        queries = {variant: rm.load_queries(data, lang, variant) for variant in VARIANTS}
        for row, is_labelled, old, config in rows(label_set):
            stored = labelled(memories, lang, label_set) if is_labelled else memories
            with gate(old), rm.open_bench(stored) as bench:
                for variant in VARIANTS:
                    scores = rm.evaluate(bench, queries[variant], config, budgets=False)
                    for split, split_scores in scores.items():
                        results[(lang, variant, row, split)] = split_scores
            print(f"{lang} {row}: done", file=sys.stderr)
    return results


def table(results: dict[tuple[str, str, str, str], rm.Scores], split: str, label_set: LabelSet) -> str:
    head = "| lang | query | stored as, search | " + " | ".join(METRICS) + " | MRR@10 - plain |"
    lines = [head, "| --- | --- | --- |" + " ---: |" * (len(METRICS) + 1)]
    for lang in rm.LANGS:
        for variant in VARIANTS:
            table_rows = rows(label_set)
            plain = results[(lang, variant, table_rows[0][0], split)]
            for row, *_ in table_rows:
                scores = results[(lang, variant, row, split)]
                diff, se = rm.paired(scores, plain)
                figures = " | ".join(f"{scores.mean(name):.3f}" for name in METRICS)
                lines.append(f"| {lang} | {variant} | {row} | {figures} | {diff:+.3f} ± {se:.3f} |")
    return "\n".join(lines)


def section(
    results: dict[tuple[str, str, str, str], rm.Scores], command: str, seconds: float, label_set: LabelSet
) -> str:
    old, new = label_set.old_tokenizer, label_set.old_tokenizer + 1
    example = f"{label_set.labels['en'][0]}: ...", f"{label_set.labels['zh'][1]}：..."
    return f"""{label_set.heading}

Command (repository root, project venv): `{command}`  
{rm.machine_line(seconds)}

MADial-Bench's memories stored as an agent's notes that start with a label ("{example[0]}",
"{example[1]}", kind `event`, no session id; bench/labelled_notes.py says how), searched with the
dialogues' queries in each user's namespace, limit 10. Tokenizer {old} took a label for a
speaker and gave each note the words of the two notes before it as context (its gate
patched back in: the third row of each block); tokenizer {new} gives them none. MRR@10 - plain:
the paired difference from the same memories stored without a label, ± one standard error.

All 160 dialogues:

{table(results, "all", label_set)}

Held out (odd dialogues; nothing here was tuned, shown for the same split as the other
sections):

{table(results, "odd", label_set)}
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=rm.DEFAULT_DATA, help="MADial-Bench directory")
    parser.add_argument(
        "--labels",
        choices=sorted(LABEL_SETS),
        default="notes",
        help="a note's labels or a header's (tokenizer 10)",
    )
    parser.add_argument("--write", action="store_true", help=f"replace this section of {RESULTS_PATH}")
    args = parser.parse_args(argv)
    label_set = LABEL_SETS[args.labels]
    started = time.perf_counter()
    results = measure(args.data, label_set)
    command = shlex.join(["python", "bench/labelled_notes.py", *(sys.argv[1:] if argv is None else argv)])
    text = section(results, command, time.perf_counter() - started, label_set)
    print(text)
    if args.write:
        write_section(label_set.heading, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
