"""Hybrid search: FTS5 (BM25) and sqlite-vec vectors, fused by weighted reciprocal rank.

Both indexes share ``memory_records.seq`` as their rowid. Both are derived data:
``index_builds`` records what built each (tokenizer version, embedder and dimension), and a
change rebuilds them in the background (state/rebuild.py). Meanwhile the old FTS table
answers, queried with its own tokenizer's terms, and writes keep old and new tables right
(:meth:`SearchIndex.add`); the vectors rank only once their new table is complete.

How the vector ranking joins BM25 (``vector_mode``):

* ``auto`` (default): ``rerank`` for a query whose terms are mostly CJK, ``fallback`` for
  the others. Chosen on the tuning halves (bench/RESULTS.md): on MADial-Bench the hashing
  vectors' rerank raised Chinese MRR@10 (0.587 -> 0.612) and lowered English (0.552 ->
  0.539), and on English conversations it cost recall@10 (0.609 -> 0.534).
* ``fallback``: vectors only when BM25 finds fewer than asked (a misspelt query, words no
  record holds): a KNN scan of the namespace adds what words cannot find.
* ``rerank``: every query; the vectors rank BM25's candidates (the top ``candidates``
  records by BM25), plus the scan when BM25 finds fewer than asked. The cost does not grow
  with the store: scoring 50 stored vectors takes about half a millisecond, a KNN scan of
  10k vectors (1024 dimensions, int8) about eight; in a namespace of more than a few
  thousand hashing vectors the scan is of their coarse codes and ranks the nearest by
  cosine (EXACT_SCAN_MAX_CHUNKS), ~10-15 ms at 100k instead of ~200-270.
* ``always``: a KNN scan of the namespace on every query (for a semantic embedder, whose
  point is to find records that share no word with the query).

BM25 runs over a record's own tokens and, for a conversation turn, the two turns before it
at a fifth of the weight (state/turn_context.py).

BM25 ranks every match on a small store; on a large one, a query whose terms many records
hold ranks a bounded set (see MAX_RANKED_MATCHES).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import wait
from contextvars import ContextVar
from dataclasses import dataclass
from types import ModuleType

from state import turn_context
from state.db import Connection, sqlite_module, transaction
from state.embedders import Embedder, Frequencies, coarse_code, serialize
from state.group_commit import defer, run_deferred
from state.index_builds import (
    FTS,
    FTS_NEXT,
    VECTORS,
    IndexBuild,
    drop_trash,
    has_context,
    read_builds,
    tokenizer_for,
    vector_identity,
)
from state.json_text import loads
from state.languages import TAG, held
from state.redaction import merge_fts_index
from state.side_reads import SideReads
from state.tokenize import fts_match, language_forms

log = logging.getLogger(__name__)

# A request's query vectors, made in a worker thread before its handler runs when the embedder
# blocks (a model, or an embedding server that may take up to its timeout): the handler's
# search reads them here instead of calling the embedder on the event loop
# (daemon/endpoints.py, Endpoint.search_text). Per request: each aiohttp request is a task
# with its own context, so nothing is shared between requests or outlives one.
PREPARED_QUERY_VECTORS: ContextVar[dict[str, bytes | None] | None] = ContextVar(
    "prepared_query_vectors", default=None
)

# How often a search asks whether another connection has written since the languages the
# index holds were read (SearchIndex.languages): a text in a new language written by another
# process is found by its words at most this late.
LANGUAGES_CHECK_SECONDS = 1.0

RRF_K = 60  # the usual reciprocal-rank-fusion constant; flattens the top ranks less than 1
# Cosine similarity below which a vector match is treated as noise: the hashing embedder's
# collisions alone give unrelated texts |cos| of about 0.05.
MIN_VECTOR_SIMILARITY = 0.08
# Vectors are stored as int8 (state/embedders.py serialize) and compared by cosine
# (VECTOR_METRIC, state/index_builds.py): a quarter of float32's bytes, so writes, candidate
# lookups and scans move a quarter of the data (at 10k memories of 1024 dimensions a scan
# takes ~8 ms instead of ~12).
# Ranking inside FTS5 first is fastest; this many times the page size is taken from it before
# the namespace filter, with a full filtered query as the fallback when too few survive.
FTS_OVERFETCH = 4
# A single CJK character held by more than this share of the records (and by more than
# MIN_COMMON_RECORDS of them: small stores are fast anyway) is left out of the BM25 query.
# It weighs little (low IDF) and its posting list is what makes a Chinese OR-query slow:
# on bench/latency.py's 10k store, where every memory has Chinese triggers, leaving out
# those above 5% took the BM25 query from p50 3.0 / p95 14.7 ms to 2.0 / 5.7 ms (in
# process). MADial-Bench is too small for the rule to apply (bench/RESULTS.md: off and on).
MAX_CJK_CHAR_SHARE = 0.05
MIN_COMMON_RECORDS = 100
# Cached document frequencies; past this many tokens the cache starts over.
MAX_CACHED_TERMS = 200_000
# FTS5 has no top-k pruning: ``order by rank limit k`` scores every record that holds any
# query term, a few microseconds each (bench/RESULTS.md "where the time goes": a brief's
# task matched ~10,600 of 100k records, 21.5 ms in BM25). When a query's terms are held by
# more records than MAX_RANKED_MATCHES (the sum of their document frequencies, capped by the
# store size, so a store of that size or less is always ranked whole: MADial-Bench's stores
# hold ~170 memories, and its results are unchanged), a bounded set is scored instead (_bm25_bounded): every record holding
# one of the query's rare terms (the rarest, up to RARE_TERMS_BUDGET documents in all), and
# the newest NEWEST_COMMON_MATCHES of those holding only common ones. Scores stay exact BM25
# over the whole query; what is given up is an older record that holds only common terms.
# In process (bench/profile_speed.py's queries, BM25 step, p50): at 100k, a brief's task
# 36.4 -> 2.7 ms, vocabulary 20.7 -> 1.8 ms, misspelt 9.1 -> 1.3 ms; at 10k 4.0 -> 2.9,
# 2.0 -> 1.1 and 0.7 -> 0.8 ms. The sum of the top 8's BM25 scores stayed at 95-100% of the
# exact ranking's (98-100% at 10k), except a brief's task at 100k: 79% (its terms are all
# held by 1-12% of that synthetic store). Budgets of 250 took the task at 10k from 2.9 to
# 2.1 ms, for 71-95%; of 1000 it stayed near the exact 4 ms.
MAX_RANKED_MATCHES = 1000
NEWEST_COMMON_MATCHES = 500
RARE_TERMS_BUDGET = 500
# A long query (a pasted paragraph, a brief's task with its context, a dialogue) costs BM25
# in proportion to its terms: FTS5 evaluates every phrase of the OR-query for each record it
# scores. On a store large enough for the bounded set, a query is ranked by its
# MAX_BOUNDED_TERMS rarest terms only (the highest IDF: they weigh most in every score). In
# process at 100k (bench/RESULTS.md "long queries on large stores"), search p50 / p99 of a
# 200-word paragraph (87 terms) 53.5 / 94.5 -> 11.3 / 19.2 ms, of a long Chinese query (40
# terms) 39.7 / 96.5 -> 23.4 / 59.9 ms. MADial-Bench's English dialogues among ~3,100
# distractor turns, mean MRR@10 of its full and last-two-lines queries on the tuning half:
# 24 terms 0.557, no cut 0.563, 32 terms 0.574 (but the Chinese p99 69 ms), 16 terms 0.533,
# 12 terms 0.517 (a whole dialogue cut to 12 terms loses what it is about); held out, 24
# terms 0.574 against no cut's 0.553. A store within MAX_RANKED_MATCHES, and a query of at
# most this many terms, rank every term as before.
MAX_BOUNDED_TERMS = 24
# A KNN scan reads every vector of the namespace, chunk by chunk (sqlite-vec keeps up to 1024
# vectors a chunk): at 100k int8 vectors of 1024 dimensions ~190-270 ms, the p99 of misspelt
# queries (bench/RESULTS.md). In a namespace of more than EXACT_SCAN_MAX_CHUNKS chunks (up to
# it the exact scan costs ~10 ms or less) the hashing vectors' coarse codes are scanned
# instead (state/embedders.py coarse_code: 1/13 of the bits, Hamming distance, ~10 ms at
# 100k) and the COARSE_CANDIDATES nearest by code (or as many as the page shows, if more)
# are ranked by their exact cosine. sqlite-vec's top-k selection costs k x the vectors
# scanned: at 100k, 50 candidates cost ~4 ms more than 32. What is given up: a record whose
# code shares few slots with the query's strongest but whose vector is near (measured in
# state/embedders.py).
EXACT_SCAN_MAX_CHUNKS = 4
COARSE_CANDIDATES = 32
# A conversation turn that asks something passes ANSWER_SHARE (the default of the
# ``reply_lift`` setting) of its BM25 score to the turn after it (state/turn_context.py
# answers), divided by that reply's length over ANSWER_REF_CHARS when longer; only the
# ANSWER_FROM_TOP best matches pass any on. Chosen on
# the tuning halves of three datasets of long conversations (bench/RESULTS.md, "choosing the
# reply lift"; `--ideas bench/ideas/answers.py`): recall@10 summed over them 2.469 -> 2.522,
# no dataset lower; the share 0.2-0.3, 10-50 tops and 100-300 characters all gained 0.04-0.05.
# Given up: a reply that is the answer to nothing asked can be lifted past a better match.
ANSWER_SHARE = 0.3
ANSWER_REF_CHARS = 100
ANSWER_FROM_TOP = 20

Scored = tuple[int, float]  # (record seq, BM25 score: higher is better)


class TermStatistics:
    """Document frequencies of index tokens, for query-side weights (the hashing embedder's
    :meth:`~state.embedders.HashingEmbedder.embed_query`).

    FTS5's ``fts5vocab`` answers them, but at ~30 us a token: a dialogue used as a query has
    hundreds. So they are cached, kept current by :class:`SearchIndex`'s own writes, and
    dropped whenever the record count disagrees with the cache (a rolled-back write, a
    rebuild) or another connection has written (``PRAGMA data_version``).
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._frequencies: dict[str, int] = {}
        self._documents: int | None = None  # the record count the cache agrees with
        self._data_version: int | None = None
        self._vocab = False

    def __call__(self, terms: Collection[str]) -> tuple[dict[str, int], int]:
        """(token -> number of indexed records holding it, number of indexed records)."""
        documents = self._current()
        missing = [t for t in terms if t not in self._frequencies]
        if missing:
            self._open_vocab()
            for start in range(0, len(missing), 500):
                chunk = missing[start : start + 500]
                found = dict(
                    self.conn.execute(
                        "select term, doc from temp.memory_fts_vocab"
                        f" where term in ({','.join('?' * len(chunk))})",
                        chunk,
                    ).fetchall()
                )
                for term in chunk:
                    self._frequencies[term] = found.get(term, 0)
        return {t: self._frequencies[t] for t in terms}, documents

    def _open_vocab(self) -> None:
        if not self._vocab:
            self.conn.execute(
                "create virtual table if not exists temp.memory_fts_vocab using fts5vocab(main, memory_fts, row)"
            )
            self._vocab = True

    def starting_with(self, character: str) -> list[str]:
        """The index's tokens that start with ``character`` (one seek of the vocabulary: the
        language markers, state/languages.py, are the only tokens that start with theirs)."""
        self._open_vocab()
        return [
            row[0]
            for row in self.conn.execute(
                "select term from temp.memory_fts_vocab where term >= ? and term < ?",
                (character, chr(ord(character) + 1)),
            )
        ]

    def _current(self) -> int:
        version = self.conn.execute("pragma data_version").fetchone()[0]
        documents = self.conn.execute("select count(*) from memory_fts_docsize").fetchone()[0]
        if (
            version != self._data_version
            or documents != self._documents
            or len(self._frequencies) > MAX_CACHED_TERMS
        ):
            self._frequencies.clear()
            self._data_version, self._documents = version, documents
        return documents

    def reset(self) -> None:
        """Forget everything: the FTS table was replaced (a rebuild's swap)."""
        self.conn.execute("drop table if exists temp.memory_fts_vocab")
        self._vocab = False
        self._frequencies.clear()
        self._documents = self._data_version = None

    @property
    def active(self) -> bool:
        """Whether anything is cached (until the first query there is nothing to keep current)."""
        return self._documents is not None

    def counted(self, token_text: str | None, change: int) -> None:
        """A record with these index tokens was added (+1) or removed (-1) on this connection."""
        if self._documents is None or token_text is None:  # nothing cached yet (``active``)
            return
        self._documents += change
        for token in set(token_text.split()):
            if token in self._frequencies:
                self._frequencies[token] = max(0, self._frequencies[token] + change)


def with_language_forms(frequencies: Frequencies, forms: Mapping[str, Sequence[str]]) -> Frequencies:
    """``frequencies`` where a token of ``forms`` (tokenize.language_forms: a query word's
    plain token -> its tagged stems) also counts the records holding those: a German text
    holds "besprech·de", not "besprechung", and the hashing embedder weighs a query's words
    by their document frequencies (a word no record holds is left out of its vector)."""
    if not forms:
        return frequencies

    def counted(tokens: Collection[str]) -> tuple[dict[str, int], int]:
        wanted = set(tokens).union(*(forms.get(t, ()) for t in tokens))
        known, records = frequencies(wanted)
        return {t: min(records, known[t] + sum(known[f] for f in forms.get(t, ()))) for t in tokens}, records

    return counted


def record_text(title: str, content: str, triggers: list[str]) -> str:
    """The text of a memory record that both indexes see (one definition for insert and rebuild).

    A title that is the start of the content is left out: every memory delta's title is its
    summary's first 200 characters and every agent-memory1.0 message's its content's, so the
    words were indexed and embedded twice (tokenizing and embedding are 15-20 % of a write's
    CPU) and BM25 counted them twice for those records only."""
    if title and content.startswith(title):
        title = ""
    return "\n".join(part for part in (title, content, " ".join(triggers)) if part)


@dataclass(frozen=True)
class SearchHit:
    """One fused result: the record's seq, fused score and the rank in each list (1-based)."""

    seq: int
    score: float
    bm25_rank: int | None
    vector_rank: int | None


class SearchIndex:
    """Keeps the FTS and vector indexes of memory records and answers hybrid queries."""

    def __init__(
        self,
        conn: Connection,
        embedder: Embedder,
        *,
        bm25_weight: float = 1.0,
        vector_weight: float = 1.0,
        vector_mode: str = "auto",
        reply_lift: float = ANSWER_SHARE,
    ) -> None:
        self.conn = conn
        self.reply_lift = reply_lift
        self.embedder = embedder
        self.bm25_weight = bm25_weight
        self.vector_weight = vector_weight
        self.vector_mode = vector_mode
        self.terms = TermStatistics(conn)
        # The languages the index holds texts in, and the data_version they were read at.
        self._languages: set[str] | None = None
        self._languages_version: int | None = None
        self._languages_checked = 0.0  # time.monotonic() of the last data_version asked
        self._terms_built_with: str | None = None  # the FTS table the cached counts are of
        # Records still without a vector: the embedder failed (see _insert_vector), or the
        # daemon leaves vectors to its worker (``defer_vectors``, daemon/vector_worker.py).
        self.pending_vectors: set[int] = set()
        # In the daemon, with an embedder that blocks (a model, a server), writes only mark a
        # record's vector as pending and call ``on_pending``; its worker makes the vectors
        # after the request (daemon/vector_worker.py). Otherwise each write embeds at once.
        self.defer_vectors = False
        self.on_pending: Callable[[], None] | None = None
        # When a record last went into or out of the full-text index (time.monotonic()): the
        # daemon merges the index's segments once its writes pause (daemon/jobs.py IndexMerge).
        self.changed_at = 0.0
        # In the daemon, a second connection in a worker thread (state/side_reads.py): a
        # bounded BM25 ranks its common-terms part there, beside its rare-terms parts.
        self.side_reads: SideReads | None = None

    # -- maintenance -------------------------------------------------------------------

    @property
    def vector_identity(self) -> str:
        return vector_identity(self.embedder)

    def builds(self) -> dict[str, IndexBuild]:
        """What built the indexes, asked of the database each time (state/index_builds.py)."""
        return read_builds(self.conn)

    def vectors_ready(self, builds: dict[str, IndexBuild] | None = None) -> bool:
        """Whether the vector table is complete and made by this embedder (else queries are
        ranked by words alone: a rebuild is on its way, state/rebuild.py)."""
        vectors = (builds or self.builds())[VECTORS]
        return vectors.target is None and vectors.built_with == self.vector_identity

    def _wants_vector(self, seq: int, builds: dict[str, IndexBuild]) -> bool:
        """Whether record ``seq`` gets its vector now: always when the table is complete; during
        a rebuild (which fills the new table in place) only if the copy has passed it."""
        vectors = builds[VECTORS]
        if vectors.target is None:
            return vectors.built_with == self.vector_identity
        return vectors.target == self.vector_identity and seq <= vectors.cursor

    def _insert_vector(self, seq: int, namespace: str, text: str) -> None:
        """Embed and store one vector. An embedder that fails (a model server that is down)
        must not cost the write: the record and its FTS entry are kept, and the vector is
        left for :meth:`backfill` (the ``backfill_vectors`` job, or ``doctor --repair``)."""
        vector = self._embed(seq, text)
        if vector is not None:
            self.pending_vectors.discard(seq)
            insert_vector(self.conn, seq, namespace, vector)

    def _embed(self, seq: int, text: str) -> list[float] | None:
        """Record ``seq``'s vector, or None (and ``seq`` pending) if the embedder failed."""
        try:
            return self.embedder.embed(text)
        except Exception as exc:
            if seq not in self.pending_vectors:
                log.warning(
                    "embedder %s failed (%s): record %d is kept and searchable by words;"
                    " its vector is added when the embedder works again",
                    self.embedder.name,
                    exc,
                    seq,
                )
            self.pending_vectors.add(seq)
            return None

    def find_missing_vectors(self) -> int:
        """Searchable records without a vector (left by a failing embedder before a restart)
        become pending again; cheap when the counts agree, which is the usual case. Not
        during a rebuild: it adds every vector anyway."""
        if not self.vectors_ready():
            return 0
        live = self.conn.execute("select count(*) from memory_records where deleted_at is null").fetchone()[0]
        vectors = self.conn.execute("select count(*) from memory_vec").fetchone()[0]
        if vectors >= live:
            return 0
        have = {row[0] for row in self.conn.execute("select rowid from memory_vec")}
        self.pending_vectors |= {
            seq
            for (seq,) in self.conn.execute(
                "select r.seq from memory_records r where r.deleted_at is null and r.content != ''"
            )
            if seq not in have
        }
        return len(self.pending_vectors)

    def backfill(self, limit: int = 500) -> int:
        """Embed up to ``limit`` pending records here and now; the number of vectors added.
        The daemon's worker runs the same three steps with the embedding in a thread when
        the embedder blocks (daemon/vector_worker.py)."""
        return self.store_vectors(self.embed_texts(self.pending_texts(limit)))

    def pending_texts(self, limit: int) -> list[tuple[int, str, str]]:
        """(seq, namespace, text) of up to ``limit`` pending records, oldest first. Records
        gone or redacted meanwhile, and those a rebuild's copy will embed, leave the set."""
        if not self.pending_vectors:
            return []
        builds = self.builds()
        texts = []
        for seq in sorted(self.pending_vectors)[:limit]:
            row = self.conn.execute(
                "select namespace, title, content, triggers, deleted_at from memory_records where seq = ?",
                (seq,),
            ).fetchone()
            if row is None or row["deleted_at"] or not row["content"] or not self._wants_vector(seq, builds):
                self.pending_vectors.discard(seq)
                continue
            texts.append(
                (
                    seq,
                    row["namespace"],
                    record_text(row["title"], row["content"], loads(row["triggers"])),
                )
            )
        return texts

    def embed_texts(self, texts: list[tuple[int, str, str]]) -> list[tuple[int, str, str, list[float]]]:
        """Their vectors, in order, up to the first the embedder fails to make (that one and
        the rest stay pending). No SQL: the daemon may call this in a worker thread."""
        embedded = []
        for seq, namespace, text in texts:
            vector = self._embed(seq, text)
            if vector is None:
                break
            embedded.append((seq, namespace, text, vector))
        return embedded

    def store_vectors(self, embedded: list[tuple[int, str, str, list[float]]]) -> int:
        """Store vectors made by :meth:`embed_texts`, in one transaction; the number stored.
        A record changed since its text was read keeps its place in the pending set (its
        update put it there again) and gets its vector from the next batch."""
        if not embedded:
            return 0
        added = 0
        with transaction(self.conn):
            builds = self.builds()
            for seq, namespace, text, vector in embedded:
                row = self.conn.execute(
                    "select title, content, triggers, deleted_at from memory_records where seq = ?", (seq,)
                ).fetchone()
                if row is None or row["deleted_at"] or not self._wants_vector(seq, builds):
                    self.pending_vectors.discard(seq)
                    continue
                if record_text(row["title"], row["content"], loads(row["triggers"])) != text:
                    continue
                self.conn.execute("delete from memory_vec where rowid = ?", (seq,))
                insert_vector(self.conn, seq, namespace, vector)
                self.pending_vectors.discard(seq)
                added += 1
        return added

    def add(self, seq: int, namespace: str, text: str, new: turn_context.ChainFields | None = None) -> None:
        """Index one record (call inside the caller's write transaction).

        During a rebuild the record also goes into the new FTS table if the copy has passed
        it (seq <= cursor); else the copy takes it, as it is then. The cursor is read in
        this same transaction, so no batch can move it in between. A conversation turn gets
        the turns before it as its context (state/turn_context.py). ``new``: the chain's
        fields of a record just inserted (MemoryRepository.create), which is the newest
        record (its seq was drawn under the write lock): nothing follows it, and its chain
        is known without reading the record back (two statements less a write)."""
        builds = self.builds()
        self.changed_at = time.monotonic()
        for table, tokenizer, holds in self._fts_tables(builds, seq):
            if holds:
                token_text = insert_fts_row(self.conn, table, tokenizer, seq, text, new)
                if table == FTS:
                    self.terms.counted(token_text, +1)
                    if self._languages is not None and token_text and TAG in token_text:
                        self._languages = self._languages | held(token_text.split())
            if has_context(tokenizer) and new is None:  # usually no turn follows a new one
                turn_context.refresh_following(self.conn, table, seq)
        if self._wants_vector(seq, builds):
            if self.defer_vectors:
                self.pending_vectors.add(seq)
                if self.on_pending is not None:
                    self.on_pending()
            else:
                self._insert_vector(seq, namespace, text)

    @staticmethod
    def _fts_tables(builds: dict[str, IndexBuild], seq: int) -> list[tuple[str, ModuleType, bool]]:
        """(table, the tokenizer that builds it, whether record ``seq`` has a row there) for
        each FTS table: the live one, and during a rebuild the new one, where only records
        the copy has passed have rows. A neighbour's context is kept right in both: a turn
        beyond the cursor may sit next to one the copy has passed."""
        fts = builds[FTS]
        tables = [(FTS, tokenizer_for(fts.built_with), True)]
        if fts.target is not None:
            tables.append((FTS_NEXT, tokenizer_for(fts.target), seq <= fts.cursor))
        return tables

    def remove(self, seq: int) -> None:
        """Take one record out of every index, the new ones of a rebuild included; the
        turns after a conversation turn lose it from their context."""
        self.pending_vectors.discard(seq)
        self.changed_at = time.monotonic()
        run_deferred(self.conn)  # its row may still wait for the COMMIT
        if self.terms.active:  # keep the cached frequencies current
            row = self.conn.execute("select tokens from memory_fts where rowid = ?", (seq,)).fetchone()
            if row is not None:
                self.terms.counted(row[0], -1)
        builds = self.builds()
        for table, tokenizer, holds in self._fts_tables(builds, seq):
            if holds:
                self.conn.execute(f"delete from {table} where rowid = ?", (seq,))
            if has_context(tokenizer):
                turn_context.refresh_following(self.conn, table, seq)
        self.conn.execute("delete from memory_vec where rowid = ?", (seq,))

    def forget_deleted(self) -> None:
        """Make deletions final in the FTS segments too (redaction): a delete leaves the
        tokens in the segments until they are merged (state/redaction.py). A rebuild's new
        table is merged as well, and the old table's trash (state/index_builds.py) goes at
        once rather than batch by batch: it still holds the redacted text."""
        merge_fts_index(self.conn)
        if self.builds()[FTS].target is not None:
            merge_fts_index(self.conn, FTS_NEXT)
        drop_trash(self.conn, FTS)

    def replace(self, seq: int, namespace: str, text: str) -> None:
        """A record's new text under the same seq: out of every index, then in again."""
        self.remove(seq)
        self.add(seq, namespace, text)

    # -- queries -----------------------------------------------------------------------

    def _bm25(self, match: str, namespaces: list[str], limit: int) -> list[Scored]:
        """Every record matching ``match`` ranked by BM25 (exact; the cost grows with the
        number of matches): (seq, score), best first, equal scores newest first (as every
        ranking here, and the PostgreSQL engine's: state/pg/search.py)."""
        marks = ",".join("?" * len(namespaces))
        # Fast path: let FTS5 rank on its own (no join while scoring), then filter.
        rows = self.conn.execute(
            "select r.seq, -f.rank from (select rowid, rank from memory_fts where memory_fts match ?"
            " order by rank, rowid desc limit cast(? as integer)) f join live_records r on r.seq = f.rowid"
            f" where r.namespace in ({marks}) order by f.rank, r.seq desc limit cast(? as integer)",
            (match, limit * FTS_OVERFETCH, *namespaces, limit),
        ).fetchall()
        if len(rows) < limit:
            # Other namespaces crowded the top: rank only this namespace's matches.
            rows = self.conn.execute(
                "select r.seq, -f.rank from memory_fts f cross join live_records r on r.seq = f.rowid"
                f" where memory_fts match ? and r.namespace in ({marks})"
                " order by f.rank, r.seq desc limit cast(? as integer)",
                (match, *namespaces, limit),
            ).fetchall()
        return [(row[0], row[1]) for row in rows]

    def _bm25_ranked(self, terms: list[str], namespaces: list[str], limit: int) -> list[Scored]:
        """BM25's ``limit`` best records for ``terms``, (seq, score) best first: all matches
        ranked when they are few, else a bounded set (see MAX_RANKED_MATCHES)."""
        match = fts_match(terms)
        if match is None:  # no terms
            return []
        frequencies, total = self.terms(terms)
        if min(sum(frequencies.values()), total) <= MAX_RANKED_MATCHES:
            return self._bm25(match, namespaces, limit)
        cut = informative_terms(terms, frequencies, MAX_BOUNDED_TERMS)
        rare, common = split_rare_terms(cut, frequencies, RARE_TERMS_BUDGET)
        if not common:  # the query's rarest terms, held by few records: all of them ranked
            return self._bm25(fts_match(cut) or match, namespaces, limit)
        # A term no record holds (a typo, a word never stored) matches nothing and adds 0 to
        # every score: left out, the same records rank with the same scores, and a query whose
        # rare terms all are such is one part, not three (most of bench/scale.py's brief tasks
        # at 100k: the side connection would have nothing to run beside).
        rare = [term for term in rare if frequencies.get(term)]
        return self._bm25_bounded(rare, common, namespaces, limit)

    def _bm25_bounded(
        self, rare: list[str], common: list[str], namespaces: list[str], limit: int
    ) -> list[Scored]:
        """The best of: the records holding a rare term, and the newest records holding only
        common ones. Each expression below names every query term once, so FTS5's bm25()
        gives each record the score the whole OR-query would (same phrases, same IDF: the
        IDF counts a term's documents, whatever the expression), and the lists merge by
        score. FTS5 walks a posting list newest first and stops at the limit, so no record
        past it is scored."""
        marks = ",".join("?" * len(namespaces))
        # FTS5 first (cross join: else the planner may probe FTS5 once per record). The
        # rare-term parts are sorted by SQLite (``+score``), not by FTS5's ``order by rank``,
        # which ranks every match in a second cursor and costs ~20 % more per part (in
        # process, 10k store, 1,472 parts: 1.80 -> 1.44 ms); ties in rowid order, as FTS5's
        # sort leaves them, so the same records are kept. Matches are checked against
        # live_records (migration 21: ~90 records a page, memory_records ~6), whose few pages
        # the side connection reads again cheaply after each commit empties its cache.
        part = (
            "select * from (select r.seq, f.rank as score from memory_fts f"
            " cross join live_records r on r.seq = f.rowid where memory_fts match ?"
            f" and r.namespace in ({marks}) order by {{}} limit cast(? as integer))"
        )
        any_common = f"({fts_match(common)})"
        parts: list[str] = []
        params: list[object] = []
        if rare:
            any_rare = f"({fts_match(rare)})"
            for match in (f"{any_rare} AND {any_common}", f"{any_rare} NOT {any_common}"):
                parts.append(part.format("+score, r.seq"))
                params += [match, *namespaces, limit]
            only_common = f"{any_common} NOT {any_rare}"
        else:
            only_common = any_common
        newest = part.format("f.rowid desc")
        newest_params = (only_common, *namespaces, NEWEST_COMMON_MATCHES)
        # bm25() is lower for better matches; ties go to the newer record, as in search().
        best = " order by score, seq desc limit cast(? as integer)"
        side = self.side_reads
        if side is None or not parts or self.conn.in_transaction:
            rows = self.conn.execute(
                " union all ".join([*parts, newest]) + best, (*params, *newest_params, limit)
            ).fetchall()
            return [(row[0], -row[1]) for row in rows]
        # The common-terms part (about half the time: in process at 10k, a brief's task
        # 1.05 of 2.0 ms) on the side connection while the rare-terms parts run here; each
        # part's best ``limit`` merge into the same ``limit`` best as the one statement's.
        # Only with nothing uncommitted here: the side connection would not see it.
        beside = side.rows(f"select * from ({newest}){best}", (*newest_params, limit))
        try:
            rows = self.conn.execute(" union all ".join(parts) + best, (*params, limit)).fetchall()
        finally:
            wait([beside])  # the side connection is free again, whatever happened here
        merged = sorted([*rows, *beside.result()], key=lambda row: (row[1], -row[0]))[:limit]
        return [(row[0], -row[1]) for row in merged]

    def _with_answers(self, scored: list[Scored]) -> list[Scored]:
        """BM25's ranking with each asking turn's reply lifted (see with_answers)."""
        return with_answers(self.conn, scored, self.reply_lift)

    def _bm25_terms(self, query: str, tokenizer: ModuleType | None = None) -> list[str]:
        """The query's tokens for BM25 (by the tokenizer that built the FTS table), without
        single CJK characters that most records hold."""
        tokenizer = tokenizer or tokenizer_for(self.builds()[FTS].built_with)
        terms = tokenizer.query_terms(query)
        if hasattr(tokenizer, "language_terms"):  # tokenizer 7 on: the text's own language
            terms += tokenizer.language_terms(query, self.languages())
        chars = [t for t in terms if tokenizer.is_cjk_char(t)]
        if not chars:
            return terms
        frequencies, total = self.terms(chars)
        common = {
            t for t, n in frequencies.items() if n > max(MAX_CJK_CHAR_SHARE * total, MIN_COMMON_RECORDS)
        }
        return [t for t in terms if t not in common] if common else terms

    def languages(self) -> set[str]:
        """The languages the index holds texts in (state/languages.py), by their markers: read
        once, kept by this index's writes, and read again when another connection has
        written, which is asked (``PRAGMA data_version``) at most every LANGUAGES_CHECK_SECONDS:
        asked on every search it cost 0.6 M instructions of a search's 4.8 M (bench/RESULTS.md,
        "tokenizer 7"), and the daemon is the store's one writer."""
        now = time.monotonic()
        if self._languages is not None and now - self._languages_checked < LANGUAGES_CHECK_SECONDS:
            return self._languages
        version = self.conn.execute("pragma data_version").fetchone()[0]
        if self._languages is None or version != self._languages_version:
            self._languages = held(self.terms.starting_with(TAG))
            self._languages_version = version
        self._languages_checked = now
        return self._languages

    @property
    def embeds_queries_inline(self) -> bool:
        """Whether a query's vector is cheap and local (the hashing embedder): made where the
        search runs. Otherwise a request prepares it in a thread (PREPARED_QUERY_VECTORS)."""
        return bool(getattr(self.embedder, "runs_inline", False))

    def _query_vector(self, query: str) -> bytes | None:
        """The query's embedding: the one its request prepared, else made now."""
        prepared = PREPARED_QUERY_VECTORS.get()
        if prepared is not None and query in prepared:
            return prepared[query]
        return self.query_vector(query)

    def query_vector(self, query: str) -> bytes | None:
        """The query's embedding, or None when there is nothing to compare: the embedder
        failed (a model server that is down: the words rank alone) or the vector is zero
        (only stopwords or unseen words; cosine is undefined). Safe in a worker thread for an
        embedder that does not run inline (it reads no store state)."""
        embed_query = getattr(self.embedder, "embed_query", None)
        try:
            if embed_query is not None:
                embedding = embed_query(query, self._frequencies_for(query))
            else:
                embedding = self.embedder.embed(query)
        except Exception as exc:
            log.warning("embedder %s failed on a query (%s): ranking by words only", self.embedder.name, exc)
            return None
        return serialize(embedding) if any(embedding) else None

    def _frequencies_for(self, query: str) -> Frequencies:
        """The document frequencies ``query``'s vector is weighted by: with its words' tagged
        stems counted for an embedder that runs inline (read here, on this connection; an
        embedder that runs in a worker thread weighs nothing by them and reads no store)."""
        if not self.embeds_queries_inline:
            return self.terms
        return with_language_forms(self.terms, language_forms(query, self.languages()))

    def _knn(
        self, vector: bytes, namespaces: list[str], limit: int, candidates: int | None = None
    ) -> list[int]:
        """The namespaces' ``limit`` nearest records, nearest first: a scan of all their
        vectors, or in a large namespace the exact distances of the ``candidates`` nearest
        by coarse code (default: COARSE_CANDIDATES, or ``limit`` if more; see
        EXACT_SCAN_MAX_CHUNKS)."""
        seqs: list[tuple[float, int]] = []
        code = None
        coarse = getattr(self.embedder, "coarse_scan", False)
        for namespace in namespaces:
            if not coarse or self._vector_chunks(namespace) <= EXACT_SCAN_MAX_CHUNKS:
                rows = self.conn.execute(
                    "select rowid, distance from memory_vec"
                    " where embedding match vec_int8(?) and k = ? and namespace = ?",
                    (vector, limit, namespace),
                ).fetchall()
            else:
                code = code or coarse_code(vector, document=False)
                nearest = [
                    row[0]
                    for row in self.conn.execute(
                        "select rowid from memory_vec where coarse match vec_bit(?) and k = ?"
                        " and namespace = ?",
                        (code, candidates or max(COARSE_CANDIDATES, limit), namespace),
                    )
                ]
                rows = self._distances(vector, nearest)
            seqs.extend((distance, seq) for seq, distance in rows if _similar(distance))
        seqs.sort()
        return [seq for _, seq in seqs[:limit]]

    def _vector_chunks(self, namespace: str) -> int:
        """How many of sqlite-vec's chunks (of up to 1024 vectors) a scan of the namespace
        reads: what the scan costs. Read from sqlite-vec's own chunk table (a row per chunk,
        ~0.2 ms at 100k vectors); if that is not there (another sqlite-vec layout), 0: the
        exact scan, as before the coarse pass existed."""
        try:
            return self.conn.execute(
                "select count(*) from memory_vec_chunks where partition00 = ?", (namespace,)
            ).fetchone()[0]
        except sqlite_module().OperationalError:
            return 0

    def _distances(self, vector: bytes, seqs: list[int]) -> list[tuple[int, float]]:
        """(seq, cosine distance) of the records ``seqs`` that have a vector. One point
        lookup each: sqlite-vec scans the whole table for ``rowid in (...)``, not this join."""
        return self.conn.execute(
            "select v.rowid, vec_distance_cosine(v.embedding, vec_int8(?)) from json_each(?) j"
            " join memory_vec v on v.rowid = j.value",
            (vector, json.dumps(seqs)),
        ).fetchall()

    def _rerank(self, vector: bytes, seqs: list[int]) -> list[int]:
        """``seqs`` (BM25's candidates) ordered by vector distance, nearest first."""
        ranked = sorted(
            (distance, seq) for seq, distance in self._distances(vector, seqs) if _similar(distance)
        )
        return [seq for _, seq in ranked]

    def search(
        self,
        query: str,
        namespaces: Iterable[str],
        *,
        limit: int = 10,
        candidates: int = 50,
        page: int | None = None,
    ) -> list[SearchHit]:
        """Fused hits for ``query`` within ``namespaces``, best first.

        See the module docstring for ``vector_mode``. With ``bm25_weight`` 0 the vectors
        rank alone (a KNN scan); with ``vector_weight`` 0 BM25 does, and so it does while
        the vectors are rebuilt (state/rebuild.py). ``page``: how many hits the caller will
        show, when it asks for more to filter them (default ``limit``); the vectors' scan
        fills in when the words find fewer than that, so a longer list is the same ranking
        continued, not one with vector neighbours mixed in.
        """
        namespaces = list(dict.fromkeys(namespaces))
        if not namespaces or not query.strip():
            return []
        run_deferred(self.conn)  # the open group's rows (state/group_commit.py) rank too
        pool = max(candidates, limit)
        builds = self.builds()
        fts = builds[FTS]
        if fts.built_with != self._terms_built_with:  # a rebuild swapped the FTS table
            self.terms.reset()
            self._languages = None
            self._terms_built_with = fts.built_with
        # While the vectors are rebuilt the words rank alone, even if set to weigh nothing.
        vectors = self.vector_weight > 0 and self.vectors_ready(builds)
        bm25_weight = self.bm25_weight if vectors or self.bm25_weight > 0 else 1.0
        tokenizer = tokenizer_for(fts.built_with)
        bm25: list[int] = []
        if bm25_weight > 0:
            scored = self._bm25_ranked(self._bm25_terms(query, tokenizer), namespaces, pool)
            bm25 = [seq for seq, _ in self._with_answers(scored)[:pool]]
        knn: list[int] = []
        fill = False
        if vectors:
            mode = resolved_mode(self.vector_mode, tokenizer.query_terms(query), tokenizer)
            scan, fill = vector_scan(len(bm25), page or limit, bm25_weight, mode)
            if scan or mode == "rerank":
                vector = self._query_vector(query)
                if vector is not None:
                    # The scan's pool, but only as many coarse candidates as the page needs.
                    knn = (
                        self._knn(vector, namespaces, pool, max(COARSE_CANDIDATES, limit))
                        if scan
                        else self._rerank(vector, bm25)
                    )
        return fuse(bm25, knn, bm25_weight, self.vector_weight, limit, fill=fill)


def fuse(
    bm25: list[int],
    knn: list[int],
    bm25_weight: float,
    vector_weight: float,
    limit: int,
    *,
    fill: bool = False,
) -> list[SearchHit]:
    """Weighted reciprocal rank fusion of the two rankings (record seqs, best first): the one
    definition for every storage engine (state/pg/search.py too).

    ``fill``: the vectors were scanned only because the words found fewer records than the
    page (vector_mode ``auto`` or ``fallback``), so they fill in after the words' hits: a
    record they alone found ranks as if it followed BM25's last hit, not beside its first
    (a vector's first neighbour can be a hashing collision: "kupci", which BM25 found in one
    Serbian text, ranked an unrelated Nepali text first, the newer of two equal scores). A
    record both found is fused as always; its ``vector_rank`` is the scan's."""
    scores: dict[int, list] = {}
    for rank, seq in enumerate(bm25, 1):
        scores.setdefault(seq, [0.0, None, None])
        scores[seq][0] += bm25_weight / (RRF_K + rank)
        scores[seq][1] = rank
    words = set(bm25) if fill else set()
    after = len(bm25)
    for rank, seq in enumerate(knn, 1):
        place = rank
        if fill and seq not in words:
            after += 1
            place = after
        scores.setdefault(seq, [0.0, None, None])
        scores[seq][0] += vector_weight / (RRF_K + place)
        scores[seq][2] = rank
    # Ties (equal fused score) go to the newer record: seq grows with time.
    ordered = sorted(scores.items(), key=lambda item: (-item[1][0], -item[0]))
    return [SearchHit(seq, s, b, v) for seq, (s, b, v) in ordered[:limit]]


def best_score(hits: list[SearchHit], bm25_weight: float, vector_weight: float) -> float:
    """The fused score of a record first in every ranking that ``hits`` came from (see fuse):
    what a score is measured against to say how good a hit is, 0..1. An English query ranks
    by words alone (vector_mode ``auto``), so its best hit is first in one ranking only: over
    both weights it would score 0.5 at best, and a client's threshold of 0.6 found nothing.
    Weights of 0 mean the words ranked alone while the vectors were rebuilt (at weight 1)."""
    used = (bm25_weight if any(h.bm25_rank for h in hits) else 0.0) + (
        vector_weight if any(h.vector_rank for h in hits) else 0.0
    )
    return (used or 1.0) / (RRF_K + 1)


def with_answers(conn: Connection, scored: list[Scored], share: float) -> list[Scored]:
    """BM25's ranking with each asking turn's reply lifted by ``share`` (the setting
    ``reply_lift``) of the question's score (see ANSWER_SHARE): the answer to "What did you
    name her?" is "Churro.", which no word of "What is the dog's name?" finds. A reply longer
    than ANSWER_REF_CHARS gets less, as BM25 gives a long text less for one matching word (a
    long assistant answer to a user's question is seldom the evidence asked for). The one
    definition for every storage engine: ``conn`` runs the SQLite dialect of
    state/turn_context.py (a :class:`state.pg.connection.PgConnection` on PostgreSQL)."""
    if not scored or share <= 0:
        return scored
    own = dict(scored)
    totals = dict(own)
    top = [seq for seq, _ in scored[:ANSWER_FROM_TOP]]
    replies = turn_context.answers(conn, top)
    if not replies:  # BM25's own order, ties included
        return scored
    for question, (answer, length) in replies.items():
        lift = share * own[question] / max(1.0, length / ANSWER_REF_CHARS)
        totals[answer] = totals.get(answer, 0.0) + lift
    # Ties go to the newer record, as in search().
    return sorted(totals.items(), key=lambda item: (-item[1], -item[0]))


def resolved_mode(mode: str, terms: list[str], tokenizer: ModuleType) -> str:
    """The vector mode a query runs in: ``auto`` is ``rerank`` for a mostly-CJK query and
    ``fallback`` for the others (see the module docstring)."""
    if mode != "auto":
        return mode
    return "rerank" if mostly_cjk(terms, tokenizer) else "fallback"


def vector_scan(found: int, page: int, bm25_weight: float, mode: str) -> tuple[bool, bool]:
    """(whether a query scans the namespace's vectors, whether they only fill in after the
    words' hits: see fuse), for a query whose words found ``found`` records: a scan when the
    words find fewer than the page (or rank nothing), or always; the one rule for every
    storage engine."""
    scan = found < page or bm25_weight <= 0 or mode == "always"
    return scan, scan and bm25_weight > 0 and mode != "always"


def insert_fts_row(
    conn: Connection,
    table: str,
    tokenizer: ModuleType,
    seq: int,
    text: str,
    fields: turn_context.ChainFields | None = None,
) -> str:
    """Write record ``seq``'s row into the FTS table ``table`` built by ``tokenizer``: its
    tokens, and where the table has them the turns before it (state/turn_context.py;
    ``fields``: its chain's fields if the caller has them). The one definition for writes
    and the rebuild's copy; returns the record's own tokens."""
    token_text = tokenizer.index_text(text)
    if has_context(tokenizer):
        columns = turn_context.context_columns(conn, table, seq, fields)
        sql = (
            f"insert into {table} (rowid, {', '.join(tokenizer.FTS_COLUMNS)})"
            f" values (?, ?{', ?' * len(columns)})"
        )
        params: tuple[object, ...] = (seq, token_text, *columns)
    else:
        sql, params = f"insert into {table} (rowid, tokens) values (?, ?)", (seq, token_text)
    # The live table's row waits for the group's COMMIT (state/group_commit.py: a SAVEPOINT
    # makes FTS5 write its pending rows out as a segment of their own).
    if table != FTS or not defer(conn, sql, params, key=(table, seq), value=token_text):
        conn.execute(sql, params)
    return token_text


def mostly_cjk(terms: list[str], tokenizer: ModuleType) -> bool:
    """Whether at least half of a query's terms are Chinese, Japanese or Korean (characters
    and bigrams): ``auto`` mode reranks those by the vectors (see the module docstring)."""
    return bool(terms) and 2 * sum(1 for t in terms if tokenizer.is_cjk_char(t[:1])) >= len(terms)


def insert_vector(conn: Connection, seq: int, namespace: str, vector: list[float]) -> None:
    """Store record ``seq``'s vector: int8, and its coarse code (state/embedders.py). The one
    definition for writes and the rebuild's copy."""
    embedding = serialize(vector)
    conn.execute(
        "insert into memory_vec (rowid, namespace, embedding, coarse) values (?, ?, vec_int8(?), vec_bit(?))",
        (seq, namespace, embedding, coarse_code(embedding, getattr(vector, "nonzero", None))),
    )


def informative_terms(terms: list[str], frequencies: dict[str, int], most: int) -> list[str]:
    """``terms`` as they are if at most ``most`` distinct ones are held by a record; else only
    the ``most`` held by the fewest records (ties: the earlier in the query), in query order,
    a repeated one as often as it was asked. A term no record holds matches nothing and adds
    nothing to a score: it is left out when the query is cut."""
    held = [term for term in dict.fromkeys(terms) if frequencies.get(term)]
    if len(held) <= most:
        return terms
    kept = set(sorted(held, key=lambda term: frequencies[term])[:most])  # sorted() is stable
    return [term for term in terms if term in kept]


def split_rare_terms(
    terms: list[str], frequencies: dict[str, int], budget: int
) -> tuple[list[str], list[str]]:
    """(rare, common): the rarest terms whose document frequencies sum to at most ``budget``
    (a term no record holds, a typo, costs nothing and stays), and the others, each in
    query order."""
    rare: set[str] = set()
    held = 0
    for term in sorted(terms, key=lambda t: frequencies.get(t, 0)):
        held += frequencies.get(term, 0)
        if held > budget:
            break
        rare.add(term)
    return [t for t in terms if t in rare], [t for t in terms if t not in rare]


def _similar(distance: float | None) -> bool:
    """Cosine similarity = 1 - cosine distance. Weak similarity is collision noise, not
    evidence, and must not enter the fused ranking."""
    return distance is not None and 1.0 - distance >= MIN_VECTOR_SIMILARITY
