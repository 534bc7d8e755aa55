"""Retrieval quality of the hybrid search on MADial-Bench (Chinese and English).

Ingests the MADial-Bench memory archives into a real ``Store`` (one temporary database per
language, one namespace per user: ``madial-{lang}/user-{user_id}``), turns each test
dialogue into a query and searches only the dialogue's own user's namespace, as the
official setup does. It reports hit@1/3/5/10, recall@5/10 and MRR@10 for BM25 alone, the
hashing-vector search alone and several fused weight pairs, for three query variants:

* ``full``  - every dialogue line before the first recall turn (the official query);
* ``last1`` - the last user line before that turn;
* ``last2`` - the last two lines before that turn.

The data layout and query construction follow /work/shared/eval/README.md. With
``--experiments`` the script also measures tokenizer/embedder ideas by monkeypatching
them into a fresh store (the project's files are not modified). With ``--write`` the
results replace the "## Retrieval quality: MADial-Bench" section of bench/RESULTS.md.

Example::

    python bench/retrieval_madial.py --experiments --write
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import re
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from results import RESULTS_PATH, write_section
from state.config import Settings
from state.memories import NewMemory
from state.store import Store

DEFAULT_DATA = Path("/work/shared/eval/data/madial-bench")
SECTION_HEADING = "## Retrieval quality: MADial-Bench"
LANGS = ("zh", "en")
VARIANTS = ("full", "last1", "last2")
SUMMARY_VARIANTS = ("last2", "full")  # the variants the overall numbers average over
KS = (1, 3, 5, 10)
LIMIT = 10
_SPEAKER = re.compile(r"^\s*<(\w+)>\s*:")


@dataclass(frozen=True)
class Config:
    """A named pair of fusion weights and when the vector ranking is consulted."""

    label: str
    bm25_weight: float
    vector_weight: float
    vector_mode: str = "always"


CONFIGS: tuple[Config, ...] = (
    Config("bm25 only", 1.0, 0.0),
    Config("default: fallback 1:0.25", 1.0, 0.25, "fallback"),
    Config("vector only", 0.0, 1.0),
    Config("fused 1:0.1", 1.0, 0.1),
    Config("fused 1:0.25", 1.0, 0.25),
    Config("fused 1:0.5", 1.0, 0.5),
    Config("fused 1:1", 1.0, 1.0),
    Config("fused 1:2", 1.0, 2.0),
)

EXPERIMENT_CONFIGS = tuple(c for c in CONFIGS if c.label != "fused 1:2")


@dataclass(frozen=True)
class Idea:
    """A change measured on a copy: attributes to monkeypatch and the store settings."""

    name: str
    patches: list[tuple[object, str, object]]
    settings: Settings = field(default_factory=Settings)


@dataclass(frozen=True)
class Memory:
    madial_id: str  # e.g. "madial-zh/17"
    namespace: str
    text: str


@dataclass(frozen=True)
class Query:
    qid: str
    namespace: str
    text: str
    gold: frozenset[str]


@dataclass
class Scores:
    """Per-query metric sums; ``mean`` turns them into averages."""

    n: int = 0
    sums: dict[str, float] = field(default_factory=dict)

    def add(self, metrics: dict[str, float]) -> None:
        self.n += 1
        for name, value in metrics.items():
            self.sums[name] = self.sums.get(name, 0.0) + value

    def mean(self, name: str) -> float:
        return self.sums.get(name, 0.0) / self.n if self.n else 0.0


METRIC_NAMES = (*(f"hit@{k}" for k in KS), "R@5", "R@10", "MRR@10")


# -- data --------------------------------------------------------------------------------


def read_jsonl(path: Path) -> list[dict]:
    """The files are JSON Lines despite their .json suffix."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _memory_records(data: Path, lang: str) -> dict[str, dict]:
    records: dict[str, dict] = {}
    for line in read_jsonl(data / lang / f"MADial-Bench-{lang}-memory.json"):
        records.update(line)
    return records


def load_memories(data: Path, lang: str) -> list[Memory]:
    """One memory per record; English owners come from the zh record with the same id."""
    owners = {mid: rec["user-id"] for mid, rec in _memory_records(data, "zh").items()}
    return [
        Memory(f"madial-{lang}/{mid}", f"madial-{lang}/user-{owners[mid]}", rec["event"])
        for mid, rec in _memory_records(data, lang).items()
    ]


def speaker(line: str) -> str | None:
    """The ``<Name>:`` tag of a dialogue line, or None for the few untagged lines."""
    match = _SPEAKER.match(line)
    return match.group(1) if match else None


def query_text(lines: Sequence[str], variant: str) -> str:
    """The query for one variant, from the lines before the first recall turn (no <BOD>)."""
    if variant == "full":
        return "".join(lines)
    if variant == "last2":
        return "".join(lines[-2:])
    if variant == "last1":
        for line in reversed(lines):
            if speaker(line) not in (None, "Assistant"):
                return line
        return lines[-1]
    raise ValueError(f"unknown variant {variant!r}")


def load_queries(data: Path, lang: str, variant: str) -> list[Query]:
    dialogues = read_jsonl(data / lang / f"MADial-Bench-{lang}-dialogue.json")
    queries = []
    for qi, d in enumerate(dialogues):
        lines = d["dialogue"][1 : d["test-turn"][0]]
        queries.append(Query(
            qid=f"madial-{lang}#{d.get('id', qi)}",
            namespace=f"madial-{lang}/user-{d['user-id']}",
            text=query_text(lines, variant),
            gold=frozenset(f"madial-{lang}/{r}" for r in d["relevant-id"]),
        ))
    return queries


# -- store -------------------------------------------------------------------------------


def ingest(store: Store, memories: Sequence[Memory]) -> dict[str, str]:
    """Create one record per memory; return record id -> madial id."""
    id_map: dict[str, str] = {}
    with store.transaction():
        for memory in memories:
            record = store.memories.create(NewMemory(
                namespace=memory.namespace, kind="event", content=memory.text,
                source="bench", title="",
            ))
            id_map[record["id"]] = memory.madial_id
    return id_map


@contextlib.contextmanager
def open_store(
    memories: Sequence[Memory], settings: Settings | None = None,
) -> Iterator[tuple[Store, dict[str, str]]]:
    """A fresh on-disk store in a temp dir holding ``memories``."""
    with tempfile.TemporaryDirectory(prefix="madial-") as tmp:
        store = Store.open(Path(tmp) / "bench.db", settings or Settings())
        try:
            yield store, ingest(store, memories)
        finally:
            store.close()


def ranked_ids(store: Store, id_map: dict[str, str], query: Query) -> list[str]:
    """The madial ids of the top-``LIMIT`` hits, best first."""
    hits = store.search.search(query.text, [query.namespace], limit=LIMIT)
    records = store.memories.by_seqs([hit.seq for hit in hits])
    return [id_map[records[hit.seq]["id"]] for hit in hits]


# -- metrics -----------------------------------------------------------------------------


def query_metrics(ranked: Sequence[str], gold: frozenset[str]) -> dict[str, float]:
    """hit@k, recall@k and MRR@10 for one ranked list against a binary gold set."""
    first = next((i for i, mid in enumerate(ranked[:LIMIT], 1) if mid in gold), None)
    metrics = {f"hit@{k}": float(first is not None and first <= k) for k in KS}
    for k in (5, 10):
        metrics[f"R@{k}"] = len(gold.intersection(ranked[:k])) / len(gold)
    metrics["MRR@10"] = 1.0 / first if first else 0.0
    return metrics


def evaluate(
    store: Store, id_map: dict[str, str], queries: Sequence[Query], config: Config,
    misses: list[tuple[Query, list[str]]] | None = None,
) -> Scores:
    """Run every query with the config's weights; optionally collect the hit@5 misses."""
    store.search.bm25_weight = config.bm25_weight
    store.search.vector_weight = config.vector_weight
    store.search.vector_mode = config.vector_mode
    scores = Scores()
    for query in queries:
        ranked = ranked_ids(store, id_map, query)
        metrics = query_metrics(ranked, query.gold)
        scores.add(metrics)
        if misses is not None and not metrics["hit@5"]:
            misses.append((query, ranked))
    return scores


Results = dict[tuple[str, str, str], Scores]  # (lang, variant, config label) -> scores


def run_grid(
    data: Path, configs: Sequence[Config], settings: Settings | None = None,
    variants: Sequence[str] = VARIANTS,
) -> Results:
    """Every language x query variant x search config on one store per language."""
    results: Results = {}
    for lang in LANGS:
        with open_store(load_memories(data, lang), settings) as (store, id_map):
            for variant in variants:
                queries = load_queries(data, lang, variant)
                for config in configs:
                    results[(lang, variant, config.label)] = evaluate(
                        store, id_map, queries, config)
    return results


def overall(
    results: Results, label: str, variants: Sequence[str] = SUMMARY_VARIANTS,
) -> tuple[float, float]:
    """Mean MRR@10 and hit@5 of one config over both languages and the given variants."""
    cells = [s for (_, variant, lab), s in results.items() if lab == label and variant in variants]
    return (sum(s.mean("MRR@10") for s in cells) / len(cells),
            sum(s.mean("hit@5") for s in cells) / len(cells))


# -- experiments (monkeypatched tokenizer/embedder ideas) --------------------------------


@contextlib.contextmanager
def patched(patches: Sequence[tuple[object, str, object]]) -> Iterator[None]:
    """Temporarily set ``obj.name = value`` for each patch, restoring afterwards."""
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    try:
        for obj, name, value in patches:
            setattr(obj, name, value)
        yield
    finally:
        for obj, name, value in saved:
            setattr(obj, name, value)


_TAG = re.compile(r"<\w+>\s*:")


def _ideas() -> list[Idea]:
    """Tokenizer/embedder ideas, each applied to a copy of the behaviour by monkeypatching."""
    import state.embedders as embedders
    import state.tokenize as tokenize

    base_tokens = tokenize.tokens
    base_features = embedders.HashingEmbedder._features

    def tokens_no_speakers(text: str, *, for_query: bool = False) -> list[str]:
        return base_tokens(_TAG.sub(" ", text), for_query=for_query)

    def features_no_trigrams(self: object, text: str) -> list[tuple[str, float]]:
        return [(f, w) for f, w in base_features(self, text) if w == 1.0]

    # Already adopted after earlier runs of this script: 256 BM25 query terms (was 64),
    # plural/-es folding, CJK unigrams in the embedding, dimension 512 (was 256).
    return [
        Idea("speaker tags not tokenized", [(tokenize, "tokens", tokens_no_speakers),
                                            (embedders, "tokens", tokens_no_speakers)]),
        Idea("hashing without char trigrams",
             [(embedders.HashingEmbedder, "_features", features_no_trigrams)]),
        Idea("hashing dimension 256 (old default)", [], Settings(dimension=256)),
        Idea("hashing dimension 1024", [], Settings(dimension=1024)),
    ]


def run_experiments(
    data: Path, configs: Sequence[Config], baseline: Results,
) -> dict[str, Results]:
    """The baseline and each idea, each idea on a freshly built store with the same grid."""
    out = {"baseline": baseline}
    for idea in _ideas():
        with patched(idea.patches):
            out[idea.name] = run_grid(data, configs, idea.settings, SUMMARY_VARIANTS)
    return out


# -- output ------------------------------------------------------------------------------


def results_table(results: Results, configs: Sequence[Config]) -> str:
    header = "| lang | query | search | " + " | ".join(METRIC_NAMES) + " |"
    rule = "| --- | --- | --- | " + " | ".join("---:" for _ in METRIC_NAMES) + " |"
    rows = [header, rule]
    for lang in LANGS:
        for variant in VARIANTS:
            for config in configs:
                scores = results.get((lang, variant, config.label))
                if scores is None:
                    continue
                cells = " | ".join(f"{scores.mean(m):.3f}" for m in METRIC_NAMES)
                rows.append(f"| {lang} | {variant} | {config.label} | {cells} |")
    return "\n".join(rows)


def summary_table(results: Results, configs: Sequence[Config]) -> str:
    rows = ["| search (bm25:vector) | MRR@10 | hit@5 |", "| --- | ---: | ---: |"]
    for config in configs:
        mrr, hit5 = overall(results, config.label)
        rows.append(f"| {config.label} | {mrr:.3f} | {hit5:.3f} |")
    return "\n".join(rows)


def experiments_table(experiments: dict[str, Results], configs: Sequence[Config]) -> str:
    """MRR@10 / hit@5 per idea, averaged over zh+en and last2+full, per search config."""
    rows = ["| idea | " + " | ".join(c.label for c in configs) + " |",
            "| --- | " + " | ".join("---:" for _ in configs) + " |"]
    for name, results in experiments.items():
        cells = []
        for config in configs:
            mrr, hit5 = overall(results, config.label)
            cells.append(f"{mrr:.3f} / {hit5:.3f}")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def print_misses(data: Path, lang: str, variant: str, config: Config, count: int) -> None:
    """Show a few hit@5 misses (query tail, gold texts, top-3 retrieved texts)."""
    memories = load_memories(data, lang)
    texts = {m.madial_id: m.text for m in memories}
    misses: list[tuple[Query, list[str]]] = []
    with open_store(memories) as (store, id_map):
        evaluate(store, id_map, load_queries(data, lang, variant), config, misses)
    print(f"\n{len(misses)} hit@5 misses for {lang}/{variant}/{config.label}; first {count}:")
    for query, ranked in misses[:count]:
        print(f"\n{query.qid}  query: {query.text.strip()[-160:]!r}")
        for mid in sorted(query.gold)[:3]:
            print(f"   gold {mid}: {texts[mid]}")
        for mid in ranked[:3]:
            print(f"   got  {mid}: {texts[mid]}")


def section_markdown(
    results: Results, configs: Sequence[Config], command: str, seconds: float,
    experiments: dict[str, Results] | None,
) -> str:
    parts = [
        SECTION_HEADING,
        "",
        f"Command (repository root, project venv): `{command}`  ",
        f"Date: {dt.date.today().isoformat()}; machine: {platform.machine()} {platform.system()}, "
        f"{os.cpu_count()} cores, "
        f"Python {platform.python_version()}; run time {seconds:.1f} s.",
        "",
        "Data: MADial-Bench (zh 171 memories, en 160; 160 dialogues each), one namespace per "
        "user, each query searches only its own user's memories (83-88 candidates), limit=10, "
        f"default embedder (hashing, dimension {Settings().dimension}). Queries: `full` = every line before the "
        "first recall turn, `last1` = last user line, `last2` = last two lines.",
        "",
        "Overall (mean over zh+en and the `last2`+`full` queries):",
        "",
        summary_table(results, configs),
        "",
        results_table(results, configs),
    ]
    if experiments:
        parts += [
            "",
            "Ideas measured by monkeypatching a copy (MRR@10 / hit@5, mean over zh+en and "
            "`last2`+`full`):",
            "",
            experiments_table(experiments, EXPERIMENT_CONFIGS),
        ]
    return "\n".join(parts) + "\n"


def write_results(section: str) -> None:
    write_section(SECTION_HEADING, section)


# -- main --------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA,
                        help="MADial-Bench directory with zh/ and en/ (default: %(default)s)")
    parser.add_argument("--write", action="store_true",
                        help=f"replace the '{SECTION_HEADING[3:]}' section of {RESULTS_PATH}")
    parser.add_argument("--experiments", action="store_true",
                        help="also measure tokenizer/embedder ideas (monkeypatched copies)")
    parser.add_argument("--misses", type=int, default=0, metavar="N",
                        help="print N hit@5 misses of the default fused search per language")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    results = run_grid(args.data, CONFIGS)
    experiments = None
    if args.experiments:
        experiments = run_experiments(args.data, EXPERIMENT_CONFIGS, results)
    seconds = time.perf_counter() - started
    words = ["python", "bench/retrieval_madial.py", *(sys.argv[1:] if argv is None else argv)]
    command = " ".join(shlex.quote(word) for word in words)
    section = section_markdown(results, CONFIGS, command, seconds, experiments)
    print(section)
    if args.misses:
        defaults = Settings()
        default = Config("default weights", defaults.bm25_weight, defaults.vector_weight,
                         defaults.vector_mode)
        for lang in LANGS:
            print_misses(args.data, lang, "last2", default, args.misses)
    if args.write:
        write_results(section)
        print(f"wrote {RESULTS_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
