"""The static embedder distilled from all-MiniLM-L6-v2 (bench/ideas/static_embedder.py), alone
and beside the hashing vector, for bench/ideas/sweep.py and bench/retrieval_turns.py --ideas.

    /work/venv-distill/bin/python bench/distill_static.py --out /tmp/static_minilm.bin
    cd bench && STATIC_TABLE=/tmp/static_minilm.bin STATIC_ROUND=final \
        ../.venv/bin/python ideas/sweep.py --split tune --madial ideas/static.py

STATIC_ROUND picks the configs: ``static`` (weights and modes), ``hybrid`` (the hashing
vector beside it), ``tables`` (STATIC_TABLES=a.bin,b.bin: tables distilled with other
options), ``final`` (the shapes reported in bench/RESULTS.md), ``expand`` (the default
search, its query with each word's nearest words of the conversation added), ``thesaurus``
(the same with each word's nearest table words that the store holds, from the JSON that
bench/distill_static.py --neighbours writes, at STATIC_NEIGHBOURS)."""

import os
import sys
from pathlib import Path

from retrieval_turns import Config, namespace

sys.path.insert(0, str(Path(__file__).resolve().parent))  # static_embedder.py, beside this file
import static_embedder  # noqa: E402
from static_embedder import HybridEmbedder, StaticEmbedder, StaticTable  # noqa: E402

from state import embedders
from state.config import Settings
from state.tokenize import STOPWORDS

STATIC = Settings(embedder="static")
HYBRID = Settings(embedder="hashing+static")
# The two embedder names, for the stores these configs open (patches are applied then).
FACTORIES = {
    **embedders._FACTORIES,
    "static": lambda dimension: StaticEmbedder(),
    "hashing+static": HybridEmbedder,
}


def _with_factories(config: Config) -> Config:
    from dataclasses import replace

    return replace(config, patches=((embedders, "_FACTORIES", FACTORIES), *config.patches))


NO_IDF = ((StaticEmbedder, "query_idf", False),)
ROUND = os.environ.get("STATIC_ROUND", "hybrid")


def ideas() -> list[Config]:
    if ROUND == "expand":
        return [
            Config.shipped(f"expand: cosine >= {floor}, {cap} a word", rank=_expander(floor, cap))
            for floor, cap in ((0.5, 3), (0.55, 3), (0.6, 1), (0.6, 3), (0.6, 5), (0.65, 3), (0.7, 3))
        ]
    if ROUND == "thesaurus":
        return [
            Config.shipped(f"thesaurus: cosine >= {floor}, {cap} a word", rank=_thesaurus(floor, cap))
            for floor, cap in ((0.6, 1), (0.6, 3), (0.55, 1), (0.65, 1))
        ]
    return [_with_factories(c) for c in _ideas()]


def _thesaurus(floor: float, cap: int):
    """As :func:`_expander`, from precomputed neighbours: each word's nearest table words (5
    at most) that some turn of the store holds, which is what a product could afford."""
    import json

    table = json.loads(Path(os.environ["STATIC_NEIGHBOURS"]).read_text(encoding="utf-8"))
    held: dict[int, set[str]] = {}

    def rank(bench, question, limit):
        if id(bench) not in held:
            held[id(bench)] = {w for text in bench.texts.values() for w in static_embedder.words(text)}
        words = held[id(bench)]
        extra = [
            n
            for w in dict.fromkeys(static_embedder.words(question.question))
            if w not in STOPWORDS and len(w) > 2
            for n in [n for n, cosine in table.get(w, []) if cosine >= floor and n in words][:cap]
        ]
        text = " ".join([question.question, *extra])
        hits = bench.store.search.search(text, [namespace(question.conversation)], limit=limit)
        return [bench.keys[hit.seq] for hit in hits]

    return rank


def _expander(floor: float, cap: int):
    """A rank function: the shipped search of the question plus, for each of its words, the
    ``cap`` words of the conversation's turns whose static vectors are nearest to it (cosine
    at least ``floor``): the table as a thesaurus for BM25."""
    embedder = StaticEmbedder()
    vectors: dict[str, list[float]] = {}
    vocabularies: dict[tuple[int, str], list[str]] = {}
    nearest: dict[tuple[int, str, str], list[tuple[float, str]]] = {}

    def vector(word: str) -> list[float]:
        if word not in vectors:
            vectors[word] = embedder.weighted({word: 1.0})
        return vectors[word]

    def vocabulary(bench, conversation: str) -> list[str]:
        key = (id(bench), conversation)
        if key not in vocabularies:
            found = {
                w
                for (c, _), text in bench.texts.items()
                if c == conversation
                for w in static_embedder.words(text)
            }
            vocabularies[key] = sorted(w for w in found if w not in STOPWORDS and len(w) > 2)
        return vocabularies[key]

    def neighbours(bench, conversation: str, word: str) -> list[str]:
        key = (id(bench), conversation, word)
        if key not in nearest:
            query = vector(word)
            nearest[key] = (
                sorted(
                    (
                        (sum(map(float.__mul__, query, vector(w))), w)
                        for w in vocabulary(bench, conversation)
                        if w != word
                    ),
                    reverse=True,
                )
                if any(query)
                else []
            )
        return [w for similarity, w in nearest[key] if similarity >= floor][:cap]

    def rank(bench, question, limit):
        extra = [
            n
            for w in dict.fromkeys(static_embedder.words(question.question))
            if w not in STOPWORDS and len(w) > 2
            for n in neighbours(bench, question.conversation, w)
        ]
        text = " ".join([question.question, *extra])
        hits = bench.store.search.search(text, [namespace(question.conversation)], limit=limit)
        return [bench.keys[hit.seq] for hit in hits]

    return rank


def _ideas() -> list[Config]:
    if ROUND == "tables":  # STATIC_TABLES=a.bin,b.bin: tables of bench/distill_static.py
        out = []
        for path in os.environ["STATIC_TABLES"].split(","):
            patch = ((static_embedder, "_table", StaticTable(Path(path).read_bytes())),)
            name = Path(path).stem
            out += [
                Config(f"{name}: vector only", 0.0, 1.0, "always", settings=STATIC, patches=patch),
                Config(f"{name}: rerank 1:0.5", 1.0, 0.5, "rerank", settings=STATIC, patches=patch),
                Config(f"{name}: always 1:1", 1.0, 1.0, "always", settings=STATIC, patches=patch),
            ]
        return out
    if ROUND == "final":  # the table distilled with the defaults, the best shapes
        return [
            Config("static: vector only", 0.0, 1.0, "always", settings=STATIC),
            Config("static: rerank 1:0.5", 1.0, 0.5, "rerank", settings=STATIC),
            Config("static: always 1:1", 1.0, 1.0, "always", settings=STATIC),
            Config(
                "hybrid h0.3: rerank 1:0.5",
                1.0,
                0.5,
                "rerank",
                settings=HYBRID,
                patches=((HybridEmbedder, "query_hashing_weight", 0.3),),
            ),
            Config(
                "hybrid h0.3: rerank 1:1",
                1.0,
                1.0,
                "rerank",
                settings=HYBRID,
                patches=((HybridEmbedder, "query_hashing_weight", 0.3),),
            ),
        ]
    if ROUND == "quick":  # comparing tables (bench/distill_static.py's options)
        return [
            Config("static: vector only", 0.0, 1.0, "always", settings=STATIC),
            Config("static: rerank 1:0.5", 1.0, 0.5, "rerank", settings=STATIC),
            Config("static: always 1:1", 1.0, 1.0, "always", settings=STATIC),
        ]
    if ROUND == "static":
        out = [Config("static: vector only", 0.0, 1.0, "always", settings=STATIC)]
        for w in (1.0, 0.5, 0.3):
            out.append(Config(f"static: rerank 1:{w}", 1.0, w, "rerank", settings=STATIC))
            out.append(Config(f"static: always 1:{w}", 1.0, w, "always", settings=STATIC))
        return out + [
            Config("static no idf: vector only", 0.0, 1.0, "always", settings=STATIC, patches=NO_IDF),
            Config("static no idf: rerank 1:0.5", 1.0, 0.5, "rerank", settings=STATIC, patches=NO_IDF),
        ]
    out = []
    for hw in (0.0, 0.3, 0.6):
        patch = ((HybridEmbedder, "query_hashing_weight", hw),)
        out += [
            Config(f"hybrid h{hw}: vector only", 0.0, 1.0, "always", settings=HYBRID, patches=patch),
            Config(f"hybrid h{hw}: auto 1:1", 1.0, 1.0, "auto", settings=HYBRID, patches=patch),
            Config(f"hybrid h{hw}: auto 1:0.5", 1.0, 0.5, "auto", settings=HYBRID, patches=patch),
            Config(f"hybrid h{hw}: always 1:1", 1.0, 1.0, "always", settings=HYBRID, patches=patch),
        ]
    return out
