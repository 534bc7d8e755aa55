"""The Store: one opened database with its repositories and search index.

The daemon opens one Store at start (``cleanup_ctx``) and closes it on shutdown; CLI
commands that work without the daemon open their own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from state.amp_records import AmpRecords
from state.config import Settings
from state.conflict_records import ConflictRecords
from state.db import Connection, connect, open_failure, sqlite_module, transaction, versions
from state.embedders import make_embedder
from state.identities import IdentityRepository
from state.memories import MemoryRepository
from state.migrations import migrate
from state.paths import Paths
from state.projects import ProjectRepository
from state.rebuild import plan as plan_rebuilds
from state.rebuild import status as rebuild_status
from state.redaction import stop_fts_secure_delete
from state.search import SearchIndex
from state.side_reads import SideReads
from state.startup_records import StartupRecords
from state.suite_records import SuiteRecords
from state.update_records import UpdateRecords
from state.upstream_records import UpstreamRecords

log = logging.getLogger(__name__)
T = TypeVar("T")


class Store:
    """Repositories over one connection. Writes go through ``store.transaction()``."""

    def __init__(self, conn: Connection, settings: Settings) -> None:
        self.conn = conn
        self.settings = settings
        self.embedder = make_embedder(settings.embedder, settings.dimension)
        self.search = self.search_index(conn, settings)
        self.identities = IdentityRepository(conn)
        self.projects = ProjectRepository(conn)
        self.memories = MemoryRepository(conn, self.search)
        self.amp = AmpRecords(conn)
        self.startup = StartupRecords(conn)
        self.conflicts = ConflictRecords(conn)
        self.updates = UpdateRecords(conn)
        self.suites = SuiteRecords(conn)
        self.upstream = UpstreamRecords(conn)

    # This engine's search index (the PostgreSQL store's is state/pg/search.py's).
    index_type: type = SearchIndex

    def search_index(self, conn: Connection, settings: Settings) -> SearchIndex:
        """The search index over ``conn``, weighted and tuned by ``settings``."""
        return self.index_type(
            conn,
            self.embedder,
            bm25_weight=settings.bm25_weight,
            vector_weight=settings.vector_weight,
            vector_mode=settings.vector_mode,
            reply_lift=settings.reply_lift,
        )

    @classmethod
    def open(cls, path: Path | str, settings: Settings | None = None) -> Store:
        """Open (creating if needed) and migrate. If the tokenizer or the embedder changed,
        the search indexes' rebuild is only recorded here: it runs in the background
        (state/rebuild.py), so opening stays fast at any size."""
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = connect(path)
        try:
            migrate(conn)
            store = cls(conn, settings or Settings())
            stop_fts_secure_delete(conn)
            plan_rebuilds(store)
            store.search.find_missing_vectors()  # a failing embedder's leftovers, if any
        except BaseException as exc:
            conn.close()
            if isinstance(exc, sqlite_module().Error):  # damaged, read-only, full: say which
                raise open_failure(path, exc) from exc
            raise
        return store

    engine = "sqlite"

    def location(self) -> str:
        """Where the store is, for people: the SQLite file, or the database URL (masked)."""
        row = self.conn.execute("pragma database_list").fetchone()
        return str(row[2]) if row else ""

    def index_status(self) -> dict[str, Any]:
        """How the search index stands (state/rebuild.py ``status``): ``daemon status``, the TUI."""
        return rebuild_status(self.conn)

    @contextmanager
    def run_once(self, job: str) -> Iterator[bool]:
        """Whether this process may run ``job`` now, held while the block runs: always on
        SQLite (one daemon process per file; PostgreSQL's store answers for its cluster)."""
        yield True

    def feed_listener(self, on_change: Callable[[str | None], None]) -> Any:
        """What tells this process of changes other processes commit, as they commit (an
        object with ``start()`` and ``async stop()``), or None: on SQLite there is none
        (daemon/runtime/feed_waiters.py reads the newest cursor instead)."""
        return None

    def rate_counts(self) -> Any:
        """Where the processes serving this store count each caller's requests together
        (daemon/rate_limit.py), or None: one SQLite file has one daemon process."""
        return None

    def transaction(self):  # -> ContextManager[Connection]
        return transaction(self.conn)

    def open_apart_pools(self, reads: int, writes: bool) -> None:
        """Let :meth:`read` and :meth:`write` run work apart from the event loop, on
        connections of their own (``reads`` of them for reads). On SQLite, whose statements
        never wait for a network, both run at once; with ``reads``, a search ranks part of
        its full-text query on a second connection in a worker thread (state/side_reads.py)."""
        location = self.location()
        if reads > 0 and self.search.side_reads is None and location:  # not in memory
            self.search.side_reads = SideReads(location)

    async def read(self, work: Callable[[], T]) -> T:
        """``work()``, which only reads: here, at once (a SQLite read holds the event loop for
        microseconds); on PostgreSQL, with pools open, in a worker thread on a pooled
        connection (state/pg/apart_pool.py), seeing committed rows only."""
        return work()

    @property
    def writes_apart(self) -> bool:
        """Whether :meth:`write` runs work in a worker thread (PostgreSQL with pools open)."""
        return False

    async def write(self, work: Callable[[], T]) -> T:
        """``work()``, which may write (answered once its transactions are committed): here,
        at once, in the daemon's group commit; on PostgreSQL, with pools open, in the writer's
        thread, in a batch of writes (state/pg/apart_pool.py)."""
        return work()

    def versions(self) -> dict[str, str]:
        return versions(self.conn)

    def size_bytes(self) -> int:
        page_count = self.conn.execute("pragma page_count").fetchone()[0]
        page_size = self.conn.execute("pragma page_size").fetchone()[0]
        return page_count * page_size

    def disable_autocheckpoint(self) -> None:
        """Leave WAL checkpoints to the caller (see :func:`state.db.checkpoint`)."""
        self.conn.execute("pragma wal_autocheckpoint = 0")

    def close(self) -> None:
        if self.search.side_reads is not None:
            self.search.side_reads.close()
            self.search.side_reads = None
        try:
            # Fold the WAL back so the database file alone is complete after a clean stop.
            self.conn.execute("pragma wal_checkpoint(truncate)")
        except sqlite_module().Error as exc:
            # A full disk or a busy reader: every commit is safe in the WAL, which the next
            # open replays; failing here would only hide why the daemon is stopping.
            log.warning("could not fold the WAL into the database at close: %s", exc)
        finally:
            self.conn.close()


def open_store(paths: Paths, settings: Settings) -> Store:
    """The store these settings name: the PostgreSQL database of ``database_url`` (the cloud
    role's, state/pg/store.py), else the SQLite file of ``paths``."""
    if settings.database_url:
        from state.pg.engine import database_password
        from state.pg.store import PgStore  # psycopg is an optional dependency

        password = database_password(settings.database_url, paths.secrets_file)
        return PgStore.open(settings.database_url, settings, password)
    return Store.open(paths.database, settings)
