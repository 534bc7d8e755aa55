"""Notes that start with a label, stored as an agent stores them (issue #16, tokenizer 9).

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

Nothing is tuned here: every dialogue counts, and the held-out half (odd dialogues) is shown
as well. BM25 alone over the labelled texts (this code) is the baseline in the same run.

    python bench/labelled_notes.py --write
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import shlex
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import retrieval_madial as rm
from results import RESULTS_PATH, write_section

from state import turn_context

SECTION_HEADING = "## Retrieval quality: notes that start with a label (tokenizer 9)"
LABELS = {"en": ("Note", "Event", "Memory"), "zh": ("备注", "事件", "记忆")}
VARIANTS = ("full", "last2")
METRICS = ("MRR@10", "hit@5", "R@10")


def labelled(memories: Sequence[rm.Memory], lang: str) -> list[rm.Memory]:
    """Each memory's text behind a label, as an agent's delta summary may start."""
    colon = ": " if lang == "en" else "："
    labels = LABELS[lang]
    return [
        dataclasses.replace(memory, text=f"{labels[n % len(labels)]}{colon}{memory.text}")
        for n, memory in enumerate(memories)
    ]


def _tokenizer_8_gate(kind: str, start: str | None) -> bool:
    return kind == turn_context.LOOSE_TURN_KIND or turn_context.SPEAKER.match(start or "") is not None


@contextlib.contextmanager
def gate(old: bool) -> Iterator[None]:
    """Tokenizer 8's reading of labels for the duration (or this code's)."""
    if not old:
        yield
        return
    saved = turn_context.is_loose_turn
    turn_context.is_loose_turn = _tokenizer_8_gate
    try:
        yield
    finally:
        turn_context.is_loose_turn = saved


# (row label, stored texts labelled?, tokenizer 8's gate?, search config)
ROWS = (
    ("plain, default", False, False, rm.Config.shipped()),
    ("labelled, default", True, False, rm.Config.shipped()),
    ("labelled, tokenizer 8's gate, default", True, True, rm.Config.shipped()),
    ("labelled, bm25 only", True, False, rm.BM25),
)


def measure(data: Path) -> dict[tuple[str, str, str, str], rm.Scores]:
    """(lang, variant, row, split) -> scores."""
    results: dict[tuple[str, str, str, str], rm.Scores] = {}
    for lang in rm.LANGS:
        memories = rm.load_memories(data, lang)
        queries = {variant: rm.load_queries(data, lang, variant) for variant in VARIANTS}
        for row, is_labelled, old, config in ROWS:
            stored = labelled(memories, lang) if is_labelled else memories
            with gate(old), rm.open_bench(stored) as bench:
                for variant in VARIANTS:
                    scores = rm.evaluate(bench, queries[variant], config, budgets=False)
                    for split, split_scores in scores.items():
                        results[(lang, variant, row, split)] = split_scores
            print(f"{lang} {row}: done", file=sys.stderr)
    return results


def table(results: dict[tuple[str, str, str, str], rm.Scores], split: str) -> str:
    head = "| lang | query | stored as, search | " + " | ".join(METRICS) + " | MRR@10 - plain |"
    lines = [head, "| --- | --- | --- |" + " ---: |" * (len(METRICS) + 1)]
    for lang in rm.LANGS:
        for variant in VARIANTS:
            plain = results[(lang, variant, ROWS[0][0], split)]
            for row, *_ in ROWS:
                scores = results[(lang, variant, row, split)]
                diff, se = rm.paired(scores, plain)
                figures = " | ".join(f"{scores.mean(name):.3f}" for name in METRICS)
                lines.append(f"| {lang} | {variant} | {row} | {figures} | {diff:+.3f} ± {se:.3f} |")
    return "\n".join(lines)


def section(results: dict[tuple[str, str, str, str], rm.Scores], command: str, seconds: float) -> str:
    return f"""{SECTION_HEADING}

Command (repository root, project venv): `{command}`  
{rm.machine_line(seconds)}

MADial-Bench's memories stored as an agent's notes that start with a label ("Note: ...",
"事件：...", kind `event`, no session id; bench/labelled_notes.py says how), searched with the
dialogues' queries in each user's namespace, limit 10. Tokenizer 8 took a label for a
speaker and gave each note the words of the two notes before it as context (its gate
patched back in: the third row of each block); tokenizer 9 gives them none. MRR@10 - plain:
the paired difference from the same memories stored without a label, ± one standard error.

All 160 dialogues:

{table(results, "all")}

Held out (odd dialogues; nothing here was tuned, shown for the same split as the other
sections):

{table(results, "odd")}
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=rm.DEFAULT_DATA, help="MADial-Bench directory")
    parser.add_argument("--write", action="store_true", help=f"replace this section of {RESULTS_PATH}")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results = measure(args.data)
    command = shlex.join(["python", "bench/labelled_notes.py", *(sys.argv[1:] if argv is None else argv)])
    text = section(results, command, time.perf_counter() - started)
    print(text)
    if args.write:
        write_section(SECTION_HEADING, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
