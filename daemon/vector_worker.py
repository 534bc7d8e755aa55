"""Vectors off the write path: the daemon's writes store a record and its words, and this
worker makes the record's vector after the request, in batches.

A vector is derived data. Made inside the write it was 43 % of a memory delta's CPU time
(in process at 10k: 0.91 ms a delta with it, 0.52 without), and in batches a vector costs
0.16 ms instead of 0.39 (its pages of sqlite-vec's chunks go to the WAL once per batch, not
once per write): bench/RESULTS.md, "vectors off the write path". A model or an embedding
server (seconds when it is down) never blocks the event loop: their embeddings run in a
worker thread, and only the SQL runs on the loop. The cheap hashing embedder runs on the
loop, batch by batch, and a search that needs the vectors first makes the few still pending
(state/search.py ``_catch_up_vectors``), so it sees every write it follows.

Nothing is lost at a crash: a record without its vector is found again when the store opens
(``SearchIndex.find_missing_vectors``) and until then ranks by its words. A failing embedder
is retried after RETRY_SECONDS, and by the ``backfill_vectors`` job (daemon/jobs.py).
"""

from __future__ import annotations

import asyncio
import logging
import time

from state.search import SearchIndex

log = logging.getLogger(__name__)

# Records a batch embeds: ~10 ms of the event loop with the hashing embedder, so requests
# queued behind a batch wait little; batches of 50 already cost 0.16 ms a vector against
# 0.14 for 500 (in process, 10k store).
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
        """Writes from now on leave their vectors to this worker."""
        self.search.defer_vectors = True
        self.search.on_pending = self.wake
        self.wake()  # a failing embedder's leftovers, found when the store opened

    def wake(self) -> None:
        """A write left a vector pending: make it soon (after the request's loop turn)."""
        if self._task is None and not self._stopping and self.search.pending_vectors \
                and time.monotonic() >= self._retry_at:
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
            log.warning("%d records have no vector yet: they are found by their words, and"
                        " their vectors are made at the next start", len(self.search.pending_vectors))
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
