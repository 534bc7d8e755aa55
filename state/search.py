"""Hybrid search: FTS5 (BM25) and sqlite-vec KNN, fused by weighted reciprocal rank.

Both indexes share ``memory_records.seq`` as their rowid. The vector table is derived data:
it records which embedder and dimension built it and is rebuilt when they change.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Iterable

from state.db import Connection, transaction
from state.embedders import Embedder, serialize
from state.ids import now_iso
from state.tokenize import fts_query, index_text

log = logging.getLogger(__name__)

RRF_K = 60  # the usual reciprocal-rank-fusion constant; flattens the top ranks less than 1
# Cosine similarity below which a vector match is treated as noise: the hashing embedder's
# collisions alone give unrelated texts |cos| of about 0.05.
MIN_VECTOR_SIMILARITY = 0.08
VECTOR_METRIC = "l2"
# Ranking inside FTS5 first is fastest; this many times the page size is taken from it before
# the namespace filter, with a full filtered query as the fallback when too few survive.
FTS_OVERFETCH = 4


def record_text(title: str, content: str, triggers: list[str]) -> str:
    """The text of a memory record that both indexes see (one definition for insert and rebuild)."""
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
        vector_weight: float = 0.5,
        vector_mode: str = "fallback",
    ) -> None:
        self.conn = conn
        self.embedder = embedder
        self.bm25_weight = bm25_weight
        self.vector_weight = vector_weight
        self.vector_mode = vector_mode
        # Set by Store.open (state/redaction.py): whether FTS5 deletes are secure deletes.
        self.fts_secure_delete = False
        # Records whose vector the embedder failed to make; see _insert_vector.
        self.pending_vectors: set[int] = set()

    # -- maintenance -------------------------------------------------------------------

    def ensure_vector_table(self, progress: "callable | None" = None) -> bool:
        """Create the vector table, or rebuild it if the embedder changed. True if rebuilt."""
        row = self.conn.execute("select embedder, dimension from vector_index_meta").fetchone()
        exists = self.conn.execute(
            "select 1 from sqlite_master where name = 'memory_vec'"
        ).fetchone()
        wanted = (f"{self.embedder.name}:{VECTOR_METRIC}", self.embedder.dimension)
        if row is not None and tuple(row) == wanted and exists:
            return False
        log.info("building vector index with %s (dimension %d)", *wanted)
        with transaction(self.conn):
            self.conn.execute("drop table if exists memory_vec")
            # Embeddings are L2-normalized, so L2 distance ranks exactly like cosine and
            # sqlite-vec computes it faster (bench/RESULTS.md).
            self.conn.execute(
                "create virtual table memory_vec using vec0("
                " namespace text partition key,"
                f" embedding float[{self.embedder.dimension}])"
            )
            self.conn.execute(
                "insert or replace into vector_index_meta (id, embedder, dimension, built_at)"
                " values (1, ?, ?, ?)",
                (*wanted, now_iso()),
            )
            rows = self.conn.execute(
                "select seq, namespace, title, content, triggers from memory_records"
                " where deleted_at is null"
            ).fetchall()
            for done, (seq, namespace, title, content, triggers) in enumerate(rows, 1):
                self._insert_vector(seq, namespace, record_text(title, content, json.loads(triggers)))
                if progress and done % 1000 == 0:
                    progress(done, len(rows))
        return True

    def _insert_vector(self, seq: int, namespace: str, text: str) -> None:
        """Embed and store one vector. An embedder that fails (a model server that is down)
        must not cost the write: the record and its FTS entry are kept, and the vector is
        left for :meth:`backfill` (the ``backfill_vectors`` job, or ``doctor --repair``)."""
        try:
            embedding = serialize(self.embedder.embed(text))
        except Exception as exc:
            if seq not in self.pending_vectors:
                log.warning("embedder %s failed (%s): record %d is kept and searchable by words;"
                            " its vector is added when the embedder works again",
                            self.embedder.name, exc, seq)
            self.pending_vectors.add(seq)
            return
        self.pending_vectors.discard(seq)
        self.conn.execute(
            "insert into memory_vec (rowid, namespace, embedding) values (?, ?, ?)",
            (seq, namespace, embedding),
        )

    def find_missing_vectors(self) -> int:
        """Searchable records without a vector (left by a failing embedder before a restart)
        become pending again; cheap when the counts agree, which is the usual case."""
        live = self.conn.execute(
            "select count(*) from memory_records where deleted_at is null").fetchone()[0]
        vectors = self.conn.execute("select count(*) from memory_vec").fetchone()[0]
        if vectors >= live:
            return 0
        have = {row[0] for row in self.conn.execute("select rowid from memory_vec")}
        self.pending_vectors |= {
            seq for (seq,) in self.conn.execute(
                "select r.seq from memory_records r where r.deleted_at is null and r.content != ''")
            if seq not in have}
        return len(self.pending_vectors)

    def backfill(self, limit: int = 500) -> int:
        """Embed up to ``limit`` pending records; the number of vectors added."""
        if not self.pending_vectors:
            return 0
        added = 0
        with transaction(self.conn):
            for seq in sorted(self.pending_vectors)[:limit]:
                row = self.conn.execute(
                    "select namespace, title, content, triggers, deleted_at from memory_records"
                    " where seq = ?", (seq,)).fetchone()
                if row is None or row["deleted_at"] or not row["content"]:
                    self.pending_vectors.discard(seq)  # gone, or redacted, meanwhile
                    continue
                self.conn.execute("delete from memory_vec where rowid = ?", (seq,))
                self._insert_vector(seq, row["namespace"], record_text(
                    row["title"], row["content"], json.loads(row["triggers"])))
                if seq in self.pending_vectors:
                    break  # still failing: try again at the next run
                added += 1
        return added

    def add(self, seq: int, namespace: str, text: str) -> None:
        """Index one record (call inside the caller's write transaction)."""
        self.conn.execute(
            "insert into memory_fts (rowid, tokens) values (?, ?)", (seq, index_text(text))
        )
        self._insert_vector(seq, namespace, text)

    def remove(self, seq: int) -> None:
        self.pending_vectors.discard(seq)
        self.conn.execute("delete from memory_fts where rowid = ?", (seq,))
        self.conn.execute("delete from memory_vec where rowid = ?", (seq,))

    def forget_deleted(self) -> None:
        """Make deletions final in the FTS segments too (redaction). With FTS5 secure-delete
        on (state/redaction.py) they already are; older SQLite merges the index instead."""
        if not self.fts_secure_delete:
            self.conn.execute("insert into memory_fts (memory_fts) values ('optimize')")

    def replace(self, seq: int, namespace: str, text: str) -> None:
        self.remove(seq)
        self.add(seq, namespace, text)

    # -- queries -----------------------------------------------------------------------

    def _bm25(self, match: str, namespaces: list[str], limit: int) -> list[int]:
        marks = ",".join("?" * len(namespaces))
        # Fast path: let FTS5 rank on its own (no join while scoring), then filter.
        rows = self.conn.execute(
            "select r.seq from (select rowid, rank from memory_fts where memory_fts match ?"
            " order by rank limit ?) f join memory_records r on r.seq = f.rowid"
            f" where r.namespace in ({marks}) and r.deleted_at is null order by f.rank limit ?",
            (match, limit * FTS_OVERFETCH, *namespaces, limit),
        ).fetchall()
        if len(rows) < limit:
            # Other namespaces crowded the top: rank only this namespace's matches.
            rows = self.conn.execute(
                "select r.seq from memory_fts f join memory_records r on r.seq = f.rowid"
                f" where memory_fts match ? and r.namespace in ({marks}) and r.deleted_at is null"
                " order by bm25(memory_fts) limit ?",
                (match, *namespaces, limit),
            ).fetchall()
        return [row[0] for row in rows]

    def _knn(self, query: str, namespaces: list[str], limit: int) -> list[int]:
        try:
            embedding = self.embedder.embed(query)
        except Exception as exc:  # a failing embedder leaves the words (BM25) to rank alone
            log.warning("embedder %s failed on a query (%s): ranking by words only",
                        self.embedder.name, exc)
            return []
        if not any(embedding):
            return []  # nothing to compare (e.g. only stopwords): cosine is undefined
        vector = serialize(embedding)
        seqs: list[tuple[float, int]] = []
        for namespace in namespaces:
            rows = self.conn.execute(
                "select rowid, distance from memory_vec"
                " where embedding match ? and k = ? and namespace = ?",
                (vector, limit, namespace),
            ).fetchall()
            # For unit vectors, cosine similarity = 1 - d^2 / 2. Weak similarity is collision
            # noise, not evidence, and must not enter the fused ranking.
            seqs.extend((distance, seq) for seq, distance in rows
                        if distance is not None
                        and 1.0 - distance * distance / 2 >= MIN_VECTOR_SIMILARITY)
        seqs.sort()
        return [seq for _, seq in seqs[:limit]]

    def search(
        self, query: str, namespaces: Iterable[str], *, limit: int = 10, candidates: int = 50
    ) -> list[SearchHit]:
        """Fused hits for ``query`` within ``namespaces``, best first.

        In ``fallback`` mode the vector ranking is only consulted when BM25 finds fewer than
        ``limit`` records (typos, no shared words): with the offline hashing embedder, always
        fusing ranked worse than BM25 alone on MADial-Bench and costs a KNN scan per query.
        ``always`` fuses every query (for a semantic embedder).
        """
        namespaces = list(dict.fromkeys(namespaces))
        if not namespaces or not query.strip():
            return []
        pool = max(candidates, limit)
        match = fts_query(query)
        bm25 = self._bm25(match, namespaces, pool) if match and self.bm25_weight > 0 else []
        use_vectors = self.vector_weight > 0 and (
            self.vector_mode == "always" or len(bm25) < limit or self.bm25_weight <= 0)
        knn = self._knn(query, namespaces, pool) if use_vectors else []
        scores: dict[int, list] = {}
        for rank, seq in enumerate(bm25, 1):
            scores.setdefault(seq, [0.0, None, None])
            scores[seq][0] += self.bm25_weight / (RRF_K + rank)
            scores[seq][1] = rank
        for rank, seq in enumerate(knn, 1):
            scores.setdefault(seq, [0.0, None, None])
            scores[seq][0] += self.vector_weight / (RRF_K + rank)
            scores[seq][2] = rank
        # Ties (equal fused score) go to the newer record: seq grows with time.
        ordered = sorted(scores.items(), key=lambda item: (-item[1][0], -item[0]))
        return [SearchHit(seq, s, b, v) for seq, (s, b, v) in ordered[:limit]]
