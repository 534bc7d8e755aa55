"""Work beside the event loop, on psycopg's connection pool (issue #18).

The repositories' statements are synchronous: on the request connection each one's round
trip holds the daemon's event loop, and every other request waits. Over a Unix socket that is
~0.1 ms; to a managed database a network away it is a millisecond or more per statement, and
a search runs 5-8 of them, a memory delta ~15. With the database 1.35 ms away, one process
kept 0.19x of its direct rates (bench/RESULTS.md, "a network round trip away").

So the busiest requests run in worker threads on connections of psycopg_pool's: the round
trips wait there, the GIL released, while the loop serves other requests.

* :class:`ReadPool`: reads (a search, a memory query, a feed page), several at once. They see
  only committed rows (never a group commit's open transaction, state/group_commit.py) and
  may not write. One that finds its connection dropped (a failover) runs again on another.
* :class:`WriteBatches`: a request's whole handler (daemon/endpoints.py,
  ``Endpoint.runs_apart``: memory deltas, pushes from local daemons), on one connection in
  one thread, a batch at a time: the writes queued while the last batch ran share one
  transaction (the team server's write lock taken once, one COMMIT), each in a SAVEPOINT of
  its own, so one that fails is rolled back alone. A request is answered once its batch has
  committed; if the COMMIT fails, every write of the batch answers that error. This is the
  event loop's group commit, moved to the writer's thread: without it each write paid its own
  COMMIT, and one process on a local database made 13 % fewer writes a second than with the
  loop's group commit (bench/RESULTS.md).

What such work must do on the event loop (wake the vector worker, wake waiting pulls) is kept
and run there when it is done (state/group_commit.py, ``later_on_loop``).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from state.errors import StoreUnavailable
from state.group_commit import working_apart
from state.pg.connection import WRITE_LOCK, PgConnection, error_map
from state.pg.engine import connect_options, unreachable

T = TypeVar("T")
log = logging.getLogger(__name__)

# How long work waits for a connection (the pool opens one if it has fewer than its size):
# past this, the server cannot be reached and the request answers 503.
CONNECT_SECONDS = 10.0
# The pools' connections are named so in pg_stat_activity.
READS_NAME = "memorycloud-reads"
WRITES_NAME = "memorycloud-writes"
# The most writes one batch holds: a batch holds the team server's write lock while its
# writes run one after another, and the other processes wait for it meanwhile.
MAX_BATCH = 32


def _pool(url: str, password: str | None, size: int, name: str) -> Any:
    from psycopg_pool import ConnectionPool

    return ConnectionPool(
        url,
        kwargs={**connect_options(password), "application_name": name},  # for pg_stat_activity
        min_size=1,
        max_size=size,
        open=False,
        name=name,
    )


def _run_all(callbacks: list[Callable[[], None]]) -> None:
    """Nudges (wake a worker, a pull): each runs whatever the work's outcome."""
    for callback in callbacks:
        try:
            callback()
        except Exception:
            log.exception("a callback after work apart from the event loop failed")


class ReadPool:
    """``size`` connections to ``url`` and as many worker threads, for reads apart: a read
    never waits for a connection it could not get."""

    def __init__(self, url: str, password: str | None, size: int) -> None:
        self._url = url
        self._pool = _pool(url, password, size, READS_NAME)
        self._threads = ThreadPoolExecutor(max_workers=size, thread_name_prefix=READS_NAME)

    def open(self) -> None:
        """Open the pool (its first connection is made in the background)."""
        self._pool.open()

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` in a worker thread, its statements on a pooled connection."""
        context = contextvars.copy_context()  # a request's prepared query vectors go with it
        return await asyncio.get_running_loop().run_in_executor(self._threads, context.run, self._read, work)

    def _read(self, work: Callable[[], T]) -> T:
        from psycopg_pool import PoolTimeout

        for attempt in (1, 2):
            try:
                with self._pool.connection(timeout=CONNECT_SECONDS) as raw, working_apart(raw, writes=False):
                    try:
                        return work()
                    except StoreUnavailable:
                        if not raw.closed or attempt == 2:
                            raise
                        log.warning("a read found its PostgreSQL connection lost: reading again")
                        # A failover drops every connection: the idle ones are tried now (a
                        # round trip each) and the dead replaced.
                        self._pool.check()
            except PoolTimeout as exc:
                raise unreachable(self._url, exc) from exc
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._threads.shutdown(wait=True)
        self._pool.close()


@dataclass
class _Write:
    """One queued write: the work, the context it runs in, and where its outcome goes."""

    work: Callable[[], Any]
    context: contextvars.Context
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Any]
    on_loop: list[Callable[[], None]] = field(default_factory=list)
    result: Any = None
    error: BaseException | None = None


class WriteBatches:
    """Writes apart, in batches on one connection in one thread (see the module's docstring)."""

    def __init__(self, url: str, password: str | None) -> None:
        self._url = url
        self._pool = _pool(url, password, 1, WRITES_NAME)
        self._queue: queue.SimpleQueue[_Write | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=WRITES_NAME, daemon=True)
        self.batches = 0  # batches committed (tests and benchmarks read these two)
        self.writes = 0

    def open(self) -> None:
        self._pool.open()
        self._thread.start()

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` in the writer's thread, in the next batch; its answer once that batch
        committed. A request cancelled meanwhile does not take its write back."""
        loop = asyncio.get_running_loop()
        write = _Write(work, contextvars.copy_context(), loop, loop.create_future())
        self._queue.put(write)
        return await asyncio.shield(write.future)

    def _serve(self) -> None:
        while (first := self._queue.get()) is not None:
            batch = [first]
            stop = False
            while len(batch) < MAX_BATCH:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            try:
                self._write(batch)
            except BaseException:  # never leave the queue without its writer
                log.exception("the writer's thread failed on a batch")
                self._fail(batch, StoreUnavailable("the write failed in the daemon; nothing was stored"))
                self._answer(batch)
            if stop:
                return

    def _write(self, batch: list[_Write]) -> None:
        from psycopg_pool import PoolTimeout

        errors = error_map()
        try:
            for attempt in (1, 2):
                with self._pool.connection(timeout=CONNECT_SECONDS) as raw:
                    try:
                        raw.execute("begin")
                        raw.execute("select pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                    except errors.psycopg_error as exc:
                        if not raw.closed or attempt == 2:
                            raise errors.sqlite_error(exc, lost=raw.closed) from exc
                        # Dropped while idle (a failover): nothing begun; once more on a new
                        # connection, the pool's idle dead ones replaced first.
                        log.warning("the writer's PostgreSQL connection was lost: connecting again")
                    else:
                        self._run_batch(raw, batch)
                        break
                self._pool.check()
        except PoolTimeout as exc:
            self._fail(batch, unreachable(self._url, exc))
        except Exception as exc:  # the batch's transaction: nothing of it was stored
            self._fail(batch, exc)
        self._answer(batch)

    def _run_batch(self, raw: Any, batch: list[_Write]) -> None:
        """Each write of the batch, then the COMMIT. A write whose failed statement was not
        inside a ``store.transaction()`` of its own (a read with a NUL character, say) aborts
        the whole transaction, and PostgreSQL would then answer COMMIT with a ROLLBACK: so
        after each write the transaction's state is looked at (no round trip); if it is
        aborted, what the batch wrote so far is rolled back, its earlier writes answer 503
        (not stored: their clients retry them), and the rest go on in a new transaction."""
        from psycopg.pq import TransactionStatus

        done: list[_Write] = []
        for write in batch:
            write.context.run(self._one, raw, write)
            if raw.info.transaction_status != TransactionStatus.INERROR:
                done.append(write)
                continue
            log.warning("a write aborted its batch's transaction: its batch is written again without it")
            raw.execute("rollback")
            if write.error is None:
                write.error = StoreUnavailable("the write failed in the database; nothing was stored")
            for earlier in done:
                earlier.error = StoreUnavailable(
                    "another write of the same batch failed, so this one was not stored: send it again"
                )
            done = []
            raw.execute("begin")
            raw.execute("select pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        PgConnection(raw).execute("commit")  # an aborted transaction's ROLLBACK raises
        self.batches += 1
        self.writes += len(done)

    def _answer(self, batch: list[_Write]) -> None:
        """Each write's outcome to its request, on its event loop."""
        for write in batch:
            try:
                write.loop.call_soon_threadsafe(self._settle, write)
            except RuntimeError:  # its loop is closed: the daemon stopped, nobody waits
                pass

    @staticmethod
    def _one(raw: Any, write: _Write) -> None:
        """One write of the batch (in the request's context): its ``store.transaction()`` is a
        SAVEPOINT in the batch's transaction (state/db.py), so a failed one is undone alone."""
        with working_apart(raw, writes=True) as state:
            try:
                write.result = write.work()
            except Exception as exc:
                write.error = exc
            finally:
                write.on_loop = state.on_loop

    @staticmethod
    def _fail(batch: list[_Write], exc: Exception) -> None:
        for write in batch:
            write.error = exc if write.error is None else write.error

    @staticmethod
    def _settle(write: _Write) -> None:
        _run_all(write.on_loop)
        if write.future.done():  # cancelled: nobody waits
            return
        if write.error is not None:
            write.future.set_exception(write.error)
        else:
            write.future.set_result(write.result)

    def close(self) -> None:
        """Write what is queued, then stop."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._pool.close()
