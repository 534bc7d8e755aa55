"""Turn-level recall on long conversations: the product's search against a Porter BM25 baseline.

Points at any dataset in a turn-level shape (bench/turns_dataset.py: our canonical JSON,
LoCoMo's locomo10.json, LongMemEval's files). Every turn becomes one memory in a real
``Store`` (a temporary database per split, one namespace per conversation:
``conv/<conversation id>``), stored the way an agent integration would store a turn:

* content ``"{speaker}: {text}"``, plus ``" [shares a photo: {caption}]"`` when the turn
  shares a photo;
* kind ``message``, no title, ``provenance`` ``{"session_id": ...}``;
* the session's date in ``metadata`` ``{"session_date": ...}``: a record has no "occurred
  at" field (``created_at`` is the time of the write), so the date is kept but no part of
  search sees it.

Each question searches only its own conversation's namespace, through the product's own
``store.search.search`` (limit 10, and a deeper search of limit 50 for budget recall).
Metrics per question, averaged: ``R@5``/``R@10`` (share of the gold turns in the top 5/10),
``hit@10`` (any gold turn in the top 10), ``MRR@10``, and ``R@2000c``: the limit-50 results
read in rank order while their contents fit in 2,000 characters, the share of the gold
turns read (agents pay for context by size).

The baseline, measured in the same run over the same memory strings: plain SQLite FTS5
with ``tokenize='porter unicode61 remove_diacritics 2'`` (the Porter stemmer), the
question's words minus NLTK's English stopword list (below), each quoted and OR-ed, ranked
by ``bm25()``, the same namespace filter. Also measured: the product's BM25 alone and
vectors alone (its ``Settings`` weights) and the shipped default.

Splits: the conversations of the tuning half (``tune``) and the held-out half (``report``)
are ingested into separate stores, so a split's figures do not depend on the other half
(see turns_dataset.py for which conversation is which). Tune on ``tune``; quote ``report``.

Variants without editing this file: ``--ideas FILE.py`` imports FILE and adds the
:class:`Config` objects its ``ideas()`` returns (or its ``IDEAS`` list) to the same run. A
Config may carry ``patches`` (``(object, attribute, value)``), applied while its store is
built and searched (configs with equal patches and settings share a store; patch a name
where it is looked up: ``state.tokenize.tokens`` reaches the index and the queries, but
``state.search`` holds its own reference to ``query_terms``), ``settings`` for the store,
and ``rank``, a function ``(bench, question, limit) -> [turn key, ...]`` that replaces the
product's search (``bench.product_rank`` and :func:`porter_rank` are there to wrap)::

    # ideas.py
    import state.search
    import retrieval_turns as rt

    def ideas():
        return [rt.Config.shipped("default, rrf k=20", rrf_k=20),
                rt.Config.shipped("default, no minimum similarity",
                                  patches=((state.search, "MIN_VECTOR_SIMILARITY", -1.0),))]

From Python (bench/ on ``sys.path``), ``run`` returns every figure::

    from retrieval_turns import MAIN_CONFIGS, run
    from turns_dataset import load
    result = run(load("data.json"), [*MAIN_CONFIGS, *ideas()], split="tune")
    result.mean("default (as shipped)", "tune", "R@10")

``--json FILE`` keeps every question's metrics and top 10 per search, to compare two
commits question by question (bench/before_after.py runs one script against two commits).

Examples::

    python bench/retrieval_turns.py --write          # our conversations, both halves
    python bench/retrieval_turns.py --split tune --ideas ideas.py
    python bench/retrieval_turns.py locomo10.json --split report --misses 5
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib
import importlib.util
import json
import math
import os
import platform
import re
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from results import RESULTS_PATH, write_section
from retrieval_madial import budget_recall, configured  # the same metric, weights and modes
from turns_dataset import Dataset, DatasetError, Question, Turn, load

from state.config import Settings
from state.db import sqlite_module
from state.memories import NewMemory
from state.store import Store

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "conversations" / "companion-conversations.json"
SECTION_HEADING = "## Retrieval quality: long conversations (turn level)"
LIMIT = 10
DEEP_LIMIT = 50  # the deeper search that budget recall reads
BUDGET = 2000  # characters
METRICS = ("R@5", "R@10", "hit@10", "MRR@10", f"R@{BUDGET}c")
HEADLINE = ("R@10", f"R@{BUDGET}c")  # what the goal is stated in
SPLIT_CHOICES = ("tune", "report", "all")

TurnKey = tuple[str, str]  # (conversation id, turn id)

# NLTK's English stopword list (nltk_data corpora/stopwords/english, the 179 words of NLTK
# 3.x), written here so that the baseline needs no download.
NLTK_ENGLISH_STOPWORDS = frozenset(
    """
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
yourselves he him his himself she she's her hers herself it it's its itself they them their
theirs themselves what which who whom this that that'll these those am is are was were be
been being have has had having do does did doing a an the and but if or because as until
while of at by for with about against between into through during before after above below
to from up down in out on off over under again further then once here there when where why
how all any both each few more most other some such no nor not only own same so than too
very s t can will just don don't should should've now d ll m o re ve y ain aren aren't
couldn couldn't didn didn't doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma
mightn mightn't mustn mustn't needn needn't shan shan't shouldn shouldn't wasn wasn't weren
weren't won won't wouldn wouldn't
""".split()
)
_QUERY_WORD = re.compile(r"\w+(?:'\w+)?")


def memory_text(turn: Turn) -> str:
    """The memory stored for one turn."""
    text = f"{turn.speaker}: {turn.text}"
    if turn.image_caption:
        text += f" [shares a photo: {turn.image_caption}]"
    return text


# -- configs -----------------------------------------------------------------------------


Patch = tuple[object, str, object]


@dataclass(frozen=True)
class Config:
    """A named way to search: the product's fusion weights, or a ranking function of its own.

    ``patches`` are applied while this config's store is built and while it searches;
    ``settings`` open that store (None: ``Settings()``); ``rank(bench, question, limit)``
    returns turn keys best first and replaces ``store.search.search``."""

    label: str
    bm25_weight: float = 1.0
    vector_weight: float = 1.0
    vector_mode: str = "rerank"
    rrf_k: int | None = None  # None: the product's RRF_K
    settings: Settings | None = None
    patches: tuple[Patch, ...] = ()
    rank: Callable[[Bench, Question, int], list[TurnKey]] | None = field(default=None, compare=False)

    @classmethod
    def shipped(cls, label: str = "default (as shipped)", **changes: Any) -> Config:
        s = Settings()
        return cls(label, s.bm25_weight, s.vector_weight, s.vector_mode, **changes)

    def store_key(self) -> tuple:
        """Configs with equal keys share one store."""
        return (self.settings, tuple((id(o), n, id(v)) for o, n, v in self.patches))


def porter_rank(bench: Bench, question: Question, limit: int) -> list[TurnKey]:
    return bench.porter.search(question.question, namespace(question.conversation), limit)


BASELINE = Config("porter fts5 (baseline)", rank=porter_rank)
BM25 = Config("bm25 only", 1.0, 0.0)
VECTORS = Config("vector only", 0.0, 1.0)
DEFAULT = Config.shipped()
MAIN_CONFIGS: tuple[Config, ...] = (BASELINE, BM25, VECTORS, DEFAULT)


# -- the Porter baseline -----------------------------------------------------------------


def baseline_query(question: str) -> str:
    """The FTS5 MATCH expression: the question's words minus stopwords, quoted, OR-ed."""
    words = [w for w in _QUERY_WORD.findall(question.lower()) if w not in NLTK_ENGLISH_STOPWORDS]
    terms = dict.fromkeys(w.replace('"', '""') for w in words)
    return " OR ".join(f'"{t}"' for t in terms)


class PorterIndex:
    """Plain FTS5 (Porter stemmer, unicode61) over the same memory strings, in memory."""

    def __init__(self) -> None:
        self.conn = sqlite_module().connect(":memory:")
        self.conn.execute(
            "create virtual table turns using fts5(content, namespace UNINDEXED,"
            " tokenize='porter unicode61 remove_diacritics 2')"
        )
        self.keys: list[TurnKey] = []

    def add_all(self, rows: Iterable[tuple[TurnKey, str, str]]) -> None:
        """(key, namespace, content) rows."""
        with self.conn:
            for key, ns, content in rows:
                self.keys.append(key)
                self.conn.execute(
                    "insert into turns (rowid, content, namespace) values (?, ?, ?)",
                    (len(self.keys) - 1, content, ns),
                )

    def search(self, question: str, ns: str, limit: int) -> list[TurnKey]:
        match = baseline_query(question)
        if not match:
            return []
        rows = self.conn.execute(
            "select rowid from turns where turns match ? and namespace = ?"
            " order by bm25(turns), rowid limit ?",
            (match, ns, limit),
        ).fetchall()
        return [self.keys[r[0]] for r in rows]

    def close(self) -> None:
        self.conn.close()


# -- stores ------------------------------------------------------------------------------


def namespace(conversation_id: str) -> str:
    return f"conv/{conversation_id}"


@dataclass
class Bench:
    """One split's turns in a product store and in the baseline index."""

    store: Store
    porter: PorterIndex
    keys: dict[int, TurnKey]  # record seq -> turn key
    texts: dict[TurnKey, str]  # turn key -> memory content

    def product_rank(self, question: Question, limit: int) -> list[TurnKey]:
        hits = self.store.search.search(question.question, [namespace(question.conversation)], limit=limit)
        return [self.keys[hit.seq] for hit in hits]


def ingest(
    store: Store,
    turns: Sequence[Turn],
    *,
    kind: str = "message",
    with_session: bool = True,
    as_delta: bool = False,
) -> dict[int, TurnKey]:
    """One memory per turn (its text by :func:`memory_text`); record seq -> turn key.

    The ideas store turns other ways (bench/ideas/no_session.py, harness_styles.py): without
    ``with_session`` the provenance holds no session id, as an AMP delta's or a local
    memory's; ``as_delta`` stores a turn as a memory delta does (a delta id, the title the
    content's start)."""
    keys: dict[int, TurnKey] = {}
    with store.transaction():
        for turn in turns:
            metadata = {"turn_id": turn.id}
            if turn.date:
                metadata["session_date"] = turn.date
            content = memory_text(turn)
            provenance: dict[str, str] = {"session_id": turn.session} if with_session else {}
            if as_delta:
                provenance["delta_id"] = f"mdelta_{turn.conversation}_{turn.id}"
            record = store.memories.create(
                NewMemory(
                    namespace=namespace(turn.conversation),
                    kind=kind,
                    content=content,
                    source="memory_delta" if as_delta else "bench",
                    title=content[:200] if as_delta else "",
                    provenance=provenance,
                    metadata=metadata,
                )
            )
            keys[record["seq"]] = (turn.conversation, turn.id)
    return keys


@contextlib.contextmanager
def patched(patches: Sequence[Patch]) -> Iterator[None]:
    """Temporarily set ``obj.name = value`` for each patch, restoring afterwards."""
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    try:
        for obj, name, value in patches:
            setattr(obj, name, value)
        yield
    finally:
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)


@contextlib.contextmanager
def open_bench(turns: Sequence[Turn], settings: Settings | None = None) -> Iterator[Bench]:
    """A fresh on-disk store in a temp dir and a baseline index, both holding ``turns``."""
    with tempfile.TemporaryDirectory(prefix="turns-") as tmp:
        store = Store.open(Path(tmp) / "bench.db", settings or Settings())
        porter = PorterIndex()
        try:
            keys = ingest(store, turns)
            texts = {(t.conversation, t.id): memory_text(t) for t in turns}
            porter.add_all(
                ((t.conversation, t.id), namespace(t.conversation), texts[(t.conversation, t.id)])
                for t in turns
            )
            yield Bench(store, porter, keys, texts)
        finally:
            porter.close()
            store.close()


# -- metrics -----------------------------------------------------------------------------


def question_metrics(
    ranked: Sequence[TurnKey], deep: Sequence[TurnKey], gold: frozenset[TurnKey], lengths: dict[TurnKey, int]
) -> dict[str, float]:
    top = list(ranked[:LIMIT])
    first = next((i for i, key in enumerate(top, 1) if key in gold), None)
    metrics = {
        "R@5": len(gold.intersection(top[:5])) / len(gold),
        "R@10": len(gold.intersection(top)) / len(gold),
        "hit@10": float(first is not None),
        "MRR@10": 1.0 / first if first else 0.0,
    }
    metrics[f"R@{BUDGET}c"] = budget_recall(deep, gold, lengths, BUDGET)
    return metrics


@dataclass
class Scores:
    n: int = 0
    sums: dict[str, float] = field(default_factory=dict)

    def add(self, metrics: dict[str, float]) -> None:
        self.n += 1
        for name, value in metrics.items():
            self.sums[name] = self.sums.get(name, 0.0) + value

    def mean(self, name: str) -> float:
        return self.sums.get(name, 0.0) / self.n if self.n else 0.0


@dataclass
class RunResult:
    """Everything one run measured; ``scores[(label, split, category)]``, category "all"
    for every question of the split."""

    dataset: Dataset
    configs: list[Config]
    splits: list[str]  # the splits measured ("tune", "report")
    scores: dict[tuple[str, str, str], Scores] = field(default_factory=dict)
    per_question: dict[str, dict[str, dict[str, float]]] = field(
        default_factory=dict
    )  # label -> qid -> metrics
    ranked: dict[str, dict[str, list[TurnKey]]] = field(default_factory=dict)  # label -> qid -> top 10
    texts: dict[TurnKey, str] = field(default_factory=dict)
    seconds: float = 0.0

    def mean(self, label: str, split: str = "all", metric: str = "R@10", category: str = "all") -> float:
        scores = self.scores.get((label, split, category))
        return scores.mean(metric) if scores else float("nan")

    def count(self, label: str, split: str = "all", category: str = "all") -> int:
        scores = self.scores.get((label, split, category))
        return scores.n if scores else 0

    def categories(self) -> list[str]:
        return sorted({q.category or "(none)" for q in self.questions()})

    def questions(self) -> list[Question]:
        return [q for q in self.dataset.questions if self.dataset.split_of(q) in self.splits]

    def report_splits(self) -> list[str]:
        return [*self.splits, "all"] if len(self.splits) > 1 else list(self.splits)


Progress = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(
    dataset: Dataset,
    configs: Sequence[Config] = MAIN_CONFIGS,
    split: str = "all",
    progress: Progress | None = None,
) -> RunResult:
    """Measure every config on the questions of ``split`` (tune, report or all)."""
    if split not in SPLIT_CHOICES:
        raise ValueError(f"split must be one of {SPLIT_CHOICES}")
    labels = [c.label for c in configs]
    if len(set(labels)) != len(labels):
        raise ValueError(f"config labels must be unique: {labels}")
    say = progress or (lambda message: None)
    started = time.perf_counter()
    splits = ["tune", "report"] if split == "all" else [split]
    result = RunResult(dataset, list(configs), splits)
    groups: dict[tuple, list[Config]] = {}
    for config in configs:
        groups.setdefault(config.store_key(), []).append(config)
    for part in list(splits):  # a split without questions is taken out of result.splits
        turns = [t for c in dataset.conversations if c.split == part for t in c.turns]
        questions = [q for q in dataset.questions if dataset.split_of(q) == part]
        if not questions:  # a held-out-only dataset: its report has no empty tune rows
            say(f"[{part}] no questions")
            result.splits.remove(part)
            continue
        for gi, group in enumerate(groups.values(), 1):
            with patched(group[0].patches):
                t0 = time.perf_counter()
                with open_bench(turns, group[0].settings) as bench:
                    say(
                        f"[{part}] store {gi}/{len(groups)}: {len(turns)} turns of "
                        f"{len({t.conversation for t in turns})} conversations ingested in "
                        f"{time.perf_counter() - t0:.1f} s"
                    )
                    result.texts.update(bench.texts)
                    for config in group:
                        _evaluate(bench, questions, config, part, result, say)
    result.seconds = time.perf_counter() - started
    return result


def _evaluate(
    bench: Bench, questions: Sequence[Question], config: Config, part: str, result: RunResult, say: Progress
) -> None:
    lengths = {key: len(text) for key, text in bench.texts.items()}
    rank = config.rank or (lambda b, q, limit: b.product_rank(q, limit))
    per_question = result.per_question.setdefault(config.label, {})
    tops = result.ranked.setdefault(config.label, {})
    t0 = time.perf_counter()
    with configured(bench.store, config):
        for i, question in enumerate(questions, 1):
            gold = frozenset((question.conversation, g) for g in question.gold)
            ranked = rank(bench, question, LIMIT)
            deep = rank(bench, question, DEEP_LIMIT)
            metrics = question_metrics(ranked, deep, gold, lengths)
            per_question[question.id] = metrics
            tops[question.id] = list(ranked[:LIMIT])
            for category in ("all", question.category or "(none)"):
                for name in (part, "all"):
                    result.scores.setdefault((config.label, name, category), Scores()).add(metrics)
            if i % 500 == 0:
                say(f"[{part}] {config.label}: {i}/{len(questions)} questions")
    say(f"[{part}] {config.label}: {len(questions)} questions in {time.perf_counter() - t0:.1f} s")


# -- comparisons -------------------------------------------------------------------------


def relative(a: float, b: float) -> str:
    """a against b as a relative difference, e.g. '+4.1 %'."""
    if b == 0:
        return "n/a" if a == 0 else "+inf"
    return f"{(a - b) / b * 100:+.1f} %"


def paired(result: RunResult, a: str, b: str, split: str, metric: str) -> tuple[float, float]:
    """Mean per-question difference a - b of ``metric`` and its standard error."""
    qids = [q.id for q in result.questions() if split == "all" or result.dataset.split_of(q) == split]
    diffs = [result.per_question[a][q][metric] - result.per_question[b][q][metric] for q in qids]
    if len(diffs) < 2:
        return (diffs[0] if diffs else 0.0), float("nan")
    mean = sum(diffs) / len(diffs)
    variance = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
    return mean, math.sqrt(variance / len(diffs))


# -- output ------------------------------------------------------------------------------


def main_table(result: RunResult, split: str, base: str = BASELINE.label) -> str:
    """Every config's metrics; with the baseline in the run, R@10 and R@2000c relative to it."""
    versus = base in result.per_question
    extra = [f"{m} vs baseline" for m in HEADLINE] if versus else []
    rows = [
        "| search | questions | " + " | ".join([*METRICS, *extra]) + " |",
        "| --- | ---: | " + " | ".join("---:" for _ in [*METRICS, *extra]) + " |",
    ]
    for config in result.configs:
        cells = [f"{result.mean(config.label, split, m):.3f}" for m in METRICS]
        if versus:
            cells += [
                ""
                if config.label == base
                else relative(result.mean(config.label, split, m), result.mean(base, split, m))
                for m in HEADLINE
            ]
        rows.append(f"| {config.label} | {result.count(config.label, split)} | {' | '.join(cells)} |")
    return "\n".join(rows)


def versus_table(result: RunResult, label: str = DEFAULT.label, base: str = BASELINE.label) -> str:
    rows = [
        f"| split | questions | metric | {label} | {base} | relative | paired difference |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for split in result.report_splits():
        for metric in HEADLINE:
            a, b = result.mean(label, split, metric), result.mean(base, split, metric)
            diff, se = paired(result, label, base, split, metric)
            rows.append(
                f"| {split} | {result.count(label, split)} | {metric} | {a:.3f} | {b:.3f} | "
                f"{relative(a, b)} | {diff:+.3f} ± {se:.3f} |"
            )
    return "\n".join(rows)


def category_table(result: RunResult, split: str, metric: str) -> str:
    categories = result.categories()
    rows = [
        "| search | "
        + " | ".join(f"{c} (n={result.count(result.configs[0].label, split, c)})" for c in categories)
        + " |",
        "| --- | " + " | ".join("---:" for _ in categories) + " |",
    ]
    for config in result.configs:
        cells = " | ".join(f"{result.mean(config.label, split, metric, c):.3f}" for c in categories)
        rows.append(f"| {config.label} | {cells} |")
    return "\n".join(rows)


def machine_line(seconds: float) -> str:
    return (
        f"Date: {dt.date.today().isoformat()}; machine: {platform.machine()} "
        f"{platform.system()}, {os.cpu_count()} cores, Python {platform.python_version()};"
        f" run time {seconds:.0f} s."
    )


def dataset_line(dataset: Dataset, result: RunResult) -> str:
    parts = []
    for split in result.splits:
        convs = [c for c in dataset.conversations if c.split == split]
        turns = sum(len(c.turns) for c in convs)
        questions = sum(1 for q in dataset.questions if dataset.split_of(q) == split)
        parts.append(f"{split}: {len(convs)} conversations, {turns} turns, {questions} questions")
    skipped = "; ".join(f"{reason}: {n}" for reason, n in sorted(dataset.skipped.items()))
    source = Path(dataset.source)
    with contextlib.suppress(ValueError, OSError):
        source = source.resolve().relative_to(Path.cwd())
    return (
        f"Dataset `{dataset.name}` ({dataset.shape} shape, `{source}`): "
        + "; ".join(parts)
        + "."
        + (f" Skipped while loading: {skipped}." if skipped else "")
    )


def section_markdown(result: RunResult, command: str, heading: str = SECTION_HEADING) -> str:
    s = Settings()
    dataset = result.dataset
    parts = [
        heading,
        "",
        f"Command (repository root, project venv): `{command}`  ",
        machine_line(result.seconds),
        "",
        dataset_line(dataset, result),
        "",
        "One memory per turn (`{speaker}: {text}`, plus ` [shares a photo: {caption}]`), one "
        "namespace per conversation, each question searches only its own conversation, "
        f"through `SearchIndex.search` on a real store (limit {LIMIT}; R@{BUDGET}c reads a "
        f"limit-{DEEP_LIMIT} search in rank order while it fits in {BUDGET:,} characters). "
        "Baseline: SQLite FTS5 `porter unicode61 remove_diacritics 2`, the question's words "
        "minus NLTK's English stopwords, OR-ed, ranked by `bm25()`, over the same strings and "
        f"namespaces. Shipped settings: embedder `{s.embedder}`, dimension {s.dimension}, "
        f"vector_mode `{s.vector_mode}`, weights {s.bm25_weight:g}:{s.vector_weight:g} "
        "(bm25:vector). `tune` is the half to choose settings on; `report` is held out.",
        "",
    ]
    if DEFAULT.label in result.per_question and BASELINE.label in result.per_question:
        parts += [
            "The default against the Porter baseline (paired: mean per-question difference"
            " ± one standard error):",
            "",
            versus_table(result),
            "",
        ]
    for split in result.report_splits():
        parts += [f"Split `{split}`:", "", main_table(result, split), ""]
    for split in result.report_splits()[-1:]:
        for metric in HEADLINE:
            parts += [
                f"{metric} per category (split `{split}`):",
                "",
                category_table(result, split, metric),
                "",
            ]
    return "\n".join(parts).rstrip("\n") + "\n"


def print_misses(result: RunResult, label: str, count: int, base: str = BASELINE.label) -> None:
    """Questions where ``label`` misses a gold turn in its top 10, those the baseline
    finds first; with the gold turns and what came first instead."""
    by_id = {q.id: q for q in result.questions()}
    pq, bq = result.per_question[label], result.per_question.get(base, {})
    misses = [qid for qid in by_id if pq[qid]["R@10"] < 1.0]
    misses.sort(key=lambda qid: -(bq.get(qid, {}).get("R@10", 0.0) - pq[qid]["R@10"]))
    print(
        f"\n{len(misses)} of {len(by_id)} questions where {label} misses a gold turn in its "
        f"top {LIMIT}; first {count} (those the baseline does better on first):"
    )
    for qid in misses[:count]:
        q = by_id[qid]
        top = result.ranked[label][qid]
        print(
            f"\n{qid} [{q.category}] {q.question!r}  R@10 {pq[qid]['R@10']:.2f}"
            f" (baseline {bq.get(qid, {}).get('R@10', float('nan')):.2f})"
        )
        for g in q.gold:
            key = (q.conversation, g)
            where = top.index(key) + 1 if key in top else "-"
            print(f"   gold {g} (rank {where}): {result.texts.get(key, '?')[:160]}")
        for key in top[:3]:
            print(f"   got  {key[1]}: {result.texts.get(key, '?')[:160]}")


def per_question_json(result: RunResult) -> dict:
    """{search label: {question id: {metrics..., "top": [turn ids]}}}."""
    return {
        label: {
            qid: {**metrics, "top": [key[1] for key in result.ranked[label][qid]]}
            for qid, metrics in questions.items()
        }
        for label, questions in result.per_question.items()
    }


# -- main --------------------------------------------------------------------------------


def load_ideas(spec: str) -> list[Config]:
    """Configs from FILE.py or an importable module: its ``ideas()`` or ``IDEAS``."""
    if spec.endswith(".py") or os.sep in spec:
        path = Path(spec)
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise SystemExit(f"error: cannot import {spec}")
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(spec)
    found = module.ideas() if hasattr(module, "ideas") else getattr(module, "IDEAS", None)
    if not found or not all(isinstance(c, Config) for c in found):
        raise SystemExit(f"error: {spec} defines no ideas() or IDEAS list of retrieval_turns.Config")
    return list(found)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "dataset",
        type=Path,
        nargs="?",
        default=DEFAULT_DATA,
        help="dataset JSON: canonical, LoCoMo or LongMemEval shape (default: %(default)s)",
    )
    parser.add_argument(
        "--split",
        choices=SPLIT_CHOICES,
        default="all",
        help="which conversations' questions to measure (default: %(default)s)",
    )
    parser.add_argument(
        "--ideas",
        metavar="FILE.py",
        action="append",
        default=[],
        help="add the Configs returned by FILE's ideas() (or its IDEAS list); may be repeated",
    )
    parser.add_argument(
        "--misses",
        type=int,
        default=0,
        metavar="N",
        help="print N questions where the shipped default misses a gold turn",
    )
    parser.add_argument(
        "--write", action="store_true", help=f"replace the section '{SECTION_HEADING[3:]}' of {RESULTS_PATH}"
    )
    parser.add_argument(
        "--heading", default=SECTION_HEADING, help="the RESULTS.md section to write (default: %(default)r)"
    )
    parser.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="also write every question's metrics and top 10 per search to FILE"
        " (to compare two commits question by question)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.heading.startswith("## "):
        print("error: --heading must start with '## '", file=sys.stderr)
        return 2
    words = ["python", "bench/retrieval_turns.py", *(sys.argv[1:] if argv is None else argv)]
    command = " ".join(shlex.quote(word) for word in words)
    try:
        dataset = load(args.dataset)
    except DatasetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    configs = [*MAIN_CONFIGS, *(c for spec in args.ideas for c in load_ideas(spec))]
    progress = None if args.quiet else _stderr
    if progress:
        progress(
            f"{dataset.name}: {len(dataset.conversations)} conversations, "
            f"{sum(len(c.turns) for c in dataset.conversations)} turns, "
            f"{len(dataset.questions)} questions ({dataset.shape} shape)"
        )
    try:
        result = run(dataset, configs, args.split, progress)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not result.questions():
        print(f"error: no questions in split {args.split!r}", file=sys.stderr)
        return 2
    section = section_markdown(result, command, args.heading)
    print(section)
    if args.misses:
        print_misses(result, DEFAULT.label, args.misses)
    if args.json:
        args.json.write_text(json.dumps(per_question_json(result), indent=1) + "\n", encoding="utf-8")
    if args.write:
        write_section(args.heading, section)
        print(f"wrote {RESULTS_PATH}")
    return 0


if __name__ == "__main__":
    # An --ideas file imports this module by name: let it get this one, with the same Config.
    sys.modules.setdefault("retrieval_turns", sys.modules[__name__])
    sys.exit(main())
