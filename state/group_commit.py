"""Group commit: the daemon's writes of one event-loop turn share one transaction.

A delta appends ~30 pages (150 KB) to the WAL at its COMMIT, and the COMMIT was the largest
single cost of a write under concurrent clients (bench/RESULTS.md, "where the time goes").
In group mode (:func:`enable_group_commit`, the daemon's request connection only) the writes
of one event-loop turn share one transaction and one COMMIT, so the pages they all touch
(indexes, the FTS segment list, the change log's tail) go to the WAL once.

The rules that keep every promise of the single-transaction path:

* each unit (the outermost ``state.db.transaction()``) is its own SAVEPOINT, except the one
  that opens the group, which a ROLLBACK undoes alone: a unit that fails rolls back only its
  own work, never its neighbours';
* no unit spans an ``await`` (handlers write synchronously), so units never interleave;
* a write is acknowledged only once its group's COMMIT succeeded: a request awaits the
  commits of the groups it wrote into (:func:`collect_commits`, :func:`wait_commits`, used by
  daemon/middleware.py); if the COMMIT fails, or SQLite rolls the whole transaction back
  (full disk, I/O error), every request of the group gets that error and nothing of the
  group is stored;
* work that needs a committed state commits the group first (:func:`flush_now`, the WAL
  restart in daemon/jobs.py) or runs after its COMMIT (:func:`after_commit`, the WAL
  truncation after a redaction);
* statements deferred to the COMMIT (:func:`defer`: a new record's full-text row) run just
  before it, in the order they were made, and a unit that rolls back takes its own with it.
  Why: FTS5 writes its pending rows out as a new segment at every SAVEPOINT, so each unit's
  SAVEPOINT turned the rows of the units before it into a segment of their own (plus the
  merges of all those small segments); deferred, a group's rows make one segment. A memory
  delta under 8 writers: 3.29 -> 2.78 M instructions (bench/RESULTS.md, "full-text rows at
  the COMMIT"). Whatever else touches the full-text table first runs what is deferred
  (:func:`run_deferred`), so it sees what the group wrote, as before.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from state.errors import StoreUnavailable

Connection = Any  # sqlite3.Connection or sqlean.Connection (state.db)
log = logging.getLogger(__name__)

# Savepoint names come from a short cycle, not a counter: a name's SAVEPOINT and RELEASE are
# then statements the connection has prepared before (its cache holds 128) instead of new ones
# to parse for every write. Reuse is safe: ROLLBACK TO and RELEASE act on the most recent
# savepoint of that name (SQLite and PostgreSQL alike), which is this one unless another of
# the same name was opened inside it and is still open: SAVEPOINT_NAMES nested levels deep.
SAVEPOINT_NAMES = 16
_SAVEPOINTS = itertools.cycle(range(SAVEPOINT_NAMES))


@contextmanager
def savepoint(conn: Connection) -> Iterator[None]:
    """A SAVEPOINT: an error rolls back only what was done inside it."""
    name = f"sp_{next(_SAVEPOINTS)}"
    group = group_of(conn)
    mark = group.mark() if group is not None else None
    conn.execute(f"savepoint {name}")
    try:
        yield
    except BaseException:
        if conn.in_transaction:  # else SQLite rolled the whole transaction back (full disk)
            conn.execute(f"rollback to {name}")
            conn.execute(f"release {name}")
            if group is not None and mark is not None:
                group.restore(mark)
        raise
    conn.execute(f"release {name}")


@dataclass
class _Deferred:
    """A statement deferred to the COMMIT; ``key`` and ``value`` answer :func:`deferred_value`."""

    order: int
    sql: str
    params: tuple[Any, ...]
    key: Hashable | None
    value: Any


# The group commits the current request's writes joined: (the request's task, futures).
_PENDING: ContextVar[tuple[asyncio.Task[Any] | None, list[asyncio.Future[None]]] | None] = ContextVar(
    "pending_commits", default=None
)


def _note(committed: asyncio.Future[None]) -> None:
    """Add a group to those the current request waits for. Only the request's own task:
    a task it starts (a distill job) inherits the context but is not part of the answer."""
    pending = _PENDING.get()
    if pending is not None and pending[0] is _current_task() and committed not in pending[1]:
        pending[1].append(committed)


class GroupCommit:
    """The shared transaction of a connection in group mode, committed once per loop turn."""

    def __init__(self, conn: Connection, loop: asyncio.AbstractEventLoop) -> None:
        self.conn = conn
        self.loop = loop
        self.depth = 0  # units open now (0 or 1: nested ones are plain savepoints)
        self.owner: asyncio.Task[Any] | None = None
        self.committed: asyncio.Future[None] | None = None  # the open group's outcome
        self.after_commit: list[Callable[[], None]] = []
        self.groups = 0  # COMMITs made (tests and benchmarks read these two)
        self.units = 0
        self.deferred: list[_Deferred] = []  # statements for the COMMIT, in order
        self.ran: list[_Deferred] = []  # deferred statements run early (run_deferred)
        self.values: dict[Hashable, Any] = {}  # key -> value of the latest deferred statement
        self._order = itertools.count()

    # -- deferred statements ------------------------------------------------------------------

    def defer(self, sql: str, params: tuple[Any, ...], key: Hashable | None, value: Any) -> None:
        self.deferred.append(_Deferred(next(self._order), sql, params, key, value))
        if key is not None:
            self.values[key] = value

    def run_deferred(self) -> None:
        """Run the deferred statements now (inside the open unit, if one is open: a rollback
        of that unit queues again those that were made before it, see :meth:`restore`)."""
        while self.deferred:
            item = self.deferred.pop(0)
            self.conn.execute(item.sql, item.params)
            self.ran.append(item)
            if item.key is not None and self.values.get(item.key) is item.value:
                del self.values[item.key]

    def mark(self) -> tuple[int, int]:
        """Where a unit or savepoint starts: (the next statement's order, statements run)."""
        return next(self._order), len(self.ran)

    def restore(self, mark: tuple[int, int]) -> None:
        """After a rollback to the savepoint opened at ``mark``: statements deferred since
        are gone with it, and those made before it but run since are deferred again (the
        rollback undid them)."""
        order, ran = mark
        again = [item for item in self.ran[ran:] if item.order < order]
        del self.ran[ran:]
        self.deferred = sorted(
            again + [item for item in self.deferred if item.order < order], key=lambda item: item.order
        )
        self.values = {item.key: item.value for item in self.deferred if item.key is not None}

    def _drop_deferred(self) -> None:
        self.deferred.clear()
        self.ran.clear()
        self.values.clear()

    @contextmanager
    def unit(self) -> Iterator[None]:
        """One caller's write: a SAVEPOINT in the shared transaction (opened if need be)."""
        if self.depth:
            self._check_owner()
            with savepoint(self.conn):
                yield
            return
        committed, first = self._join()
        _written()  # a later write of this request waits for the lock (see _FIRST_WRITE_APART)
        # The first unit of a group needs no SAVEPOINT: if it fails, rolling the whole
        # transaction back undoes nothing else. That keeps a lone writer's cost what it was
        # (a SAVEPOINT journals the original of every page it changes: ~0.2 ms a delta).
        name = None if first else "unit"  # units never nest: one name for all
        mark = self.mark()
        if name is not None:
            self.conn.execute(f"savepoint {name}")
        self.depth, self.owner = 1, _current_task()
        try:
            yield
        except BaseException as exc:
            if name is None:
                self._abort(committed, exc)
            else:
                self._undo(name, mark, committed, exc)
            raise
        else:
            if name is not None:
                try:
                    self.conn.execute(f"release {name}")
                except BaseException as exc:
                    self._abort(committed, exc)
                    raise
        finally:
            self.depth, self.owner = 0, None
        self.units += 1
        _note(committed)

    def _undo(
        self, name: str, mark: tuple[int, int], committed: asyncio.Future[None], exc: BaseException
    ) -> None:
        """Roll back one failed unit; if that is impossible, the whole group fails with it."""
        if not self.conn.in_transaction:  # SQLite rolled back every unit (full disk, I/O error)
            self._fail(committed, exc)
            return
        try:
            self.conn.execute(f"rollback to {name}")
            self.conn.execute(f"release {name}")
        except BaseException:
            self._abort(committed, exc)
            return
        self.restore(mark)

    def _abort(self, committed: asyncio.Future[None], exc: BaseException) -> None:
        """Roll back the whole group: none of its requests is acknowledged."""
        if self.conn.in_transaction:
            try:
                self.conn.execute("rollback")
            except Exception:
                log.exception("rolling back a failed group of writes failed")
        self._fail(committed, exc)

    def _check_owner(self) -> None:
        # A unit of another task would nest inside this one and be rolled back with it: only
        # possible if a unit awaited, which the rules above forbid.
        if self.owner is not None and self.owner is not _current_task():
            raise RuntimeError(
                "a write transaction spans an await; group commit needs units"
                " that run without yielding to the event loop"
            )

    def _join(self) -> tuple[asyncio.Future[None], bool]:
        """The open group's outcome, and whether this unit opened the group's transaction."""
        if self.committed is not None and not self.conn.in_transaction:
            self._fail(
                self.committed,
                StoreUnavailable(
                    "the database rolled back the transaction of this write; nothing was stored"
                ),
            )
        first = False
        if self.committed is None:
            if not self.conn.in_transaction:
                self.conn.execute("begin immediate")
                first = True
            self.committed = self.loop.create_future()
            self.loop.call_soon(self.flush)
        return self.committed, first

    def _fail(self, committed: asyncio.Future[None], exc: BaseException) -> None:
        if self.committed is committed:
            self.committed = None
            self.after_commit.clear()
            self._drop_deferred()
        if not isinstance(exc, Exception):  # KeyboardInterrupt and such: not for waiters
            exc = StoreUnavailable("the daemon stopped while writing; nothing was stored")
        if not committed.done():
            committed.set_exception(exc)
            committed.exception()  # retrieved: a group written only by jobs has no waiter

    def flush(self) -> None:
        """COMMIT the open group now (if no unit is open) and settle its waiters."""
        committed = self.committed
        if committed is None:
            return
        if self.depth:  # only reachable from inside a unit; its end is a turn away
            self.loop.call_soon(self.flush)
            return
        self.committed = None
        callbacks, self.after_commit = self.after_commit, []
        try:
            if not self.conn.in_transaction:
                raise StoreUnavailable(
                    "the database rolled back the transaction of this write; nothing was stored"
                )
            self.run_deferred()
            self.conn.execute("commit")
        except BaseException as exc:
            self._drop_deferred()
            self._abort(committed, exc)  # a failed COMMIT can leave it open (see transaction)
            return
        self._drop_deferred()
        self.groups += 1
        committed.set_result(None)
        for callback in callbacks:
            try:
                callback()
            except Exception:
                log.exception("a callback after a group commit failed")

    def run_after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once what was written so far is committed (now, if it is)."""
        if self.committed is None:
            callback()
            return
        if not self.depth:
            self.flush()
            callback()
            return
        self.after_commit.append(callback)


# A request's first write on PostgreSQL, while another process holds the write lock, does not
# wait for it on the event loop (psycopg's calls are synchronous: the whole process would
# stand still, reads included, until the other process commits): the connection raises
# WriteLockBusy instead, the daemon waits for the lock with the loop free (open_group_when_free)
# and runs the request again. Only the first: once a request has written, a later write of
# it waits as before, so no write is ever made twice. Set per request task by
# daemon/endpoints.py; jobs and the CLI wait as they always did.
# The request's task and whether its first write is still to come. The task is kept because
# tasks and callbacks started from the request inherit this context: their writes wait for
# the lock as always (nothing would run them again).
_FIRST_WRITE_APART: ContextVar[list[Any] | None] = ContextVar("first_write_apart", default=None)


@contextmanager
def first_write_waits_apart() -> Iterator[None]:
    """Within this block (one request's task), the first write may raise WriteLockBusy rather
    than wait for another process's write lock (see _FIRST_WRITE_APART)."""
    token = _FIRST_WRITE_APART.set([_current_task(), True])
    try:
        yield
    finally:
        _FIRST_WRITE_APART.reset(token)


def _armed() -> list[Any] | None:
    state = _FIRST_WRITE_APART.get()
    return state if state is not None and state[1] and state[0] is _current_task() else None


def may_wait_for_write_lock() -> bool:
    """Whether a write transaction starting now may wait for the write lock where it runs."""
    return _armed() is None


def _written() -> None:
    state = _armed()
    if state is not None:
        state[1] = False


async def open_group_when_free(conn: Connection, try_begin: Callable[[], bool]) -> None:
    """Open ``conn``'s group transaction once the write lock is free (``try_begin``: begin and
    take the lock without waiting, True if taken), polling with the event loop free; or
    return as soon as another request of this process has opened one (the retry joins it)."""
    group = group_of(conn)
    if group is None:
        return
    delay = 0.0005
    while group.committed is None:
        if try_begin():
            group.committed = group.loop.create_future()
            group.loop.call_soon(group.flush)
            return
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.02)


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop: a synchronous caller
        return None


_GROUPS: dict[int, GroupCommit] = {}

# Work running beside the event loop on a connection of its own (PostgreSQL's pools,
# state/pg/apart_pool.py): a read (a search, a feed page) or a request's whole write. The
# repositories' statements run on that connection; a read may not write. Such work sees what is
# committed and never the open group, so group_of answers None there: nothing deferred to the
# group's COMMIT runs on (or is read from) the wrong connection. What must run on the event
# loop (waking the vector worker or waiting pulls, after_commit's callbacks) is kept for it,
# and runs there once the work is done (its transactions committed).


@dataclass
class Apart:
    """The connection of work running apart, whether it is a write (one of a batch, whose
    transaction is open around it: its outermost ``transaction()`` is a SAVEPOINT in it,
    ``units`` counts the open ones, and it is committed with the batch) or a read (which
    may not write), and what to run on the event loop when it is done."""

    raw: Any
    writes: bool
    on_loop: list[Callable[[], None]]
    units: int = 0


_APART: ContextVar[Apart | None] = ContextVar("apart", default=None)


def apart() -> Apart | None:
    """The work running apart in this context (None on the event loop)."""
    return _APART.get()


@contextmanager
def working_apart(raw: Any, *, writes: bool) -> Iterator[Apart]:
    """Within this block (a worker thread's work), statements run on ``raw``."""
    state = Apart(raw, writes, [])
    token = _APART.set(state)
    try:
        yield state
    finally:
        _APART.reset(token)


def later_on_loop(callback: Callable[[], None]) -> bool:
    """In work running apart, keep ``callback`` for the event loop (run when the work is
    done) and answer True; elsewhere False (the caller runs it)."""
    state = _APART.get()
    if state is None:
        return False
    state.on_loop.append(callback)
    return True


def enable_group_commit(conn: Connection, loop: asyncio.AbstractEventLoop) -> GroupCommit:
    """Put ``conn`` in group mode (the daemon's request connection; see :class:`GroupCommit`)."""
    group = GroupCommit(conn, loop)
    _GROUPS[id(conn)] = group
    return group


def disable_group_commit(conn: Connection) -> None:
    """Commit what is pending and leave group mode (before the connection closes)."""
    group = _GROUPS.pop(id(conn), None)
    if group is not None and group.conn is conn:
        group.flush()


def group_of(conn: Connection) -> GroupCommit | None:
    if _APART.get() is not None:
        return None
    group = _GROUPS.get(id(conn))
    return group if group is not None and group.conn is conn else None


def in_unit(conn: Connection) -> bool:
    """Whether a caller's write transaction is open (``conn.in_transaction`` in group mode
    also means other callers' committed-soon units)."""
    state = _APART.get()
    if state is not None and state.writes:  # the batch's transaction is not the caller's
        return state.units > 0
    group = group_of(conn)
    return bool(group.depth) if group is not None else conn.in_transaction


def defer(
    conn: Connection, sql: str, params: tuple[Any, ...], *, key: Hashable | None = None, value: Any = None
) -> bool:
    """Run ``sql`` just before the COMMIT of the open group instead of now, if a unit of
    one is open on ``conn`` (else False: run it yourself). ``key``/``value``: what
    :func:`deferred_value` answers for it meanwhile (a full-text row's tokens)."""
    group = group_of(conn)
    if group is None or not group.depth:
        return False
    group.defer(sql, params, key, value)
    return True


def deferred_value(conn: Connection, key: Hashable) -> Any:
    """The value of the latest statement deferred with ``key`` and not run yet, or None."""
    group = group_of(conn)
    return group.values.get(key) if group is not None and group.values else None


def run_deferred(conn: Connection) -> None:
    """Run what is deferred now: before any other use of what the deferred statements
    write (a delete, a query, a table swap), so that it sees the group's writes."""
    group = group_of(conn)
    if group is not None and group.deferred:
        group.run_deferred()


def flush_now(conn: Connection) -> None:
    """COMMIT the open group now, for work that needs a committed state (a checkpoint). A
    no-op outside group mode, and inside a unit (the group commits at its end)."""
    group = group_of(conn)
    if group is not None and not group.depth:
        group.flush()


def after_commit(conn: Connection, callback: Callable[[], None]) -> None:
    """Run ``callback`` once the writes so far are committed: now outside group mode; in
    work running apart, on the event loop once the work is done."""
    if later_on_loop(callback):
        return
    group = group_of(conn)
    if group is None:
        callback()
    else:
        group.run_after_commit(callback)


@contextmanager
def collect_commits() -> Iterator[list[asyncio.Future[None]]]:
    """Collect, for the current task, the group commits its writes are part of."""
    pending: list[asyncio.Future[None]] = []
    token = _PENDING.set((_current_task(), pending))
    try:
        yield pending
    finally:
        _PENDING.reset(token)


async def wait_commits(pending: list[asyncio.Future[None]]) -> None:
    """Wait until every collected group committed; raise the error of one that failed.

    Shielded: a cancelled request must not cancel the commit its neighbours wait for."""
    for committed in pending:
        await asyncio.shield(committed)
