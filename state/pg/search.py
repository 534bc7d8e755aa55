"""Hybrid search on PostgreSQL: BM25 over the SQLite engine's tokens, pgvector, the same fusion.

What the SQLite engine's :class:`state.search.SearchIndex` does with FTS5 and sqlite-vec, this
does with a tsvector, a GIN index and pgvector, so that one store ranks alike on either engine
(tests/pg/test_search_parity.py holds them together):

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
* **Fusion and vector modes**: state/search.py's ``fuse`` and ``resolved_mode``.

Not here yet (the SQLite engine has them): a conversation turn's context columns and the reply
lift (both need the records' sessions, which this engine's repositories do not hold yet), the
bounded BM25 set of large stores, and the coarse vector scan.
"""

from __future__ import annotations

import json
import math
from typing import Any

from state import tokenize
from state.embedders import Embedder, serialize
from state.search import (
    MAX_CJK_CHAR_SHARE,
    MAX_RANKED_MATCHES,
    MIN_COMMON_RECORDS,
    MIN_VECTOR_SIMILARITY,
    NEWEST_COMMON_MATCHES,
    RARE_TERMS_BUDGET,
    SearchHit,
    fuse,
    resolved_mode,
    split_rare_terms,
)

K1 = 1.2
B = 0.75
# The HNSW scan's candidate list (pgvector's hnsw.ef_search; its default is 40): at least
# twice the records a KNN asks for (the fused search asks for 50).
HNSW_EF_SEARCH = 100

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
_BM25_BOUNDED = _SCORED.format(
    records="(select seq from memory_search where namespace = any(%(namespaces)s)"
    " and tokens @@ %(rare)s::tsquery union "
    + _NEWEST_COMMON.format(besides="and not tokens @@ %(rare)s::tsquery")
    + ") c join memory_search s on s.seq = c.seq",
    matching="true",
)
_BM25_COMMON_ONLY = _SCORED.format(
    records=f"{_NEWEST_COMMON.format(besides='')} c join memory_search s on s.seq = c.seq", matching="true"
)


def pgvector_text(embedding: list[float]) -> str | None:
    """pgvector's text form of an embedding quantized to int8 as the SQLite engine stores it
    (state/embedders.py serialize), so cosine distances agree; None for a zero vector."""
    values = [b - 256 if b > 127 else b for b in serialize(embedding)]
    return "[" + ",".join(map(str, values)) + "]" if any(values) else None


def frequencies(own: list[str]) -> dict[str, float]:
    """Each distinct token's frequency in a record (own tokens count 1)."""
    counts: dict[str, float] = {}
    for token in own:
        counts[token] = counts.get(token, 0.0) + 1.0
    return counts


def quoted(lexeme: str) -> str:
    """A lexeme as a tsquery literal quotes it (any character may be in a token)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsquery_literal(terms: list[str]) -> str:
    return " | ".join(quoted(term) for term in terms)


def idf(documents: int, holding: int) -> float:
    """FTS5's IDF of a term held by ``holding`` of ``documents`` records."""
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
        reply_lift: float = 0.0,
    ) -> None:
        self.conn = conn
        self.embedder = embedder
        self.bm25_weight = bm25_weight
        self.vector_weight = vector_weight
        self.vector_mode = vector_mode
        # Not applied on this engine yet (nor the turn context): issue #18's notes.
        self.reply_lift = reply_lift
        self._vectors_ready = False
        # As the SQLite engine's index keeps them: vectors are made inside the write here, so
        # none is ever pending, and nothing reads when the index last changed.
        self.pending_vectors: set[int] = set()
        self.changed_at = 0.0

    @property
    def embeds_queries_inline(self) -> bool:
        """As :attr:`state.search.SearchIndex.embeds_queries_inline`."""
        return bool(getattr(self.embedder, "runs_inline", False))

    def find_missing_vectors(self) -> int:
        """Records without a vector: none (each is embedded inside its write)."""
        return 0

    def forget_deleted(self) -> None:
        """A deleted row is gone from every index PostgreSQL reads; its bytes stay in the
        table's dead tuples until VACUUM (autovacuum) reclaims them."""

    # -- writes --------------------------------------------------------------------------

    def ensure_vectors(self) -> None:
        """The vector table for this embedder's dimension, with its HNSW index."""
        if self._vectors_ready:
            return
        dimension = int(self.embedder.dimension)
        self.conn.execute(
            "create table if not exists memory_vectors (seq bigint primary key,"
            f" namespace text not null, embedding vector({dimension}) not null)"
        )
        self.conn.execute(
            "create index if not exists memory_vectors_hnsw on memory_vectors"
            " using hnsw (embedding vector_cosine_ops)"
        )
        self.conn.execute("create index if not exists memory_vectors_namespace on memory_vectors (namespace)")
        self._vectors_ready = True

    def add(self, seq: int, namespace: str, text: str) -> None:
        """Index one record: its tokens, the term counts and totals, its vector."""
        own = tokenize.index_text(text).split()
        self.conn.execute(
            "insert into memory_search (seq, namespace, tokens, freqs, doc_length)"
            " values (%s, %s, array_to_tsvector(%s::text[]), %s::jsonb, %s)",
            (seq, namespace, sorted(set(own)), json.dumps(frequencies(own)), len(own)),
        )
        self._count(sorted(set(own)), len(own), +1)
        vector = self._vector(text)
        if vector is not None:
            self.ensure_vectors()
            self.conn.execute(
                "insert into memory_vectors (seq, namespace, embedding) values (%s, %s, %s::vector)",
                (seq, namespace, vector),
            )

    def remove(self, seq: int) -> None:
        """Take one record out of the index (its counts too)."""
        row = self.conn.execute(
            "delete from memory_search where seq = %s returning tsvector_to_array(tokens), doc_length", (seq,)
        ).fetchone()
        if row is not None:
            self._count(sorted(row[0]), row[1], -1)
        if self._has_vectors():
            self.conn.execute("delete from memory_vectors where seq = %s", (seq,))

    def replace(self, seq: int, namespace: str, text: str) -> None:
        self.remove(seq)
        self.add(seq, namespace, text)

    def _count(self, terms: list[str], length: int, change: int) -> None:
        # Terms in sorted order: two transactions counting the same terms lock their rows in
        # the same order, so they wait for each other instead of deadlocking.
        if terms and change > 0:
            self.conn.execute(
                "insert into search_terms (term, docs) select t, %s from unnest(%s::text[]) t"
                " on conflict (term) do update set docs = search_terms.docs + excluded.docs",
                (change, terms),
            )
        elif terms:
            self.conn.execute(
                "update search_terms set docs = docs + %s where term = any(%s)", (change, terms)
            )
        self.conn.execute(
            "update search_totals set docs = docs + %s, tokens = tokens + %s where id = 1",
            (change, change * length),
        )

    def _vector(self, text: str) -> str | None:
        return pgvector_text(self.embedder.embed(text))

    def frequencies(self, tokens: Any) -> tuple[dict[str, int], int]:
        """(token -> records holding it, records): the index statistics a query vector is
        weighted with (state/search.py TermStatistics is the SQLite engine's)."""
        wanted = sorted(tokens)
        found = dict(
            self.conn.execute(
                "select term, docs from search_terms where term = any(%s)", (wanted,)
            ).fetchall()
        )
        documents = self.conn.execute("select docs from search_totals where id = 1").fetchone()[0]
        return {token: found.get(token, 0) for token in wanted}, documents

    def _has_vectors(self) -> bool:
        if self._vectors_ready:
            return True
        found = self.conn.execute("select to_regclass('memory_vectors') is not null").fetchone()[0]
        self._vectors_ready = bool(found)
        return self._vectors_ready

    # -- queries -------------------------------------------------------------------------

    def bm25(self, terms: list[str], namespaces: list[str], limit: int) -> list[tuple[int, float]]:
        """(seq, BM25 score) of the best ``limit`` records for ``terms``, best first."""
        if not terms:
            return []
        documents, total = self.conn.execute("select docs, tokens from search_totals where id = 1").fetchone()
        if not documents:
            return []
        holding = dict(
            self.conn.execute("select term, docs from search_terms where term = any(%s)", (terms,)).fetchall()
        )
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
        # As the SQLite engine: past MAX_RANKED_MATCHES matches, a bounded set is ranked.
        if min(sum(holding.get(term, 0) for term in terms), documents) > MAX_RANKED_MATCHES:
            rare, common = split_rare_terms(terms, holding, RARE_TERMS_BUDGET)
            if common:
                params["common"] = tsquery_literal(common)
                if rare:
                    params["rare"] = tsquery_literal(rare)
                    sql = _BM25_BOUNDED
                else:
                    sql = _BM25_COMMON_ONLY
        rows = self.conn.execute(sql, params).fetchall()
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
            embedding = embed_query(query, self.frequencies) if embed_query else self.embedder.embed(query)
        except Exception:
            return None
        return pgvector_text(embedding) if any(embedding) else None

    def bm25_terms(self, query: str) -> list[str]:
        """The query's terms without single CJK characters that most records hold (as the
        SQLite engine leaves them out: state/search.py MAX_CJK_CHAR_SHARE)."""
        terms = tokenize.query_terms(query)
        chars = [t for t in terms if tokenize.is_cjk_char(t)]
        if not chars:
            return terms
        known, total = self.frequencies(chars)
        common = {t for t, n in known.items() if n > max(MAX_CJK_CHAR_SHARE * total, MIN_COMMON_RECORDS)}
        return [t for t in terms if t not in common]

    def search(
        self, query: str, namespaces: list[str], *, limit: int = 10, candidates: int = 50
    ) -> list[SearchHit]:
        """Fused hits for ``query`` within ``namespaces``, best first (as
        :meth:`state.search.SearchIndex.search`)."""
        namespaces = list(dict.fromkeys(namespaces))
        if not namespaces or not query.strip():
            return []
        pool = max(candidates, limit)
        bm25 = (
            [seq for seq, _ in self.bm25(self.bm25_terms(query), namespaces, pool)]
            if self.bm25_weight > 0
            else []
        )
        knn: list[int] = []
        if self.vector_weight > 0:
            mode = resolved_mode(self.vector_mode, tokenize.query_terms(query), tokenize)
            scan = len(bm25) < limit or self.bm25_weight <= 0 or mode == "always"
            if scan or mode == "rerank":
                vector = self.query_vector(query)
                if vector is not None:
                    knn = (
                        self._knn(vector, namespaces, pool)
                        if scan
                        else self._knn(vector, namespaces, pool, bm25)
                    )
        return fuse(bm25, knn, self.bm25_weight, self.vector_weight, limit)
