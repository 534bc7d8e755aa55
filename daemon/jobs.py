"""Background jobs of the daemon, on APScheduler's asyncio scheduler.

* ``wal_checkpoint``: a WAL checkpoint on its own connection in a worker thread, so no
  request pays for copying the WAL (automatic checkpoints are off on the request connection).
* ``refresh_startup_items``: fallback caches and summary files of installed startup items;
  also run shortly after a project's memory changes (debounced: a burst costs one refresh).
* ``expire_sync_intents``: blocked writes past their expiry become ``expired``.
* ``poll_updates``: register the updates this release ships.
* ``backfill_vectors``: vectors still missing, those of records written while the embedder
  failed included (every minute; daemon/vector_worker.py makes the others after each write).
* ``rebuild_search_index``: the search index's rebuild after a tokenizer or embedder change
  (state/rebuild.py), at once at start and batch by batch until done; idle, it only looks.
* ``merge_search_index``: once writes pause, the full-text index's segments are merged step
  by step (state/index_builds.py merge_step), so that searches read fewer of them.
* ``sync_upstream``: with an upstream connected, its update check (applying and acking what
  the daemon can), resuming interrupted writes, pushing the outbox and pulling changes.

Every job runs through :class:`JobBoard`, which records its last run, result and next run
(shown by ``memorycloud daemon status``), logs a failure and leaves the next run and the
other jobs untouched. Intervals come from the ``[jobs]`` table of the config file.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from daemon import keys
from daemon.runtime.services import Services
from daemon.vector_worker import VectorWorker
from state.config import Settings
from state.db import CheckpointConnection, connect
from state.group_commit import flush_now
from state.ids import now_iso
from state.index_builds import merge_step
from state.rebuild import step as rebuild_step
from state.store import Store

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.5
# WAL frames (4 KiB pages) from which the checkpoint job restarts the WAL (16 MiB); the
# thread passes it makes first, and the frames it leaves to copy on the event loop.
CATCH_UP_FRAMES = 4096
CATCH_UP_PASSES = 3
CATCH_UP_REST = 512
BACKFILL_SECONDS = 60.0
# When the rebuild job looks again: after a failed batch (an embedding server that is down),
# and, idle, for nothing (a rebuild is only ever planned when a store opens).
REBUILD_RETRY_SECONDS = 30.0
# The search index's segments are merged once no record has gone into or out of it for this
# long: an ingest or a burst of writes is not slowed by merges it would undo at once.
MERGE_QUIET_SECONDS = 2.0
JobFunc = Callable[[], Any | Awaitable[Any]]


@dataclass
class JobState:
    name: str
    interval_seconds: float
    runs: int = 0
    failures: int = 0
    last_run_at: str | None = None
    last_result: str | None = None
    last_duration_ms: float | None = None


class JobBoard:
    """Runs jobs so that a failure is logged and recorded, never raised into the scheduler."""

    def __init__(self, scheduler: AsyncIOScheduler, store: Store | None = None) -> None:
        self.scheduler = scheduler
        self.states: dict[str, JobState] = {}
        self.store = store  # whose run_once decides the jobs that run once per team server
        self.cluster_once: set[str] = set()

    def add(
        self, name: str, func: JobFunc, seconds: float, *, now: bool = False, cluster_once: bool = False
    ) -> None:
        """Run ``func`` every ``seconds`` (the first time at once with ``now``). With
        ``cluster_once``, a run is skipped while another process on the same database runs
        the same job (several team-server processes on one PostgreSQL)."""
        self.states[name] = JobState(name, seconds)
        if cluster_once:
            self.cluster_once.add(name)
        first = {"next_run_time": datetime.now(UTC)} if now else {}
        self.scheduler.add_job(
            self.run,
            "interval",
            seconds=seconds,
            args=[name, func],
            id=name,
            max_instances=1,
            coalesce=True,
            **first,
        )

    async def run(self, name: str, func: JobFunc) -> None:
        state = self.states[name]
        started = time.perf_counter()
        once = (
            self.store.run_once(name)
            if self.store is not None and name in self.cluster_once
            else nullcontext(True)
        )
        try:
            with once as mine:
                if not mine:
                    state.last_result = "skipped: another process on this database runs it now"
                    return
                outcome = func()
                if inspect.isawaitable(outcome):
                    outcome = await outcome
            state.last_result = f"ok: {outcome}" if outcome is not None else "ok"
        except Exception as exc:  # logged and retried at the next interval
            state.failures += 1
            state.last_result = f"error: {type(exc).__name__}: {exc}"
            log.exception("job %s failed; it runs again at its next interval", name)
        finally:
            state.runs += 1
            state.last_run_at = now_iso()
            state.last_duration_ms = round((time.perf_counter() - started) * 1000, 2)

    def describe(self) -> list[dict[str, Any]]:
        out = []
        for name, state in self.states.items():
            job = self.scheduler.get_job(name)
            # APScheduler sets next_run_time only once the scheduler has started.
            when = getattr(job, "next_run_time", None) if job else None
            next_run = when.isoformat() if when else None
            out.append({**state.__dict__, "next_run_at": next_run})
        return out


class CacheRefresher:
    """Coalesces "memory changed" notices into one refresh per affected binding."""

    def __init__(self, services: Services, delay: float = DEBOUNCE_SECONDS) -> None:
        self.services = services
        self.delay = delay
        self.pending: set[tuple[str, str | None]] = set()
        self.handle: asyncio.TimerHandle | None = None

    def on_change(self, workspace_id: str, project_key: str | None) -> None:
        self.pending.add((workspace_id, project_key))
        if self.handle is None:
            self.handle = asyncio.get_running_loop().call_later(self.delay, self.flush)

    def flush(self) -> None:
        self.handle = None
        changes, self.pending = self.pending, set()
        bindings = {b for ws, pk in changes for b in self.services.startup.bindings_for(ws, pk)}
        for binding_id in sorted(bindings):
            try:
                self.services.startup.refresh(binding_id)
            except Exception:
                log.exception("refreshing the startup items of %s failed", binding_id)

    def cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None


class SteppedJob:
    """A job that works in short steps on the event loop with pauses between them, and that
    shutdown can stop between two steps (:meth:`stop` waits for the step in progress)."""

    def __init__(self) -> None:
        self.stopping = asyncio.Event()
        self.idle = asyncio.Event()
        self.idle.set()

    async def pause(self, seconds: float) -> None:
        """Wait ``seconds`` (at least a millisecond), or less when the daemon stops."""
        try:
            await asyncio.wait_for(self.stopping.wait(), timeout=max(seconds, 0.001))
        except TimeoutError:
            pass

    async def stop(self) -> None:
        """Let the step in progress end, and run no more (shutdown)."""
        self.stopping.set()
        await self.idle.wait()


class IndexRebuild(SteppedJob):
    """Runs the search index's rebuild (state/rebuild.py) on the event loop: one batch (a
    short transaction, ``rebuild_batch_ms`` at most), then a pause at least as long, so that
    requests get at least half of the loop, until nothing is left. A batch never spans an
    await, so it is a unit of the request connection's group commit, like a request's write;
    its group is committed at once, so that the COMMIT (writing the batch's pages to the WAL,
    a good part of its cost) is counted in the batch's duration and paused after too.

    On PostgreSQL the rows made by another tokenizer are made anew (state/pg/reindex.py), each
    batch in a worker thread on a connection of the job's own: its round trips never hold the
    event loop, and its transaction is never the requests' group."""

    def __init__(self, store: Store, settings: Settings) -> None:
        super().__init__()
        self.store = store
        self.settings = settings
        self.durations_ms: list[float] = []  # of the last run's batches (daemon status, bench)
        self._apart: Any = None  # PostgreSQL: the job's own search index and connection

    async def _batch(self) -> str | None:
        """One batch: what it worked on, None when nothing is left."""
        if self.store.engine == "sqlite":
            kind = rebuild_step(
                self.store,
                max_records=self.settings.rebuild_batch_records,
                budget_seconds=self.settings.rebuild_batch_ms / 1000,
            )
            if kind is not None:
                flush_now(self.store.conn)
            return kind
        if not getattr(self.store.search, "reindexing", False):
            return None  # planned when the index opened: nothing was, nothing is
        return await asyncio.to_thread(self._pg_batch)

    def _pg_batch(self) -> str | None:
        from state.pg import reindex

        store: Any = self.store  # a PgStore (state/pg/store.py)
        if self._apart is None:
            self._apart = store.index_type(store.connect_apart(), store.embedder)
        try:
            kind = reindex.step(
                self._apart,
                max_records=self.settings.rebuild_batch_records,
                budget_seconds=self.settings.rebuild_batch_ms / 1000,
            )
        except Exception:
            self.close()  # its connection may be gone (a failover): the next run connects anew
            raise
        if kind is None:  # nothing now; a vector refill may still wait for the vector writer
            store.search.reindexing = reindex.under_way(self._apart.conn)
            if not store.search.reindexing:
                self.close()
        return kind

    def close(self) -> None:
        """Close the job's own connection (PostgreSQL), if it has one."""
        if self._apart is not None:
            self._apart.conn.close()
            self._apart = None

    async def run(self) -> str:
        """Batches until the rebuild is done (or the daemon stops); what was done."""
        self.idle.clear()
        self.durations_ms = []
        kinds: dict[str, int] = {}
        try:
            while not self.stopping.is_set():
                started = time.perf_counter()
                kind = await self._batch()
                if kind is None:
                    break
                took = time.perf_counter() - started
                self.durations_ms.append(round(took * 1000, 2))
                kinds[kind] = kinds.get(kind, 0) + 1
                await self.pause(self.settings.rebuild_pause_ms / 1000 or took)
        finally:
            self.idle.set()
        return self.describe(kinds)

    def describe(self, kinds: dict[str, int]) -> str:
        if not self.durations_ms:
            return "nothing to rebuild"
        done = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
        ordered = sorted(self.durations_ms)
        return (
            f"{len(ordered)} batches ({done}), median {statistics.median(ordered):.1f} ms,"
            f" p95 {ordered[int(0.95 * (len(ordered) - 1))]:.1f} ms, longest"
            f" {ordered[-1]:.1f} ms" + (" (stopped)" if self.stopping.is_set() else "")
        )


class IndexMerge(SteppedJob):
    """Merges the search index's segments once writes to it pause (state/index_builds.py
    merge_step): a step at a time on the event loop (each a short transaction of the request
    connection, committed at once), with a pause as long as the step after each, until
    nothing is left to merge. Steps stop early when the daemon stops; writes arriving meanwhile
    simply interleave (the next run merges what they add)."""

    def __init__(self, store: Store, quiet_seconds: float = MERGE_QUIET_SECONDS) -> None:
        super().__init__()
        self.store = store
        self.quiet_seconds = quiet_seconds
        # time.monotonic() of the last merge that left nothing to merge; none yet, so the first
        # run looks at a store's segments as they were left (by an older release, say).
        self.merged_at = float("-inf")

    async def run(self) -> str:
        changed_at = self.store.search.changed_at
        if changed_at <= self.merged_at:
            return "nothing new to merge"
        if time.monotonic() - changed_at < self.quiet_seconds:
            return "writes still arriving: merging later"
        self.idle.clear()
        steps, took = 0, 0.0
        try:
            while not self.stopping.is_set():
                started = time.perf_counter()
                with self.store.transaction():
                    merged = merge_step(self.store.conn)
                flush_now(self.store.conn)
                step = time.perf_counter() - started
                took += step
                if not merged:
                    self.merged_at = time.monotonic()
                    break
                steps += 1
                await self.pause(step)
        finally:
            self.idle.set()
        if not steps:
            return "nothing to merge"
        return f"{steps} merge steps, {took * 1000:.0f} ms in all" + (
            " (stopped)" if self.stopping.is_set() else ""
        )


def schedule_jobs(
    board: JobBoard,
    services: Services,
    checkpoint_conn: CheckpointConnection | None,
    vectors: VectorWorker,
    rebuild: IndexRebuild | None = None,
    merge: IndexMerge | None = None,
) -> None:
    settings = services.store.settings

    async def wal_checkpoint(wal: CheckpointConnection) -> str:
        busy, pages, done = await asyncio.to_thread(wal.checkpoint)
        if busy or pages < CATCH_UP_FRAMES:
            return f"{done}/{pages} pages" + (" (busy)" if busy else "")
        # The WAL restarts only at a write that finds every frame copied, and under steady
        # writes new frames always arrive while the thread copies: it grew without bound
        # (10 GB while ingesting 100k memories, bench/RESULTS.md), and every page read got
        # slower. So when it is large: more passes in the thread, each copying what was
        # written during the one before, then the last few frames here, on the event loop,
        # where no write can interleave. The next write then starts the WAL again, cut to
        # journal_size_limit. This connection does not wait for locks: if another process
        # holds one, the restart waits for the next run rather than stalling requests.
        for _ in range(CATCH_UP_PASSES):
            copied = pages
            busy, pages, done = await asyncio.to_thread(wal.checkpoint)
            if busy or pages - copied <= CATCH_UP_REST:
                break
        if busy:
            return f"{done}/{pages} pages (busy)"
        started = time.perf_counter()
        # The request connection's group of writes, if one is open, holds the write lock
        # until the end of this loop turn: commit it first, or the restart always finds the
        # WAL busy under steady writes.
        flush_now(services.store.conn)
        busy, pages, done = wal.restart_wal()
        return (
            f"{done}/{pages} pages, WAL restarted"
            f" ({(time.perf_counter() - started) * 1000:.0f} ms on the event loop)"
            + (" (busy)" if busy else "")
        )

    if checkpoint_conn is not None:  # SQLite's WAL (PostgreSQL checkpoints by itself)
        board.add(
            "wal_checkpoint", functools.partial(wal_checkpoint, checkpoint_conn), settings.checkpoint_seconds
        )
    board.add(
        "refresh_startup_items",
        lambda: f"{services.startup.refresh()} installations",
        settings.refresh_startup_items_minutes * 60,
    )
    board.add(
        "expire_sync_intents",
        lambda: f"{services.gate.expire()} expired",
        settings.expire_sync_intents_minutes * 60,
        cluster_once=True,
    )
    # Vectors an embedder failed to make (its model server down): the writes were kept.
    board.add("backfill_vectors", vectors.catch_up, BACKFILL_SECONDS)
    board.add(
        "poll_updates",
        lambda: f"{services.updates.load_shipped()} new shipped updates",
        settings.poll_updates_minutes * 60,
        cluster_once=True,
    )
    # With an upstream: check its updates (at poll_updates_minutes, or at once after a
    # notice), resume interrupted writes after the acks, push the outbox and pull changes.
    board.add("sync_upstream", services.upstream.sync, settings.sync_upstream_seconds, cluster_once=True)
    if rebuild is not None:
        # One process of a team server at a time (another's batches would only wait for it).
        board.add("rebuild_search_index", rebuild.run, REBUILD_RETRY_SECONDS, now=True, cluster_once=True)
    if merge is not None:
        board.add("merge_search_index", merge.run, settings.index_merge_seconds)


async def jobs_context(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: start the scheduler after the store is open; stop it first on shutdown."""
    store = app[keys.STORE]
    services = app[keys.SERVICES]
    store.disable_autocheckpoint()
    services.updates.load_shipped()
    sqlite = store.engine == "sqlite"
    # Never waits for a lock (the truncating checkpoint runs on the event loop).
    checkpoint_conn = (
        CheckpointConnection(await asyncio.to_thread(connect, app[keys.PATHS].database)) if sqlite else None
    )
    refresher = CacheRefresher(services)
    services.changes.subscribe(refresher.on_change)
    scheduler = AsyncIOScheduler()
    board = JobBoard(scheduler, store)
    # The search index's rebuild after a tokenizer change (both engines), and the FTS5 index's
    # merge (PostgreSQL's index is kept whole by each write and by the server's maintenance).
    rebuild = IndexRebuild(store, services.store.settings)
    merge = IndexMerge(store) if sqlite else None
    vectors = VectorWorker(store.search, conn=store.conn)
    vectors.start()
    schedule_jobs(board, services, checkpoint_conn, vectors, rebuild, merge)
    scheduler.start()
    services.upstream.follower.start()  # pulls as soon as the upstream has changes
    app[keys.SCHEDULER] = scheduler
    app[keys.JOBS] = board
    if rebuild is not None:
        app[keys.REBUILD] = rebuild
    try:
        yield
    finally:
        refresher.cancel()
        await rebuild.stop()  # before the store closes: a batch in progress ends first
        rebuild.close()
        if merge is not None:
            await merge.stop()  # likewise a merge step
        await vectors.stop()  # the vectors still pending are made
        scheduler.shutdown(wait=False)
        await services.upstream.close()
        await services.distill.drain()  # a job in progress finishes its batches
        if checkpoint_conn is not None:
            await asyncio.to_thread(checkpoint_conn.close)  # after a checkpoint still running
