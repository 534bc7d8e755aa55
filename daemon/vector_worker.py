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

Nothing is lost at a crash: a record without its vector is found again when the store opens
(``SearchIndex.find_missing_vectors``). A failing embedder is retried after RETRY_SECONDS, and
by the ``backfill_vectors`` job (daemon/jobs.py).
"""

from __future__ import annotations

import asyncio
import logging
import time

from state.search import SearchIndex

log = logging.getLogger(__name__)

# Records a batch embeds: one call of the worker thread, and one transaction on the loop
# that stores their vectors.
BATCH = 64
RETRY_SECONDS = 30.0


class VectorWorker:
    """Makes the vectors that the daemon's writes leave pending."""

    def __init__(self, search: SearchIndex, batch: int = BATCH) -> None:
        self.search = search
        self.batch = batch
        self._task: asyncio.Task[None] | None = None
        self._retry_at = 0.0  # after a failure, wait for this (time.monotonic) or the job
        self._stopping = False
        self._lock = asyncio.Lock()  # one drain at a time: no record is embedded twice

    def start(self) -> None:
        """Writes from now on leave their vectors to this worker, if the embedder blocks."""
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
        added = await self._drain()
        if self.search.pending_vectors:
            log.warning(
                "%d records have no vector yet: they are found by their words, and"
                " their vectors are made at the next start",
                len(self.search.pending_vectors),
            )
        elif added:
            log.info("made the last %d pending vectors", added)

    async def _run(self) -> None:
        try:
            await asyncio.sleep(0)  # the writes of the waking loop turn come first
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
                stored, failed = await self._batch()
                added += stored
                if failed:  # the embedder's server is down, say: again later
                    self._retry_at = time.monotonic() + RETRY_SECONDS
                    break
                await asyncio.sleep(0)  # requests between batches
        return added

    async def _batch(self) -> tuple[int, bool]:
        """(vectors stored, whether the embedder failed) for the next pending records."""
        search = self.search
        texts = search.pending_texts(self.batch)
        if getattr(search.embedder, "runs_inline", False):
            embedded = search.embed_texts(texts)
        else:
            embedded = await asyncio.to_thread(search.embed_texts, texts)
        return search.store_vectors(embedded), len(embedded) < len(texts)
