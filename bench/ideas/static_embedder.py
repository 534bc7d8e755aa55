"""A static word-vector embedder distilled from all-MiniLM-L6-v2 (no model at run time):
measured and dropped (bench/RESULTS.md, "choosing tokenizer 3"); kept here, with
bench/distill_static.py, so that the measurement can be repeated (bench/ideas/static.py
plugs it in as embedders "static" and "hashing+static").

bench/distill_static.py ran the model once per vocabulary entry (the most frequent English
words and the model's WordPiece pieces), reduced the outputs by PCA and weighted each row by
how rare its word is (SIF). A text's vector is the sum of its words' rows, L2-normalized:
a few microseconds a word, pure Python. A word that is not in the table is split into the
table's pieces, greedily longest first (as WordPiece does); a word that cannot be split is
left out. Only letters of the Latin alphabet have rows: CJK and other scripts give nothing
here (the hashing embedder keeps them).

The table is bench/distill_static.py's output, at the path in the environment variable
STATIC_TABLE (not in the repository: 8.4 MB for an idea that did not win). Layout (little-endian): ``MAGIC``; three
uint32 (rows, dimensions, vocabulary bytes); the vocabulary, one entry a line (UTF-8; a
piece that continues a word starts with ``##``); one float32 scale per row; the rows as
int8 (a row's values are its scale times the int8 numbers).
"""

from __future__ import annotations

import math
import os
import re
import struct
import threading
import unicodedata
from array import array
from collections.abc import Callable, Collection
from pathlib import Path

from state.tokenize import STOPWORDS, tokens

TABLE_PATH = Path(os.environ.get("STATIC_TABLE", "static_minilm.bin"))
MAGIC = b"MCSTATIC1\n"
_WORD = re.compile(r"[a-z]+")


class StaticTable:
    """The word table: entry -> row, and each row's scaled values."""

    def __init__(self, data: bytes) -> None:
        if not data.startswith(MAGIC):
            raise ValueError("the static embedder's table is not in its format")
        offset = len(MAGIC)
        rows, self.dimension, vocab_bytes = struct.unpack_from("<III", data, offset)
        offset += 12
        entries = data[offset : offset + vocab_bytes].decode("utf-8").split("\n")
        offset += vocab_bytes
        if len(entries) != rows:
            raise ValueError("the static embedder's table is truncated")
        self.rows = {entry: index for index, entry in enumerate(entries)}
        self.scales = array("f")
        self.scales.frombytes(data[offset : offset + 4 * rows])
        offset += 4 * rows
        self.values = memoryview(data[offset : offset + rows * self.dimension]).cast("b")
        if len(self.values) != rows * self.dimension:
            raise ValueError("the static embedder's table is truncated")

        self._packed: dict[int, int] = {}

    def packed(self, index: int) -> int:
        """Row ``index`` as one integer of 32-bit fields, each value + 128 (cached).

        A text's vector is a weighted sum of rows; summing 256 floats a row in Python costs
        ~50 us a word, one multiply-add of these integers a few (SIMD within a register: the
        fields never carry into each other, see :meth:`weighted_sum`). Measured on 500
        turns of bench/data/conversations: 0.14 ms a text instead of 0.70."""
        found = self._packed.get(index)
        if found is None:
            if len(self._packed) >= PACKED_CACHE_ROWS:
                self._packed.clear()
            start = index * self.dimension
            fields = array("I", [v + 128 for v in self.values[start : start + self.dimension]])
            found = self._packed[index] = int.from_bytes(fields.tobytes(), "little")
        return found

    def weighted_sum(self, terms: list[tuple[int, float]]) -> list[float]:
        """The sum of ``weight * row`` over (row, weight >= 0) ``terms``, unnormalized.

        Each term's weight times its row's scale is rounded to one of WEIGHT_LEVELS steps of
        the largest (error below 1/8000 of it); a field then holds at most WEIGHT_LEVELS *
        255 per term, so FLUSH_TERMS terms fit in 32 bits before the sum is unpacked."""
        out = [0.0] * self.dimension
        scaled = [(index, weight * self.scales[index]) for index, weight in terms if weight > 0]
        if not scaled:
            return out
        step = max(value for _, value in scaled) / WEIGHT_LEVELS
        for start in range(0, len(scaled), FLUSH_TERMS):
            total = acc = 0
            for index, value in scaled[start : start + FLUSH_TERMS]:
                level = round(value / step)
                if level:
                    acc += level * self.packed(index)
                    total += level
            fields = array("I")
            fields.frombytes(acc.to_bytes(4 * self.dimension, "little"))
            bias = 128 * total
            out = [o + (f - bias) * step for o, f in zip(out, fields, strict=True)]
        return out


PACKED_CACHE_ROWS = 8192  # ~1 KB each: the words of a store's recent writes
WEIGHT_LEVELS = 4095
FLUSH_TERMS = 4096  # 4096 * 4095 * 255 < 2**32

Frequencies = Callable[[Collection[str]], tuple[dict[str, int], int]]  # as state/embedders.py

_lock = threading.Lock()
_table: StaticTable | None = None


def load_table(path: Path = TABLE_PATH) -> StaticTable:
    """The table, read once per process."""
    global _table
    with _lock:
        if _table is None:
            _table = StaticTable(path.read_bytes())
        return _table


def words(text: str) -> list[str]:
    """The lower-case Latin-letter words of ``text`` (accents stripped: café -> cafe)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
    return _WORD.findall(text.lower())


class StaticEmbedder:
    """Sums of distilled MiniLM word rows (offline, deterministic, ~3 us a word)."""

    coarse_scan = False  # dense vectors: the hashing embedder's coarse codes do not fit them
    runs_inline = True  # cheap and no I/O, like the hashing embedder

    def __init__(self, dimension: int = 0, table: StaticTable | None = None) -> None:
        self.table = table or load_table()
        self.name = "static-minilm-v1"  # bump when the table or the sums change
        self.dimension = self.table.dimension
        self._split: dict[str, tuple[int, ...]] = {}

    def rows_of(self, word: str) -> tuple[int, ...]:
        """The rows for one word: its own, or its WordPiece split; () if it has none."""
        found = self._split.get(word)
        if found is not None:
            return found
        rows = self.table.rows
        index = rows.get(word)
        if index is not None:
            found = (index,)
        else:
            found = _wordpiece(rows, word)
        if len(self._split) > 65536:
            self._split.clear()
        self._split[word] = found
        return found

    def weighted(self, weights: dict[str, float]) -> list[float]:
        """The normalized sum of each word's rows times its weight."""
        vector = self.table.weighted_sum(
            [(index, weight) for word, weight in weights.items() for index in self.rows_of(word)]
        )
        norm = math.sqrt(sum(v * v for v in vector))
        return [v / norm for v in vector] if norm else vector

    drop_stopwords = True
    query_idf = True

    def _counts(self, text: str) -> dict[str, float]:
        counts: dict[str, float] = {}
        stop = STOPWORDS if self.drop_stopwords else ()
        for word in words(text):
            if word not in stop:
                counts[word] = counts.get(word, 0.0) + 1.0
        return counts

    def embed(self, text: str) -> list[float]:
        return self.weighted(self._counts(text))

    def embed_query(self, text: str, frequencies: Frequencies) -> list[float]:
        """A query's vector: each word's rows also weighted by the inverse document frequency
        of its index token (a name every turn holds tells little); a word no record holds
        gets the highest weight (a paraphrase's word is exactly that)."""
        counts = self._counts(text)
        if not self.query_idf:
            return self.weighted(counts)
        token_of = {word: (tokens(word, lemmas=True) or [word])[0] for word in counts}
        known, total = frequencies(set(token_of.values()))
        return self.weighted(
            {word: count * _idf(known.get(token_of[word], 0), total) for word, count in counts.items()}
        )


def _idf(frequency: int, total: int) -> float:
    """BM25's inverse document frequency in the always-positive form (Lucene's)."""
    return math.log(1.0 + (total - frequency + 0.5) / (frequency + 0.5))


def _wordpiece(rows: dict[str, int], word: str) -> tuple[int, ...]:
    """Greedy longest-first split of ``word`` into the table's entries (the first piece a
    word start, the others ``##`` continuations); () if some part matches nothing."""
    out = []
    start = 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            index = rows.get(piece)
            if index is not None:
                out.append(index)
                break
            end -= 1
        else:
            return ()
        start = end
    return tuple(out)


class HybridEmbedder:
    """The hashing vector and the static one side by side (``hashing+static``).

    A document's vector is ``[h, s, m] / sqrt(2)``: ``h`` its hashing vector, ``s`` its
    static vector (both unit length), ``m`` a marker of the same length in MARKER_SLOTS
    slots of its own when the text has no word with a row (Chinese, say), so that every
    stored vector has one length and the cosine of a query with it is a plain sum of parts.
    A query weighs the parts (:meth:`embed_query`): a mostly CJK query is its hashing
    vector alone (ranked as by the hashing embedder), any other ``[QUERY_HASHING_WEIGHT *
    h, s, 0]``. Measured with vector_mode "rerank" (what "auto" would have had to become for
    English queries). A namespace of more than 4 chunks would need coarse codes of the
    hashing part only; the bench's namespaces are smaller, so this class leaves them alone.
    """

    coarse_scan = False
    runs_inline = True
    query_hashing_weight = 0.0

    def __init__(self, dimension: int = 1024) -> None:
        from state.embedders import HashingEmbedder

        self.hashing = HashingEmbedder(dimension)
        self.static = StaticEmbedder()
        self.name = f"{self.hashing.name}+{self.static.name}"
        self.hashing_span = self.hashing.dimension
        self.dimension = self.hashing.dimension + self.static.dimension + MARKER_SLOTS

    def _join(self, hashed: list[float], scale: float, static: list[float], marker: float) -> list[float]:
        """``scale * hashed``, then ``static``, then the marker slots, as one vector."""
        from state.embedders import HashedVector

        vector = HashedVector([x * scale for x in hashed])
        nonzero = getattr(hashed, "nonzero", None)
        vector.extend(static)
        vector.extend([marker] * MARKER_SLOTS)
        if nonzero is not None and scale:  # serialize() visits these slots only
            vector.nonzero = [*nonzero, *range(self.hashing_span, self.dimension)]
        return vector

    def embed(self, text: str) -> list[float]:
        half = math.sqrt(0.5)
        hashed = self.hashing.embed(text)
        static = self.static.embed(text)
        if any(static):
            return self._join(hashed, half, [x * half for x in static], 0.0)
        return self._join(hashed, half, [0.0] * self.static.dimension, half / math.sqrt(MARKER_SLOTS))

    def embed_query(self, text: str, frequencies: Frequencies) -> list[float]:
        hashed = self.hashing.embed_query(text, frequencies)
        if _mostly_cjk(text):
            return self._join(hashed, 1.0, [0.0] * self.static.dimension, 0.0)
        static = self.static.embed_query(text, frequencies)
        return self._join(hashed, self.query_hashing_weight, static, 0.0)


MARKER_SLOTS = 4


def _mostly_cjk(text: str) -> bool:
    """As state/search.py's mostly_cjk, on the query's terms."""
    from state.tokenize import is_cjk_char, query_terms

    terms = query_terms(text)
    return bool(terms) and 2 * sum(1 for t in terms if is_cjk_char(t[:1])) >= len(terms)
