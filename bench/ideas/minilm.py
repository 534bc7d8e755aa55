"""The optional sentence-transformers embedder (pip install '.[sentence-transformers]') for
bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/minilm.py"""

from retrieval_turns import Config

from state.config import Settings

MINILM = Settings().with_overrides(embedder="sentence-transformers:all-MiniLM-L6-v2")


def ideas() -> list[Config]:
    return [
        Config("minilm: vector only", 0.0, 1.0, "always", settings=MINILM),
        Config("minilm: always 1:1", 1.0, 1.0, "always", settings=MINILM),
        Config("minilm: rerank 1:1", 1.0, 1.0, "rerank", settings=MINILM),
    ]
