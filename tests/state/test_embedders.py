"""The hashing embedder's output is frozen: stored vectors are compared with new queries'
vectors, so a faster implementation must give the very same floats and int8 bytes.

The digests below belong to ``hashing-v3`` (the features of tokenizer version 2): a change
of the features must change the embedder's name too, which rebuilds the stored vectors.
They were first computed with the implementation before the speed-up (feature by feature
through ``_features`` and ``_hash``; ``serialize`` scanning every slot). The query digests
changed once since, on purpose: with tokenizer 5 a query token's document frequency is looked
up by its folded form (the corpus's "ÆØÅ"), which stored vectors do not depend on."""

from __future__ import annotations

import hashlib
import random
import struct
import zlib

import pytest

from state.embedders import HashedVector, HashingEmbedder, serialize

FROZEN_NAME = "hashing-v3"
FROZEN = {  # dimension -> (embed, serialize(embed), embed_query) digests
    8: (
        "41603bb3aae979c9f76b7fb6f959f195",
        "653b2118eb66acbe8c683372914ee98a",
        "64768f9efae1bb91b1f678dbbf7f390d",
    ),
    384: (
        "dd394460a73eaf989764af26c3ae75cd",
        "911cde64840fef187649823f5e48d69d",
        "e65dd416885f1a9321d8037799035fa9",
    ),
    1024: (
        "2498bdd2715bb99b8c0fc789d202c098",
        "3662ffb0865dff6722e9f8115cc25a53",
        "8c87ad5f80fae79bd4793acd52a12e02",
    ),
}
FROZEN_SERIALIZE = "b0cc1fdecab770e6dd8c8c3e61e75cce"  # plain (not hashed) lists


def corpus() -> list[str]:
    """Fixed edge cases, then seeded random mixes of English (3-letter words that are also
    trigrams of longer ones), CJK, kana, Hangul, identifiers and long repeated texts."""
    rng = random.Random(20261130)
    words = (
        "memory memories decided deciding the a green tea morning berlin meeting friday "
        "abc abcd xabcx abcde running runs ran quickly I'm I've my you 42 3.14 foo_bar "
        "naïve café Zürich ÆØÅ straße résumé"
    ).split()
    cjk = "用户在柏林工作周五开会我的记忆系统原生画画绘画的了是吗こんにちはカタカナ한국어입니다"
    out = [
        "",
        "   ",
        "the a an of",
        "的了是",
        "I prefer green tea in the morning",
        "用户在柏林工作，周五开会",
        "abc abc abc xabcx abc",
        "memory " * 50,
        "Mixed 中文 and English, with numbers 12345 and_snake_case!",
        "x" * 300,
        "Ünïcödé àccents — dashes “quotes” emoji 🎉🎉 tabs\tand\nnewlines",
    ]
    for n in (1, 3, 10, 40, 150, 400):
        for _ in range(4):
            parts = []
            for _ in range(n):
                r = rng.random()
                if r < 0.6:
                    parts.append(rng.choice(words))
                elif r < 0.85:
                    parts.append("".join(rng.choice(cjk) for _ in range(rng.randint(1, 6))))
                else:
                    parts.append(
                        "".join(
                            rng.choice("abcdefghijklmnopqrstuvwxyz0123456789_")
                            for _ in range(rng.randint(1, 14))
                        )
                    )
            out.append(rng.choice([" ", ", ", "\n"]).join(parts))
    return out


def frequencies(tokens):
    """Made-up document frequencies (some tokens unseen, some common) for embed_query."""
    return {t: zlib.crc32(t.encode()) % 7 for t in tokens}, 100


@pytest.mark.parametrize("dimension", sorted(FROZEN))
def test_vectors_and_bytes_are_the_frozen_ones(dimension):
    embedder = HashingEmbedder(dimension)
    assert embedder.name == FROZEN_NAME  # new digests need a new name (stored vectors rebuild)
    vectors, blobs, queries = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
    for text in corpus():
        vector = embedder.embed(text)
        assert isinstance(vector, list) and len(vector) == dimension
        vectors.update(struct.pack(f"<{dimension}d", *vector))
        blobs.update(serialize(vector))
        assert serialize(list(vector)) == serialize(vector)  # the sparse path = the full scan
        queries.update(struct.pack(f"<{dimension}d", *embedder.embed_query(text, frequencies)))
    found = (vectors.hexdigest()[:32], blobs.hexdigest()[:32], queries.hexdigest()[:32])
    assert found == FROZEN[dimension]


def test_serialize_of_plain_lists_is_frozen():
    """Banker's rounding at ties, negative bytes, denormals, dense and sparse lists."""
    rng = random.Random(7)
    digest = hashlib.sha256()
    vectors = [
        [],
        [0.0] * 16,
        [127.0, 0.5, 1.5, -2.5, -0.5, 2.5, 0.0, -127.0],
        [-3.0, 1.0, 0.0],
        [1e-300, -1e-300, 5e-324],
        [0.25] * 10,
    ]
    for n in (1, 8, 384, 1024):
        vectors.append([rng.uniform(-1, 1) for _ in range(n)])
        vectors.append([rng.choice([0.0, 0.0, 0.0, rng.gauss(0, 1)]) for _ in range(n)])
    for vector in vectors:
        digest.update(serialize(vector))
        digest.update(b"|")
    assert digest.hexdigest()[:32] == FROZEN_SERIALIZE


def test_a_changed_hashed_vector_is_serialized_whole():
    """The non-zero slots a hashed vector knows are forgotten when the list changes."""
    vector = HashingEmbedder(16).embed("green tea in the morning")
    assert isinstance(vector, HashedVector) and vector.nonzero
    zero = next(i for i, v in enumerate(vector) if v == 0.0)
    vector[zero] = 5.0
    assert vector.nonzero is None and serialize(vector) == serialize(list(vector))
    vector.append(-9.0)
    assert serialize(vector) == serialize(list(vector))


def test_a_query_word_is_known_by_the_form_the_index_holds():
    """Tokenizer 5's index holds "Łódź" as "lodz" and ٢٠٢٣ as 2023: a query with them keeps
    the word itself as a feature (weighted by that form's frequency), not only its trigrams."""
    embedder = HashingEmbedder(1024)

    def holding(*held):
        return lambda terms: ({t: 3 for t in terms if t in held}, 100)

    for query, form in (("Łódź", "lodz"), ("٢٠٢٣", "2023")):
        known = embedder.embed_query(query, holding(form))
        unknown = embedder.embed_query(query, holding())
        assert known != unknown, query
        assert known == embedder.embed_query(query, holding(form, "unrelated"))
