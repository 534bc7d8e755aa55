"""Embedders for the vector half of hybrid search, behind one small interface.

The default, ``hashing``, needs no model and no download: it is feature hashing of word
tokens, CJK bigrams and character trigrams into a fixed-size, L2-normalized vector. It is a
lexical embedding, so it adds fuzzy matching (shared word parts, spelling variants, partial
Chinese words) rather than paraphrase understanding; BM25 stays the stronger signal and the
fusion weights say so (see bench/RESULTS.md). Other embedders plug in by name.
"""

from __future__ import annotations

import math
import struct
import zlib
from functools import lru_cache
from typing import Callable, Protocol

from state.errors import ConfigError
from state.tokenize import CJK_STOP, STOPWORDS, tokens


class Embedder(Protocol):
    """Turns text into a fixed-size float vector."""

    name: str
    dimension: int

    def embed(self, text: str) -> list[float]: ...


class HashingEmbedder:
    """Signed feature hashing of tokens and character n-grams (offline, deterministic)."""

    def __init__(self, dimension: int = 512) -> None:
        if dimension < 8:
            raise ConfigError("the hashing embedder needs a dimension of at least 8")
        self.name = "hashing-v2"  # bump when features change: stored vectors are rebuilt
        self.dimension = dimension

    def _features(self, text: str) -> list[tuple[str, float]]:
        features: list[tuple[str, float]] = []
        # Index-mode tokens (CJK unigrams and bigrams alike) so queries and documents are
        # embedded the same way; stopwords carry no meaning, only collisions.
        for token in tokens(text):
            if token in STOPWORDS or token in CJK_STOP:
                continue
            features.append((token, 1.0))
            if token.isascii() and len(token) > 3:
                padded = f"#{token}#"
                features.extend((padded[i : i + 3], 0.35) for i in range(len(padded) - 2))
        return features

    def embed(self, text: str) -> list[float]:
        counts: dict[str, float] = {}
        for feature, weight in self._features(text):
            counts[feature] = counts.get(feature, 0.0) + weight
        slots: dict[int, float] = {}
        for feature, weight in counts.items():
            index, sign = _slot(feature, self.dimension)
            # Sublinear term frequency: a word said five times is not five times as telling.
            value = 1.0 + math.log(weight) if weight >= 1.0 else weight
            slots[index] = slots.get(index, 0.0) + sign * value
        vector = [0.0] * self.dimension
        norm = math.sqrt(sum(v * v for v in slots.values()))
        if norm == 0.0:
            return vector
        for index, value in slots.items():
            vector[index] = value / norm
        return vector


@lru_cache(maxsize=65536)
def _slot(feature: str, dimension: int) -> tuple[int, float]:
    """Where a feature lands and with which sign (cached: vocabularies repeat a lot)."""
    h = zlib.crc32(feature.encode("utf-8"))
    return h % dimension, (1.0 if h & 0x80000000 else -1.0)


_FACTORIES: dict[str, Callable[[int], Embedder]] = {
    "hashing": HashingEmbedder,
}


def available_embedders() -> list[str]:
    return sorted(_FACTORIES)


def make_embedder(name: str, dimension: int) -> Embedder:
    """The embedder configured by name, or ConfigError naming the known ones."""
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise ConfigError(
            f"unknown embedder {name!r}; available: {', '.join(available_embedders())}"
        ) from None
    return factory(dimension)


def serialize(vector: list[float]) -> bytes:
    """sqlite-vec's compact float32 format."""
    return struct.pack(f"{len(vector)}f", *vector)
