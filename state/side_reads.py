"""A second connection to the store file, read in a worker thread: the machine's second core
for the part of a search that can run beside the rest (state/search.py ``_bm25_bounded``).

SQLite's statements run with Python's GIL released, so a statement stepped here runs at the
same time as one on the request connection. The daemon opens one (Store.open_apart_pools);
the CLI and direct users of Store read on their one connection. A read here sees committed
rows only, so a caller uses it only while its own connection has nothing uncommitted.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from state.db import connect

log = logging.getLogger(__name__)


class SideReads:
    """One connection and the one thread that uses it: statements run in the order given."""

    def __init__(self, path: Path | str) -> None:
        self.conn = connect(path)
        self.conn.row_factory = None  # plain tuples: the caller merges them with its own rows
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="side-reads")

    def rows(self, sql: str, params: tuple[Any, ...]) -> Future[list[tuple[Any, ...]]]:
        """``sql``'s rows, fetched in the worker thread; ``result()`` raises what it raised.
        Whoever submits waits for the result before submitting again (one statement at a
        time keeps the connection's use simple and the thread free for the next caller)."""
        return self._thread.submit(lambda: self.conn.execute(sql, params).fetchall())

    def close(self) -> None:
        """Wait for the statement under way (if any), then close the connection."""
        self._thread.shutdown(wait=True)
        try:
            self.conn.close()
        except Exception as exc:  # closing must not hide why the daemon is stopping
            log.warning("could not close the side-reads connection: %s", exc)
