"""The one connection factory.

The same SQLite engine on every machine: the ``sqlean`` build (sqlean.py, a dependency with
wheels for Linux, macOS and Windows) brings its own SQLite (3.47 or newer) with FTS5 and the
ability to load sqlite-vec. The interpreter's own ``sqlite3`` differs from machine to machine:
Debian 12's ``/usr/bin/python3`` links SQLite 3.40.1, which lacks FTS5 ``secure-delete`` (3.42)
that redaction and the index repair rely on, Ubuntu 24.04's links 3.45.1, whose FTS5 cannot
drop an index whose data the rebuild has moved aside, and pyenv's and macOS's builds cannot
load extensions at all. The standard module is used only where sqlean.py cannot be installed, and
then only if it is new enough and loads extensions; otherwise the store refuses to start with
a message that says why. Either way we then check ``vec_version()`` so a broken setup fails at
start, not at the first search.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

import sqlite_vec

from state.errors import MemoryCloudError, StorageFull, StoreUnavailable
from state.group_commit import apart, group_of, savepoint

Connection = Any  # sqlite3.Connection or sqlean.Connection: same API
log = logging.getLogger(__name__)


# FTS5 secure-delete (state/redaction.py) and the index repair's checks need SQLite 3.42;
# discarding an index (state/index_builds.py discard_index: its shadow tables renamed away,
# then DROP TABLE) fails on 3.45 with "vtable constructor failed" and works on 3.47 (sqlean.py
# 3.45.1 and 3.47.0 under the suite; no sqlean.py build has 3.46).
MIN_SQLITE = (3, 47, 0)


# Prepared statements a connection keeps (its module's cache, least recently used out).
# sqlean's module keeps 100 by default, fewer than the daemon's requests use: a mix of search,
# bootstrap, memory-brief, memory deltas and mem1 turns ran ~156 distinct statements, so the
# least recent were prepared again from scratch as the requests alternated. Prepared, the
# search's three-part statement takes ~14 KiB (RSS over 500 of them), so a full cache is at
# most ~7 MB, and the mix above fills a third of it.
# What makes SQLite plan a statement again at every run, cached or not, is a value its planner
# reads: a LIMIT or OFFSET bound bare (so written ``limit cast(? as integer)`` here, which it
# cannot read) and an equality with a bound value where a partial index holds one with a
# constant (``kind = ?`` against ``kind = 'summary'``: ``kind = cast(? as text)``). Planned
# once: a search 0.98x the instructions, bootstrap 0.95x, a mem1 call 0.97x; in a mix of
# requests over HTTP bootstrap's p50 0.68x and memory-brief's ~0.87x (bench/RESULTS.md,
# "statements planned once"; tests/daemon/test_prepared_statements.py).
STATEMENT_CACHE = 512


@lru_cache(maxsize=1)
def sqlite_module() -> ModuleType:
    """sqlean (the same SQLite everywhere), else a stdlib sqlite3 that is new enough."""
    try:
        import sqlean
    except ImportError:
        return _stdlib_sqlite()
    _without_memory_statistics(sqlean)
    return sqlean


# SQLITE_CONFIG_MEMSTATUS (sqlite3.h): whether SQLite counts the memory it allocates.
_CONFIG_MEMSTATUS = 9


def _without_memory_statistics(module: ModuleType) -> None:
    """Turn off SQLite's count of the memory it allocates, in sqlean's own copy of SQLite.

    The count takes one process-wide mutex around every allocation, and FTS5 allocates all the
    time: two full-text queries on two connections in two threads took as long together as
    one after the other (200 brief-task parts each at 10k, 0.32 s against 0.35 s), and half
    as long without the count (0.18 s): the second core a search uses (state/side_reads.py).
    Nothing here reads the count (sqlite3_memory_used). The setting can only change while
    SQLite is shut down, and sqlean's module starts it when imported; this runs before the
    first connection is opened (sqlite_module is called once, by connect), and sqlean's
    SQLite is its own, used by nothing else in the process. If it cannot be done (a build
    without the symbols), searches only run their parts side by side less well."""
    import ctypes

    try:
        library = ctypes.CDLL(module._sqlite3.__file__)  # type: ignore[attr-defined]
        if library.sqlite3_shutdown() != 0:
            return
        library.sqlite3_config(_CONFIG_MEMSTATUS, ctypes.c_int(0))
        library.sqlite3_initialize()
    except (AttributeError, OSError) as exc:
        log.debug("SQLite's memory statistics stay on: %s", exc)


def _stdlib_sqlite() -> ModuleType:
    version = sqlite3.sqlite_version_info
    if version < MIN_SQLITE:
        raise StoreUnavailable(
            f"this Python's SQLite is {sqlite3.sqlite_version}; MemoryCloud needs"
            f" {'.'.join(map(str, MIN_SQLITE))} or newer, which the sqlean.py package brings:"
            " `pip install sqlean.py` in the environment MemoryCloud runs in"
        )
    probe = sqlite3.connect(":memory:")
    try:
        probe.enable_load_extension(True)
    except (AttributeError, sqlite3.Error) as exc:
        raise StoreUnavailable(
            "this Python's sqlite3 cannot load extensions (sqlite-vec) and sqlean.py is not"
            " installed: `pip install sqlean.py` in the environment MemoryCloud runs in"
        ) from exc
    finally:
        probe.close()
    return sqlite3


def connect(path: Path | str, *, readonly: bool = False) -> Connection:
    """Open a configured connection: sqlite-vec loaded, WAL, foreign keys, busy timeout.

    Connections run in autocommit mode (``isolation_level=None``); use :func:`transaction`
    for multi-statement writes so each is one explicit ``BEGIN IMMEDIATE`` transaction.
    """
    module = sqlite_module()
    target = str(path)
    if readonly and target != ":memory:":
        target = f"file:{target}?mode=ro"
    try:
        conn = module.connect(
            target,
            isolation_level=None,
            check_same_thread=False,
            uri=readonly,
            cached_statements=STATEMENT_CACHE,
        )
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        (vec_version,) = conn.execute("select vec_version()").fetchone()
    except Exception as exc:
        raise open_failure(path, exc) from exc
    if not vec_version:
        raise StoreUnavailable("sqlite-vec loaded but vec_version() is empty")
    conn.row_factory = module.Row
    try:
        _configure(conn, readonly)
    except module.Error as exc:
        conn.close()
        raise open_failure(path, exc) from exc
    return conn


def _configure(conn: Connection, readonly: bool) -> None:
    conn.execute("pragma busy_timeout = 5000")
    conn.execute("pragma foreign_keys = on")
    # Memory-mapped reads and a 16 MiB page cache: the default 2 MiB cache is the size of one
    # block of vectors, so every KNN scan evicted the FTS and record pages (bench/RESULTS.md).
    # Pages of the database file are read through the mapping, not the cache; the cache holds
    # the WAL's and the dirty ones. 64 MiB filled up with those and was most of an idle
    # daemon's memory (RSS 128 MB after 10k memories, 75 MB with 16 MiB; same speed).
    conn.execute("pragma cache_size = -16384")
    # The whole file (up to 16 GiB), not its first 256 MiB: a vector is read out of a chunk of
    # 1024 of them by walking that blob's chain of pages, which beyond the mapping is one
    # read() per page. At 100k memories the rerank of BM25's 50 candidates took 35 ms that
    # way and 6 ms mapped with float32 vectors (770 MB file), 1.7 and 1.4 ms with int8 ones
    # (430 MB): it matters again as the file grows. Mapped pages count in RSS as file-backed
    # memory, which the kernel reclaims as it needs.
    conn.execute("pragma mmap_size = 17179869184")
    # Savepoint journals in memory, not in temporary files: every write of a group commit
    # after its first is a SAVEPOINT (state/group_commit.py), whose journal of the pages it
    # changes spilled to a file past 64 KiB, one pwrite() per page: 7 % of the daemon's
    # samples under 8 clients' memory deltas (py-spy --native); in memory, 829-834 -> 868-897
    # deltas a second (bench/RESULTS.md, "savepoint journals in memory"), and no old text of a
    # redacted page lands in a temporary file. The journal holds a group's changed pages (a
    # few hundred KiB); no statement here sorts or builds temporary tables of a size that
    # would need a file.
    conn.execute("pragma temp_store = memory")
    if not readonly:
        conn.execute("pragma journal_mode = wal")
        # NORMAL in WAL mode: a committed transaction survives the process being killed
        # (kill -9); only a power loss can drop the last commits. Worth ~10x write latency.
        conn.execute("pragma synchronous = normal")
        # A WAL that restarts is cut back to this size, not left at its largest (64 MiB).
        conn.execute("pragma journal_size_limit = 67108864")
        # Deleted and overwritten content is zeroed, not left in free space: redaction must
        # remove the text from the file (state/redaction.py).
        conn.execute("pragma secure_delete = on")


def open_failure(path: Path | str, exc: BaseException) -> MemoryCloudError:
    """Why a database cannot be opened, in words a person can act on. Nothing was written."""
    text = str(exc).lower()
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return StoreUnavailable(
            f"the database file {path} is damaged or is not a MemoryCloud database ({exc}). It"
            " was left as it is: keep a copy, then restore a backup or move it away to start"
            " empty. `memorycloud doctor` shows what is wrong."
        )
    if "readonly" in text or "read-only" in text or "unable to open" in text or "permission" in text:
        return StoreUnavailable(
            f"cannot write the database {path} ({exc}): the file or its directory"
            f" {Path(path).parent} is read-only for this user. Make it writable, or set"
            " MEMORYCLOUD_HOME to a writable directory."
        )
    if "full" in text:
        return StorageFull(f"the disk that holds {path} is full ({exc}); free some space and start again")
    if "disk i/o error" in text:
        return StoreUnavailable(f"the disk failed while opening {path} ({exc}); is it full or failing?")
    return StoreUnavailable(f"cannot open {path} with sqlite-vec: {exc}")


@contextmanager
def transaction(conn: Connection) -> Iterator[Connection]:
    """One write transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``), rolled back on error.

    Nested use becomes a SAVEPOINT inside the outer transaction, so a caller can make several
    service writes one atomic unit (replaying a sync intent and marking it done, say).

    On a connection in group mode (state/group_commit.py, the daemon's) the outermost use
    is a unit of the shared transaction instead: its own SAVEPOINT, committed later with the
    other units of the same event-loop turn; likewise in a batch of writes apart on
    PostgreSQL (state/pg/apart_pool.py).
    """
    group = group_of(conn)
    if group is not None:
        with group.unit():
            yield conn
        return
    batch = apart()
    if batch is not None and batch.writes:  # one write of a batch apart: a SAVEPOINT in it
        batch.units += 1
        try:
            with savepoint(conn):
                yield conn
        finally:
            batch.units -= 1
        return
    if conn.in_transaction:
        with savepoint(conn):
            yield conn
        return
    conn.execute("begin immediate")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:  # SQLite may have rolled back already (full disk, I/O error)
            conn.execute("rollback")
        raise
    try:
        conn.execute("commit")
    except BaseException:
        # A COMMIT that fails (full disk, I/O error, busy) can leave the transaction open;
        # then every later write would nest into it as a savepoint and never be committed.
        if conn.in_transaction:
            conn.execute("rollback")
        raise


def checkpoint(conn: Connection) -> tuple[int, int, int]:
    """A PASSIVE WAL checkpoint: copies what it can without blocking writers.

    The daemon turns automatic checkpoints off on its request connection (they made every
    ~1000th write pay for the copy) and calls this from a background thread instead.
    Returns (busy, wal pages, pages checkpointed).
    """
    return tuple(conn.execute("pragma wal_checkpoint(passive)").fetchone())


class CheckpointConnection:
    """The checkpoint job's own connection, used by one thread at a time and closed only once
    no thread uses it: the job's checkpoint runs in a worker thread, and the daemon's shutdown
    used to close the connection under a checkpoint still running there (a segmentation fault
    at app shutdown, twice in tests/daemon/test_dialects_api_errors.py under load)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._closed = False
        never_wait_for_locks(conn)

    def checkpoint(self) -> tuple[int, int, int]:
        """:func:`checkpoint` on this connection (for a worker thread)."""
        with self._lock:
            return checkpoint(self._open())

    def restart_wal(self) -> tuple[int, int, int]:
        """:func:`restart_wal` on this connection."""
        with self._lock:
            return restart_wal(self._open())

    def close(self) -> None:
        """Close once the checkpoint in progress, if any, has returned (blocks until then)."""
        with self._lock:
            self._closed = True
            self._conn.close()

    def _open(self) -> Connection:
        if self._closed:
            raise StoreUnavailable("the checkpoint connection is closed: the daemon is stopping")
        return self._conn


def never_wait_for_locks(conn: Connection) -> None:
    """A locked database answers at once (SQLITE_BUSY) on this connection instead of after
    the busy timeout: for the daemon's checkpoint connection, whose truncating checkpoint
    runs on the event loop (daemon/jobs.py)."""
    conn.execute("pragma busy_timeout = 0")


def restart_wal(conn: Connection) -> tuple[int, int, int]:
    """A RESTART checkpoint: copies the rest of the WAL so that the next write starts it
    again from the beginning (and cuts the file to ``journal_size_limit``). It needs every
    reader off the WAL and blocks writers while it runs, so the daemon calls it only when the
    WAL is already mostly copied (daemon/jobs.py). Returns as :func:`checkpoint`."""
    return tuple(conn.execute("pragma wal_checkpoint(restart)").fetchone())


def versions(conn: Connection) -> dict[str, str]:
    """SQLite and sqlite-vec versions and which Python module provides SQLite."""
    sqlite_version, vec_version = conn.execute("select sqlite_version(), vec_version()").fetchone()
    return {
        "sqlite": sqlite_version,
        "sqlite_vec": vec_version,
        "sqlite_module": sqlite_module().__name__,
    }
