"""Reads beside the event loop, on psycopg's connection pool (issue #18).

The repositories' statements are synchronous: on the request connection each one's round
trip holds the daemon's event loop, and every other request waits. Over a Unix socket that is
~0.1 ms; to a managed database a network away it is a millisecond or more per statement, and
a search runs 5-8 of them. With the database 1.4 ms away, one process kept 0.19x of its direct
rates (bench/RESULTS.md, "a network round trip away").

A :class:`ReadPool` runs a read (a search, a feed page) in a worker thread on a connection of
psycopg_pool's: the round trips wait there, the GIL released, while the loop serves other
requests and several reads are in flight at once. A read apart sees only committed rows
(never a group commit's open transaction, state/group_commit.py) and must not write. A read
that meets a connection the server dropped runs once more on another (the pool replaces the
dropped ones).
As many threads as the pool's connections, so a read never waits for one it could not get.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from state.errors import StoreUnavailable
from state.group_commit import reading_apart
from state.pg.engine import first_line, masked, password_options

T = TypeVar("T")
log = logging.getLogger(__name__)

# How long a read waits for a connection (the pool opens one if it has fewer than its size):
# past this, the server cannot be reached and the request answers 503.
CONNECT_SECONDS = 10.0
APPLICATION_NAME = "memorycloud-reads"


class ReadPool:
    """``size`` connections to ``url`` and as many worker threads, for reads apart."""

    def __init__(self, url: str, password: str | None, size: int) -> None:
        from psycopg_pool import ConnectionPool

        self.size = size
        self._url = url
        self._pool = ConnectionPool(
            url,
            kwargs={
                "autocommit": True,
                "connect_timeout": 10,
                "application_name": APPLICATION_NAME,  # for pg_stat_activity
                **password_options(password),
            },
            min_size=1,
            max_size=size,
            open=False,
            name="memorycloud-reads",
        )
        self._threads = ThreadPoolExecutor(max_workers=size, thread_name_prefix="pg-read")

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
                with self._pool.connection(timeout=CONNECT_SECONDS) as raw, reading_apart(raw):
                    try:
                        return work()
                    except StoreUnavailable:
                        if not raw.closed or attempt == 2:
                            raise
                        log.warning("a read found its PostgreSQL connection lost: reading again")
                # A failover drops every connection: the idle ones are tried now (one round
                # trip each) and the dead replaced, so the second attempt gets a live one.
                self._pool.check()
            except PoolTimeout as exc:
                raise StoreUnavailable(
                    f"cannot connect to PostgreSQL at {masked(self._url)} for a read: {first_line(exc)}"
                ) from exc
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._threads.shutdown(wait=True)
        self._pool.close()
