"""Vectors off the write path for embedders that block: a model (tens of milliseconds a
text) or an embedding server (up to its timeout when it is down). With one of those the
daemon's writes store the record and its words and leave the vector pending, and this worker
makes the vectors after the request in batches: the embeddings in a worker thread, so the
event loop never waits for them, and only the SQL on the loop. Until then those records rank
by their words.

The hashing embedder (the default) is not deferred: it takes ~0.25 ms of CPU a record and no
I/O, and deferring it saved nothing. With group commit a batch of writes already sends its
vector pages to the WAL once, so the worker's own batches only added the re-reads (in process,
10k store, 8 writer tasks under group commit, 5 alternating rounds of 1,500 deltas: 0.976 ms
of CPU a delta deferred against 0.877 inline, medians, 1.11x; bench/vector_deferral.py).
Its only pending vectors are then a failing embedder's, made by the ``backfill_vectors`` job.

On PostgreSQL every embedder is deferred, for another reason: pgvector's HNSW insert was most
of a write's time on the server, held inside the write transaction (state/pg/vector_writer.py
has the figures). There the worker wakes after the write's commit, and each batch, from
reading the records to storing their vectors, runs in a worker thread on the writer's own
connection; at start it looks for records a stopped process left without a vector.

Nothing is lost at a crash: a record without its vector is found again when the store opens
(``SearchIndex.find_missing_vectors``). A failing embedder is retried after RETRY_SECONDS, and
by the ``backfill_vectors`` job (daemon/jobs.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from state.group_commit import after_commit, flush_now
from state.search import SearchIndex

log = logging.getLogger(__name__)

# Records a batch embeds: one call of the worker thread, and one transaction on the loop
# that stores their vectors.
BATCH = 64
RETRY_SECONDS = 30.0
# PostgreSQL: a batch that could only leave records pending (a write of theirs in progress,
# or not committed yet) is tried again after this, doubling while it stays so, up to
# RETRY_SECONDS: the write's commit usually wakes the worker first.
KEPT_RETRY_SECONDS = 0.2


class VectorWorker:
    """Makes the vectors that the daemon's writes leave pending."""

    def __init__(self, search: SearchIndex, batch: int = BATCH, conn: Any = None) -> None:
        self.search = search
        self.batch = batch
        # The store's connection, whose group commits the writes (on PostgreSQL the worker
        # wakes after them: its own connection sees only what is committed).
        self.conn = conn
        # PostgreSQL's index makes a batch by itself, on its own connection (state/pg/search.py).
        self._make_apart: Callable[[int], tuple[int, bool]] | None = (
            getattr(search, "make_vectors", None) if getattr(search, "vectors_apart", False) else None
        )
        self.apart = self._make_apart is not None
        self._kept_delay = KEPT_RETRY_SECONDS
        self._task: asyncio.Task[None] | None = None
        self._retry_at = 0.0  # after a failure, wait for this (time.monotonic) or the job
        self._stopping = False
        self._lock = asyncio.Lock()  # one drain at a time: no record is embedded twice

    def start(self) -> None:
        """Writes from now on leave their vectors to this worker, if the embedder blocks or
        the store makes vectors apart (PostgreSQL)."""
        if self.apart:
            self.search.defer_vectors = True
            self.search.on_pending = lambda: after_commit(self.conn, self.wake)
            self._task = asyncio.get_running_loop().create_task(self._run(scan=True))
            return
        if not getattr(self.search.embedder, "runs_inline", False):
            self.search.defer_vectors = True
            self.search.on_pending = self.wake
        self.wake()  # a failing embedder's leftovers, found when the store opened

    def wake(self) -> None:
        """A write left a vector pending: make it soon (after the request's loop turn)."""
        if (
            self._task is None
            and not self._stopping
            and self.search.pending_vectors
            and time.monotonic() >= self._retry_at
        ):
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def catch_up(self) -> str:
        """Every pending vector now, failed ones too (the ``backfill_vectors`` job)."""
        self._retry_at = 0.0
        added = await self._drain()
        return f"{added} vectors added"

    async def stop(self) -> None:
        """At shutdown: writes embed at once again, and what is pending is made now."""
        self._stopping = True
        if self._task is not None:
            await asyncio.shield(self._task)
        self.search.defer_vectors = False
        self.search.on_pending = None
        if self.apart and self.conn is not None:
            flush_now(self.conn)  # the last writes' vectors: the writer sees committed ones only
        try:
            added = await self._drain()
        except Exception as exc:  # the database gone at shutdown, say: the next start makes them
            log.warning("making the last pending vectors failed: %s", exc)
            added = 0
        if self.search.pending_vectors:
            log.warning(
                "%d records have no vector yet: they are found by their words, and"
                " their vectors are made at the next start",
                len(self.search.pending_vectors),
            )
        elif added:
            log.info("made the last %d pending vectors", added)

    async def _run(self, scan: bool = False) -> None:
        try:
            await asyncio.sleep(0)  # the writes of the waking loop turn come first
            if scan:  # PostgreSQL, at start: a stopped process's records without a vector
                await asyncio.to_thread(self.search.find_missing_vectors)
            await self._drain()
        except Exception:  # a bug must not stop the daemon: the job and the next start retry
            log.exception("making pending vectors failed; retrying in %.0f s", RETRY_SECONDS)
            self._retry_at = time.monotonic() + RETRY_SECONDS
        finally:
            self._task = None

    async def _drain(self) -> int:
        """Batches until nothing is pending or the embedder fails; the vectors added."""
        added = 0
        async with self._lock:
            while self.search.pending_vectors:
                if self._make_apart is not None:
                    stored, kept = await asyncio.to_thread(self._make_apart, self.batch)
                    added += stored
                    if kept and not stored:  # only records a write holds, or not committed
                        self._retry_kept()
                        break
                    self._kept_delay = KEPT_RETRY_SECONDS
                    continue
                stored, failed = await self._batch()
                added += stored
                if failed:  # the embedder's server is down, say: again later
                    self._retry_at = time.monotonic() + RETRY_SECONDS
                    break
                await asyncio.sleep(0)  # requests between batches
        return added

    def _retry_kept(self) -> None:
        if self._stopping:
            return
        asyncio.get_running_loop().call_later(self._kept_delay, self.wake)
        self._kept_delay = min(self._kept_delay * 2, RETRY_SECONDS)

    async def _batch(self) -> tuple[int, bool]:
        """(vectors stored, whether the embedder failed) for the next pending records."""
        search = self.search
        texts = search.pending_texts(self.batch)
        if getattr(search.embedder, "runs_inline", False):
            embedded = search.embed_texts(texts)
        else:
            embedded = await asyncio.to_thread(search.embed_texts, texts)
        return search.store_vectors(embedded), len(embedded) < len(texts)
