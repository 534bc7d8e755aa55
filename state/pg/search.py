"""Hybrid search on PostgreSQL: BM25 over the SQLite engine's tokens, pgvector, the same fusion.

What the SQLite engine's :class:`state.search.SearchIndex` does with FTS5 and sqlite-vec, this
does with a tsvector, a GIN index and pgvector, so that one store ranks alike on either engine
(tests/pg/test_search_parity.py and, for conversation turns, test_search_parity_turns.py hold
them together):

* **Tokens**: state/tokenize.py's ``index_text`` and ``query_terms`` (every script, the
  stemmers, lemmas and answer cues), never PostgreSQL's text search parsers, whose
  dictionaries differ by installation and split CJK and identifiers otherwise. The tokens go
  into a tsvector as they are (``array_to_tsvector``: no parser), which its GIN index
  matches, and each distinct token's frequency into ``freqs`` (jsonb), which BM25 reads.
* **BM25**: FTS5's bm25() (k1 1.2, b 0.75), computed in SQL: a term's frequency in a record,
  the record's length in tokens, the average length and each term's document frequency over
  the whole index (``search_terms``, ``search_totals``: kept by :meth:`PgSearchIndex.add` and
  :meth:`PgSearchIndex.remove`), the IDF ``ln((N - n + 0.5) / (n + 0.5))`` floored at 1e-6
  as FTS5 floors it.
* **Vectors**: the same embedder's vectors, quantized to int8 exactly as the SQLite engine
  stores them, in a ``vector(D)`` column with an HNSW index (cosine), so cosine distances agree.
* **Turn context** (state/turn_context.py): a conversation turn's row also counts the own
  tokens of the two turns before it at CONTEXT_WEIGHT, as FTS5's context columns do under
  their weighted bm25(): a token's frequency is the weighted sum of its occurrences, the
  row's length and the document frequencies count every column. ``own`` keeps a record's own
  tokens for the turns after it; which turns come before a record, and which rows a change
  reaches, are turn_context's queries, run here through the SQLite dialect's translation
  (state/pg/connection.py), as are the reply lift's.
* **Reply lift**: state/search.py's ``with_answers``, between BM25 and the fusion.
* **Fusion and vector modes**: state/search.py's ``fuse`` and ``resolved_mode``.

Not here yet (the SQLite engine has it): the coarse vector scan.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from state import tokenize, turn_context
from state.embedders import Embedder, Frequencies, serialize
from state.index_builds import has_context
from state.languages import MARKERS, TAG, held
from state.pg import reindex
from state.pg.connection import WRITE_LOCK, PgConnection
from state.pg.vector_writer import VectorWriter
from state.search import (
    ANSWER_SHARE,
    MAX_BOUNDED_TERMS,
    MAX_CJK_CHAR_SHARE,
    MAX_RANKED_MATCHES,
    MIN_COMMON_RECORDS,
    MIN_VECTOR_SIMILARITY,
    NEWEST_COMMON_MATCHES,
    RARE_TERMS_BUDGET,
    Scored,
    SearchHit,
    fuse,
    informative_terms,
    resolved_mode,
    split_rare_terms,
    vector_scan,
    with_answers,
    with_language_forms,
)

log = logging.getLogger(__name__)

K1 = 1.2
B = 0.75
# The HNSW scan's candidate list (pgvector's hnsw.ef_search; its default is 40): at least
# twice the records a KNN asks for (the fused search asks for 50).
HNSW_EF_SEARCH = 100
# Rows indexed before migration m0004 get their context this many to a transaction (each
# holds the store's write lock, so other processes' writes go on between them).
FILL_BATCH = 2000
# How long the languages the index holds (their markers' counts, state/languages.py) are
# taken as read: another process's first text in a new language is found by its words (its
# tagged stems) at most this late; one round trip saved on every other search.
LANGUAGES_TTL = 5.0

# BM25 of the matching records of the namespaces, in SQL: the tsvector's GIN index finds
# them, each query term's weighted frequency is read from the record's ``freqs``, and FTS5's
# formula is applied. (Unnesting each matching record's tsvector instead took 8x SQLite's time
# at 10k records: bench/RESULTS.md, "search on PostgreSQL against SQLite".)
# Equal scores go to the newer record, as in the SQLite engine; scores are compared rounded
# to 9 decimals, since the sum's order (and so its last bits) is PostgreSQL's to choose.
_SCORED = """
select seq, score from (
    select s.seq,
           sum(q.idf * (f.freq * (%(k1)s + 1))
               / (f.freq + %(k1)s * (1 - %(b)s + %(b)s * s.doc_length / %(avgdl)s))) as score
    from {records}
    cross join unnest(%(terms)s::text[], %(idfs)s::float8[]) as q(term, idf)
    cross join lateral (select (s.freqs ->> q.term)::float8 as freq) f
    where {matching} and f.freq is not null
    group by s.seq
) scored
order by round(score::numeric, 9) desc, seq desc
limit %(limit)s
"""
_BM25 = _SCORED.format(
    records="memory_search s", matching="s.namespace = any(%(namespaces)s) and s.tokens @@ %(query)s::tsquery"
)
# The bounded set of state/search.py (MAX_RANKED_MATCHES), the same records: every record
# holding a rare term, and the newest NEWEST_COMMON_MATCHES holding only common ones.
_NEWEST_COMMON = (
    "(select seq from memory_search where namespace = any(%(namespaces)s) and tokens @@ %(common)s::tsquery"
    " {besides} order by seq desc limit %(newest)s)"
)
# Each chosen record's row is then read by its key (``offset 0`` keeps the subquery apart, so
# the planner cannot make the lookups a merge join that reads the whole table: it did, 13 ms
# of 39 for a Chinese brief's task at 20k records, half of them turns with context).
_ROW_OF_EACH = (
    " cross join lateral (select seq, doc_length, freqs from memory_search m where m.seq = c.seq offset 0) s"
)
_BM25_BOUNDED = _SCORED.format(
    records="(select seq from memory_search where namespace = any(%(namespaces)s)"
    " and tokens @@ %(rare)s::tsquery union "
    + _NEWEST_COMMON.format(besides="and not tokens @@ %(rare)s::tsquery")
    + ") c"
    + _ROW_OF_EACH,
    matching="true",
)
_BM25_COMMON_ONLY = _SCORED.format(
    records=f"{_NEWEST_COMMON.format(besides='')} c{_ROW_OF_EACH}", matching="true"
)


def pgvector_text(embedding: list[float]) -> str | None:
    """pgvector's text form of an embedding quantized to int8 as the SQLite engine stores it
    (state/embedders.py serialize), so cosine distances agree; None for a zero vector."""
    values = [b - 256 if b > 127 else b for b in serialize(embedding)]
    return "[" + ",".join(map(str, values)) + "]" if any(values) else None


@dataclass(frozen=True)
class IndexRow:
    """What a record's row holds: its own tokens (``own``, space-separated, as index_text
    makes them) and what BM25 reads of it with its context columns: each distinct token's
    weighted frequency and the length in tokens of all its columns (FTS5's bm25() counts
    the context columns' tokens in a row's length too)."""

    own: str
    freqs: dict[str, float]
    length: int

    @classmethod
    def of(cls, own: str, context: Sequence[str] = ()) -> IndexRow:
        """The row of a record with these own tokens and context columns (nearest first)."""
        freqs: dict[str, float] = {}
        length = 0
        # Without context columns (a tokenizer without them) only the first weight is used.
        for weight, column in zip(turn_context.WEIGHTS, (own, *context), strict=False):
            tokens = column.split()
            length += len(tokens)
            for token in tokens:
                freqs[token] = freqs.get(token, 0.0) + weight
        return cls(own, freqs, length)

    @property
    def terms(self) -> list[str]:
        """The distinct tokens, sorted (what the tsvector and the document counts hold)."""
        return sorted(self.freqs)


def quoted(lexeme: str) -> str:
    """A lexeme as a tsquery literal quotes it (any character may be in a token)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsquery_literal(terms: list[str]) -> str:
    return " | ".join(quoted(term) for term in terms)


def idf(documents: int, holding: int) -> float:
    """FTS5's IDF of a term held by ``holding`` of ``documents`` records."""
    holding = min(holding, documents)  # never more (see PgSearchIndex._statistics)
    value = math.log((documents - holding + 0.5) / (holding + 0.5))
    return value if value > 0 else 1e-6


class PgSearchIndex:
    """The search index of one PostgreSQL database (a psycopg connection in autocommit mode;
    writes go inside the caller's ``conn.transaction()``)."""

    def __init__(
        self,
        conn: Any,
        embedder: Embedder,
        *,
        bm25_weight: float = 1.0,
        vector_weight: float = 1.0,
        vector_mode: str = "auto",
        reply_lift: float = ANSWER_SHARE,
    ) -> None:
        self.conn = conn
        self.embedder = embedder
        self.bm25_weight = bm25_weight
        self.vector_weight = vector_weight
        self.vector_mode = vector_mode
        self.reply_lift = reply_lift
        # turn_context's and the reply lift's queries are written in the repositories' SQLite
        # dialect: they run through the store connection's translation, on this connection.
        self.sql = PgConnection(conn)
        self._vectors_ready = False
        # Vectors made after the write, on a connection of their own (state/pg/vector_writer.py):
        # PgStore.open gives the writer; the daemon's worker (daemon/vector_worker.py) turns
        # ``defer_vectors`` on and makes them. Otherwise (the CLI, migrate-store) each write
        # embeds at once. Nothing reads when the index last changed.
        self.writer: VectorWriter | None = None
        self.defer_vectors = False
        self.on_pending: Callable[[], None] | None = None
        self.changed_at = 0.0
        self._languages: set[str] | None = None  # see languages()
        self._languages_at = 0.0
        self.ensure_vectors()
        self.fill_context()
        # Rows made by another tokenizer are made anew in the background, and vectors of
        # another embedder (ensure_vectors) too (state/pg/reindex.py).
        reindex.plan(conn)
        self.reindexing = reindex.under_way(conn)

    @property
    def embeds_queries_inline(self) -> bool:
        """As :attr:`state.search.SearchIndex.embeds_queries_inline`."""
        return bool(getattr(self.embedder, "runs_inline", False))

    @property
    def vectors_apart(self) -> bool:
        """Whether this index can make its vectors after the writes, off the write transaction
        (the daemon's worker then does: state/pg/vector_writer.py says why)."""
        return self.writer is not None

    @property
    def pending_vectors(self) -> set[int]:
        return self.writer.pending if self.writer is not None else set()

    def find_missing_vectors(self) -> int:
        """Indexed records without a vector become pending; their number. A scan of the
        index: the daemon's worker runs it once, at start, off the event loop (a store
        opened elsewhere embeds inside each write, and does not ask)."""
        return self.writer.find_missing() if self.writer is not None else 0

    def make_vectors(self, limit: int) -> tuple[int, bool]:
        """Up to ``limit`` pending vectors, on the writer's own connection (call it in a worker
        thread): (stored, whether some had to stay pending for now)."""
        return self.writer.make(limit) if self.writer is not None else (0, False)

    def forget_deleted(self) -> None:
        """A deleted row is gone from every index PostgreSQL reads; its bytes stay in the
        table's dead tuples until VACUUM (autovacuum) reclaims them."""

    # -- writes --------------------------------------------------------------------------

    def ensure_vectors(self) -> None:
        """The vector table for this embedder's dimension, with its HNSW index: made when the
        index opens, in a transaction of its own under the write lock (processes starting
        together make it once). Not inside a write, as it was: a first write rolled back (a
        lost connection, a refused write) took the table with it, and every later write of
        the process failed on the missing table."""
        if self._vectors_ready:
            return
        dimension = int(self.embedder.dimension)
        with self.conn.transaction():
            self.conn.execute("select pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            # Another embedder's table is dropped: the vector writer makes them all anew.
            reindex.prepare_vectors(self.conn, self.embedder)
            self.conn.execute(
                "create table if not exists memory_vectors (seq bigint primary key,"
                f" namespace text not null, embedding vector({dimension}) not null)"
            )
            self.conn.execute(
                "create index if not exists memory_vectors_hnsw on memory_vectors"
                " using hnsw (embedding vector_cosine_ops)"
            )
            self.conn.execute(
                "create index if not exists memory_vectors_namespace on memory_vectors (namespace)"
            )
        self._vectors_ready = True

    def add(self, seq: int, namespace: str, text: str, new: turn_context.ChainFields | None = None) -> None:
        """Index one record: its tokens and, for a conversation turn, the turns before it as
        context (``new``: a new record's chain fields, so its chain is not read back); the
        term counts and totals; its vector (or, in the daemon, its mark for the vector
        writer). The turns after it, if any, get their context anew: even a new record may
        have some here, as another process's transaction may have drawn a later seq and
        committed first."""
        row = IndexRow.of(tokenize.index_text(text), self._context(seq, new))
        self.conn.execute(
            "insert into memory_search (seq, namespace, tokens, freqs, doc_length, own)"
            " values (%s, %s, array_to_tsvector(%s::text[]), %s::jsonb, %s, %s)",
            (seq, namespace, row.terms, json.dumps(row.freqs), row.length, row.own),
        )
        self._count(dict.fromkeys(row.terms, 1), 1, row.length)
        self._refresh_following(seq)
        if self.defer_vectors and self.writer is not None:
            self.writer.mark(seq)
            if self.on_pending is not None:
                self.on_pending()
            return
        vector = self.vector_text(text)
        if vector is not None:
            self.conn.execute(
                "insert into memory_vectors (seq, namespace, embedding) values (%s, %s, %s::vector)",
                (seq, namespace, vector),
            )

    def remove(self, seq: int) -> None:
        """Take one record out of the index (its counts too); the turns after a conversation
        turn lose it from their context."""
        row = self.conn.execute(
            "delete from memory_search where seq = %s returning tsvector_to_array(tokens), doc_length", (seq,)
        ).fetchone()
        if row is not None:
            self._count(dict.fromkeys(row[0], -1), -1, -row[1])
        if self.writer is not None:
            self.writer.unmark(seq)
        if self._has_vectors():
            self.conn.execute("delete from memory_vectors where seq = %s", (seq,))
        self._refresh_following(seq)

    def replace(self, seq: int, namespace: str, text: str) -> None:
        self.remove(seq)
        self.add(seq, namespace, text)

    def _count(self, changes: Mapping[str, int], docs: int, tokens: int) -> None:
        """Add ``changes`` (term -> change of the records holding it) to the document counts,
        and ``docs`` records and ``tokens`` tokens to the totals."""
        # Terms in sorted order: two transactions counting the same terms lock their rows in
        # the same order, so they wait for each other instead of deadlocking.
        gained = sorted(term for term, change in changes.items() if change > 0)
        if any(term.startswith(TAG) for term in gained):  # a marker: a text in a language
            self._languages = None  # languages() reads them again
        if gained:
            self.conn.execute(
                "insert into search_terms (term, docs) select t, n from unnest(%s::text[], %s::int[]) u(t, n)"
                " on conflict (term) do update set docs = search_terms.docs + excluded.docs",
                (gained, [changes[term] for term in gained]),
            )
        lost: dict[int, list[str]] = {}
        for term, change in sorted(changes.items()):
            if change < 0:
                lost.setdefault(change, []).append(term)
        for change, terms in lost.items():  # nearly always one change: -1
            self.conn.execute(
                "update search_terms set docs = docs + %s where term = any(%s)", (change, terms)
            )
        if docs or tokens:
            self.conn.execute(
                "update search_totals set docs = docs + %s, tokens = tokens + %s where id = 1", (docs, tokens)
            )

    # -- turn context --------------------------------------------------------------------

    def _context(self, seq: int, fields: turn_context.ChainFields | None = None) -> tuple[str, ...]:
        """Record ``seq``'s context columns: the own tokens of the turns before it, if it is a
        conversation turn (state/turn_context.py), else empty ones."""
        if not has_context(tokenize):
            return ()
        return turn_context.context_of(self.sql, seq, self._own_tokens, fields)

    def _own_tokens(self, seqs: list[int]) -> dict[int, str]:
        """seq -> own tokens of those records of ``seqs`` that have a row (a redacted turn has
        none: to the turns after it, it is an empty turn, as on the SQLite engine)."""
        rows = self.conn.execute("select seq, own from memory_search where seq = any(%s)", (seqs,))
        return dict(rows.fetchall())

    def _refresh_following(self, seq: int) -> None:
        """Record ``seq`` came out of order, changed or went: the rows of the turns after it
        that hold it in their context are made anew (usually there are none)."""
        if has_context(tokenize):
            later = turn_context.followers(self.sql, seq)
            if later:
                self.remake(later)

    def remake(self, seqs: list[int]) -> int:
        """Make the rows of records ``seqs`` with their context as it is now, and the counts
        with them; a record without a row is left alone. The number of rows changed."""
        rows = self.conn.execute(
            "select seq, own, tsvector_to_array(tokens), doc_length, freqs from memory_search where seq = any(%s)",
            (seqs,),
        ).fetchall()
        changes: Counter[str] = Counter()
        tokens = 0
        updates = []
        for seq, own, terms, length, freqs in rows:
            row = IndexRow.of(own, self._context(seq))
            if row.length == length and row.freqs == freqs:
                continue
            changes.update(row.terms)
            changes.subtract(terms)
            tokens += row.length - length
            updates.append((row.terms, json.dumps(row.freqs), row.length, seq))
        if updates:
            self.conn.cursor().executemany(
                "update memory_search set tokens = array_to_tsvector(%s::text[]), freqs = %s::jsonb,"
                " doc_length = %s where seq = %s",
                updates,
            )
            self._count(changes, 0, tokens)
        return len(updates)

    def fill_context(self) -> int:
        """Give the rows indexed before migration m0004 (``context_pending``) their context:
        once, when the index first opens a database that has them (every row written since
        gets its context as it is written). In batches, each a write transaction of the
        store's; the number of rows that changed."""
        pending = "select seq from memory_search where context_pending order by seq limit %s"
        if self.conn.execute(pending, (1,)).fetchone() is None:
            return 0
        log.info("giving the search index's conversation turns their context (once, after an upgrade)")
        made = 0
        while True:
            with self.conn.transaction():
                # After every other process's write, as the store's writes (state/pg/connection.py).
                self.conn.execute("select pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                seqs = [row[0] for row in self.conn.execute(pending, (FILL_BATCH,))]
                if not seqs:
                    return made
                made += self.remake(seqs)
                self.conn.execute(
                    "update memory_search set context_pending = false where seq = any(%s)", (seqs,)
                )

    def vector_text(self, text: str) -> str | None:
        """``text``'s vector in pgvector's text form (None for no vector)."""
        return pgvector_text(self.embedder.embed(text))

    def frequencies(self, tokens: Any) -> tuple[dict[str, int], int]:
        """(token -> records holding it, records): the index statistics a query vector is
        weighted with (state/search.py TermStatistics is the SQLite engine's)."""
        wanted = sorted(tokens)
        documents, _, found = self._statistics(wanted)
        return {token: found.get(token, 0) for token in wanted}, documents

    def languages(self) -> set[str]:
        """The languages the index holds texts in (state/languages.py), by their markers'
        document counts: read again every LANGUAGES_TTL seconds (other processes write too)
        and after this index counts a text in a language (a write, a re-index)."""
        now = time.monotonic()
        if self._languages is None or now - self._languages_at > LANGUAGES_TTL:
            counts, _ = self.frequencies(MARKERS)
            self._languages = held({mark for mark, records in counts.items() if records})
            self._languages_at = now
        return self._languages

    def _statistics(self, terms: list[str]) -> tuple[int, int, dict[str, int]]:
        """(records, tokens, term -> records holding it) in one statement, so one snapshot:
        read one after the other, a write committed between them (a search runs beside the
        writes: state/pg/apart_pool.py) could count more records holding a term than records,
        and BM25's IDF of that has no logarithm. One round trip instead of two, too."""
        documents, tokens, holding = self.conn.execute(
            "select t.docs, t.tokens, coalesce(jsonb_object_agg(s.term, s.docs)"
            " filter (where s.term is not null), '{}'::jsonb) from search_totals t"
            " left join search_terms s on s.term = any(%s) where t.id = 1 group by t.docs, t.tokens",
            (terms,),
        ).fetchone()
        return documents, tokens, holding

    def _has_vectors(self) -> bool:
        if self._vectors_ready:
            return True
        found = self.conn.execute("select to_regclass('memory_vectors') is not null").fetchone()[0]
        self._vectors_ready = bool(found)
        return self._vectors_ready

    # -- queries -------------------------------------------------------------------------

    def with_answers(self, scored: list[Scored]) -> list[Scored]:
        """BM25's ranking with each asking turn's reply lifted (state/search.py with_answers)."""
        return with_answers(self.sql, scored, self.reply_lift)

    def bm25(self, terms: list[str], namespaces: list[str], limit: int) -> list[tuple[int, float]]:
        """(seq, BM25 score) of the best ``limit`` records for ``terms``, best first."""
        if not terms:
            return []
        documents, total, holding = self._statistics(terms)
        if not documents:
            return []
        # As the SQLite engine: past MAX_RANKED_MATCHES matches, a bounded set is ranked, by
        # the query's MAX_BOUNDED_TERMS rarest terms.
        bounded = min(sum(holding.get(term, 0) for term in terms), documents) > MAX_RANKED_MATCHES
        if bounded:
            terms = informative_terms(terms, holding, MAX_BOUNDED_TERMS)
        params = {
            "k1": K1,
            "b": B,
            "avgdl": total / documents,
            "terms": terms,
            "idfs": [idf(documents, holding.get(term, 0)) for term in terms],
            "namespaces": namespaces,
            "query": tsquery_literal(terms),
            "limit": limit,
            "newest": NEWEST_COMMON_MATCHES,
        }
        sql = _BM25
        if bounded:
            rare, common = split_rare_terms(terms, holding, RARE_TERMS_BUDGET)
            if common:
                params["common"] = tsquery_literal(common)
                if rare:
                    params["rare"] = tsquery_literal(rare)
                    sql = _BM25_BOUNDED
                else:
                    sql = _BM25_COMMON_ONLY
        # The bounded set is planned for its own terms each time, never prepared: a plan made
        # for any terms (the generic plan of a statement psycopg prepares after five runs)
        # cannot tell whether the newest common matches are found faster in the newest rows
        # or through the index, and read all 18,000 matches of a query whose common terms most
        # records hold (100k records, half of them turns with context: a brief's task p50
        # 58 -> 5 ms). Planning costs ~0.3 ms.
        rows = self.conn.execute(sql, params, prepare=False if sql is not _BM25 else None).fetchall()
        return [(row[0], float(row[1])) for row in rows]

    def _knn(
        self, vector: str, namespaces: list[str], limit: int, among: list[int] | None = None
    ) -> list[int]:
        """The nearest records by cosine (all of the namespaces', or only ``among``), nearest
        first, without those below MIN_VECTOR_SIMILARITY (noise)."""
        if not self._has_vectors():
            return []
        if among is not None:  # a rerank: the exact distances of a few records
            sql = (
                "select seq, embedding <=> %(vector)s::vector as distance from memory_vectors"
                " where namespace = any(%(namespaces)s) and seq = any(%(among)s) order by distance, seq"
                " limit %(limit)s"
            )
        else:
            # Ordered by the distance alone, so that the HNSW index answers (a second sort
            # key made it read every vector: 320 ms at 100k); ties ordered by seq after.
            self._search_width(limit)
            sql = (
                "select seq, distance from (select seq, embedding <=> %(vector)s::vector as distance"
                " from memory_vectors where namespace = any(%(namespaces)s)"
                " order by embedding <=> %(vector)s::vector limit %(limit)s) nearest order by distance, seq"
            )
        rows = self.conn.execute(
            sql, {"vector": vector, "namespaces": namespaces, "among": among, "limit": limit}
        ).fetchall()
        return [seq for seq, distance in rows if 1.0 - distance >= MIN_VECTOR_SIMILARITY]

    def _search_width(self, limit: int) -> None:
        """HNSW returns at most ``hnsw.ef_search`` records (40 by default): at least the page
        asked for, and twice that for recall."""
        # Set at each scan (one round trip): a value set inside a transaction that rolls
        # back would not stay, so none is remembered.
        width = max(HNSW_EF_SEARCH, 2 * limit)
        self.conn.execute("select set_config('hnsw.ef_search', %s, false)", (str(width),))

    def query_vector(self, query: str) -> str | None:
        """The query's vector (weighted by the index's statistics where the embedder can), or
        None when there is nothing to compare or the embedder failed: the words rank alone."""
        embed_query = getattr(self.embedder, "embed_query", None)
        try:
            weights: Frequencies = self.frequencies
            if self.embeds_queries_inline:  # its words' tagged stems counted (state/search.py)
                weights = with_language_forms(weights, tokenize.language_forms(query, self.languages()))
            embedding = embed_query(query, weights) if embed_query else self.embedder.embed(query)
        except Exception:
            return None
        return pgvector_text(embedding) if any(embedding) else None

    def bm25_terms(self, query: str) -> list[str]:
        """The query's terms without single CJK characters that most records hold (as the
        SQLite engine leaves them out: state/search.py MAX_CJK_CHAR_SHARE)."""
        terms = tokenize.query_terms(query) + tokenize.language_terms(query, self.languages())
        chars = [t for t in terms if tokenize.is_cjk_char(t)]
        if not chars:
            return terms
        known, total = self.frequencies(chars)
        common = {t for t, n in known.items() if n > max(MAX_CJK_CHAR_SHARE * total, MIN_COMMON_RECORDS)}
        return [t for t in terms if t not in common]

    def search(
        self,
        query: str,
        namespaces: list[str],
        *,
        limit: int = 10,
        candidates: int = 50,
        page: int | None = None,
    ) -> list[SearchHit]:
        """Fused hits for ``query`` within ``namespaces``, best first (as
        :meth:`state.search.SearchIndex.search`)."""
        namespaces = list(dict.fromkeys(namespaces))
        if not namespaces or not query.strip():
            return []
        pool = max(candidates, limit)
        bm25 = (
            [seq for seq, _ in self.with_answers(self.bm25(self.bm25_terms(query), namespaces, pool))[:pool]]
            if self.bm25_weight > 0
            else []
        )
        knn: list[int] = []
        fill = False
        if self.vector_weight > 0:
            mode = resolved_mode(self.vector_mode, tokenize.query_terms(query), tokenize)
            scan, fill = vector_scan(len(bm25), page or limit, self.bm25_weight, mode)
            if scan or mode == "rerank":
                vector = self.query_vector(query)
                if vector is not None:
                    knn = (
                        self._knn(vector, namespaces, pool)
                        if scan
                        else self._knn(vector, namespaces, pool, bm25)
                    )
        return fuse(bm25, knn, self.bm25_weight, self.vector_weight, limit, fill=fill)
