"""Work beside the event loop, on psycopg's connection pool (issue #18).

The repositories' statements are synchronous: on the request connection each one's round
trip holds the daemon's event loop, and every other request waits. Over a Unix socket that is
~0.1 ms; to a managed database a network away it is a millisecond or more per statement, and
a search runs 5-8 of them, a memory delta ~15. With the database 1.35 ms away, one process
kept 0.19x of its direct rates (bench/RESULTS.md, "a network round trip away").

An :class:`ApartPool` runs work in a worker thread on a connection of psycopg_pool's: the
round trips wait there, the GIL released, while the loop serves other requests, and several
pieces of work are in flight at once. Two pools per daemon process (state/pg/store.py):

* reads (a search, a memory query, a feed page) see only committed rows (never a group
  commit's open transaction, state/group_commit.py) and may not write;
* writes: a request's whole handler (daemon/endpoints.py, ``Endpoint.runs_apart``), its
  transactions on the pool's connection, each taking the team server's write lock as every
  write does (state/pg/connection.py) and committed before the request is answered.

Work that loses its connection (the server dropped it) runs once more on another, unless it
had begun a transaction: then it may have written, and the request answers 503 (its client
retries it, with its Idempotency-Key if it has one).

What such work must do on the event loop (wake the vector worker, wake waiting pulls) is kept
and run there when it is done (state/group_commit.py, ``later_on_loop``). As many threads as
connections, so work never waits for a connection it could not get.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from state.errors import StoreUnavailable
from state.group_commit import working_apart
from state.pg.engine import first_line, masked, password_options

T = TypeVar("T")
log = logging.getLogger(__name__)

# How long work waits for a connection (the pool opens one if it has fewer than its size):
# past this, the server cannot be reached and the request answers 503.
CONNECT_SECONDS = 10.0
# The pools' connections are named so in pg_stat_activity.
APPLICATION_NAMES = {False: "memorycloud-reads", True: "memorycloud-writes"}


class ApartPool:
    """``size`` connections to ``url`` and as many worker threads, for reads or writes apart."""

    def __init__(self, url: str, password: str | None, size: int, *, writes: bool) -> None:
        from psycopg_pool import ConnectionPool

        self.size = size
        self.writes = writes
        self._url = url
        self._pool = ConnectionPool(
            url,
            kwargs={
                "autocommit": True,
                "connect_timeout": 10,
                "application_name": APPLICATION_NAMES[writes],
                **password_options(password),
            },
            min_size=1,
            max_size=size,
            open=False,
            name=APPLICATION_NAMES[writes],
        )
        self._threads = ThreadPoolExecutor(max_workers=size, thread_name_prefix=APPLICATION_NAMES[writes])

    def open(self) -> None:
        """Open the pool (its first connection is made in the background)."""
        self._pool.open()

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` in a worker thread, its statements on a pooled connection; then what it
        kept for the event loop, here."""
        context = contextvars.copy_context()  # a request's prepared query vectors go with it
        on_loop: list[Callable[[], None]] = []
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._threads, context.run, self._work, work, on_loop
            )
        finally:
            for callback in on_loop:  # nudges (wake a worker, a pull): run whatever the outcome
                try:
                    callback()
                except Exception:
                    log.exception("a callback after work apart from the event loop failed")

    def _work(self, work: Callable[[], T], on_loop: list[Callable[[], None]]) -> T:
        from psycopg_pool import PoolTimeout

        for attempt in (1, 2):
            try:
                with (
                    self._pool.connection(timeout=CONNECT_SECONDS) as raw,
                    working_apart(raw, writes=self.writes) as state,
                ):
                    try:
                        return work()
                    except StoreUnavailable:
                        if not raw.closed:
                            raise
                        # A failover drops every connection: the idle ones are tried now (one
                        # round trip each) and the dead replaced, for the next work.
                        self._pool.check()
                        if state.began or attempt == 2:  # a write may have taken effect
                            raise
                        log.warning("work apart found its PostgreSQL connection lost: running it again")
                    finally:
                        on_loop.extend(state.on_loop)
            except PoolTimeout as exc:
                raise StoreUnavailable(
                    f"cannot connect to PostgreSQL at {masked(self._url)}: {first_line(exc)}"
                ) from exc
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._threads.shutdown(wait=True)
        self._pool.close()
