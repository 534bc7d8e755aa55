"""The Store on PostgreSQL: the same repositories over a :class:`PgConnection`, the search
index of state/pg/search.py, and the migrations of state/pg/migrations (issue #18: a team
server's store)."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from state.config import Settings
from state.pg import reindex
from state.pg.apart_pool import ReadPool, WriteBatches
from state.pg.connection import PgConnection
from state.pg.engine import check_server, connect, masked
from state.pg.engine import versions as server_versions
from state.pg.feed_listener import FeedListener
from state.pg.migrations import migrate
from state.pg.rate_counts import RateCounts
from state.pg.search import PgSearchIndex
from state.pg.vector_writer import VectorWriter
from state.rebuild import status as rebuild_status
from state.store import Store

T = TypeVar("T")

# pg_try_advisory_lock's first key for "a scheduled job" (the letters MCJB); the second is
# the job name's CRC-32, as a signed 32-bit number.
JOB_LOCKS = 0x4D434A42


class PgStore(Store):
    """Repositories over one PostgreSQL connection. Writes go through ``store.transaction()``,
    which on this engine also waits for every other process's write (state/pg/connection.py)."""

    conn: PgConnection
    engine = "postgresql"
    url = ""  # the database's URL, its password masked
    _dsn = ""  # the URL as given (a password in MEMORYCLOUD_DATABASE_URL included)
    _password: str | None = None  # the stored password, if the URL and PGPASSWORD have none
    vectors: VectorWriter | None = None  # its connection is closed with the store's
    reads: ReadPool | None = None  # the daemon's, for work apart (open_apart_pools)
    writes: WriteBatches | None = None

    def location(self) -> str:
        return self.url

    index_type = PgSearchIndex

    def search_index(self, conn: Any, settings: Settings) -> Any:
        return super().search_index(conn.live(), settings)  # it speaks psycopg itself

    @classmethod
    def open(cls, path: Any, settings: Settings | None = None, password: str | None = None) -> PgStore:
        """Connect to the database at URL ``path`` (``password``: the stored one, when neither
        the URL nor PGPASSWORD has one: state/pg/engine.py), check the server and migrate it
        (refused, with what to do, when a newer release migrated it)."""
        conn = PgConnection.open(str(path), password)
        try:
            check_server(conn.raw)
            migrate(conn.raw)
            store = cls(conn, settings or Settings())
        except BaseException:
            conn.close()
            raise
        store.url = masked(str(path))
        store._dsn = str(path)
        store._password = password
        index = store.search
        assert isinstance(index, PgSearchIndex)
        store.vectors = index.writer = VectorWriter(store.connect_apart, index.vector_text)
        return store

    def connect_apart(self) -> Any:
        """A connection of its own to this store's database (for work beside the requests)."""
        return connect(self._dsn, password=self._password)

    def feed_listener(self, on_change: Callable[[str | None], None]) -> FeedListener:
        """LISTEN for the changes every process commits (NOTIFY of migration m0003)."""
        return FeedListener(self._dsn, on_change, self._password)

    def open_apart_pools(self, reads: int, writes: bool) -> None:
        """Reads apart from the event loop on psycopg's pool of ``reads`` connections (0:
        none), and ``writes`` apart, in batches on a connection of their own (the daemon's;
        see :meth:`Store.read`, :meth:`Store.write`)."""
        if reads > 0 and self.reads is None:
            self.reads = ReadPool(self._dsn, self._password, reads)
            self.reads.open()
        if writes and self.writes is None:
            self.writes = WriteBatches(self._dsn, self._password)
            self.writes.open()

    async def read(self, work: Callable[[], T]) -> T:
        if self.reads is None:
            return work()
        return await self.reads.run(work)

    @property
    def writes_apart(self) -> bool:
        return self.writes is not None

    async def write(self, work: Callable[[], T]) -> T:
        if self.writes is None:
            return work()
        return await self.writes.run(work)

    def rate_counts(self) -> RateCounts:
        """Each caller's requests of the minute, counted by every process (migration m0005)."""
        return RateCounts(self.connect_apart)

    @contextmanager
    def run_once(self, job: str) -> Iterator[bool]:
        """Whether no other process on this database runs ``job`` now: a session advisory lock
        named after the job, taken without waiting and released when the block ends (or
        when this process's connection goes, if it dies)."""
        key = (JOB_LOCKS, zlib.crc32(job.encode("utf-8")) - 2**31)
        mine = bool(self.conn.raw.execute("select pg_try_advisory_lock(%s, %s)", key).fetchone()[0])
        try:
            yield mine
        finally:
            if mine:
                self.conn.raw.execute("select pg_advisory_unlock(%s, %s)", key)

    def versions(self) -> dict[str, str]:
        return server_versions(self.conn.raw)

    def index_status(self) -> dict[str, Any]:
        """As on SQLite, with the vectors' refill counted as this engine makes them."""
        return rebuild_status(self.conn, progress=reindex.progress)

    def size_bytes(self) -> int:
        return int(self.conn.raw.execute("select pg_database_size(current_database())").fetchone()[0])

    def disable_autocheckpoint(self) -> None:
        """Nothing to do: PostgreSQL checkpoints by itself."""

    def close(self) -> None:
        for pool in (self.reads, self.writes):
            if pool is not None:
                pool.close()
        if self.vectors is not None:
            self.vectors.close()
        self.conn.close()
