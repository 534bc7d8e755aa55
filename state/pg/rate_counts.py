"""Requests per caller and minute, counted across the processes of one team server (issue #18):
the table of migration m0005, on a connection of its own (daemon/rate_limit.py calls it from a
worker thread about once a second, never on the event loop)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_ADD = (
    "insert into rate_counts (identity_id, minute, used)"
    " select i, %s, n from unnest(%s::text[], %s::int[]) as u(i, n)"
    " on conflict (identity_id, minute) do update set used = rate_counts.used + excluded.used"
    " returning identity_id, used"
)


class RateCounts:
    """``add`` this process's admitted requests of a minute, and learn every process's."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self._conn: Any = None
        self._lock = threading.Lock()

    def add(self, minute: int, used: dict[str, int]) -> dict[str, int]:
        """Add ``used`` (identity -> requests admitted since the last call) to ``minute``'s
        counts; each identity's total for that minute, over all processes. Minutes before
        the last one are forgotten on the way."""
        if not used:
            return {}
        ids = sorted(used)  # the same order in every process: upserts never deadlock
        with self._lock:
            for attempt in (1, 2):
                if self._conn is None or self._conn.closed:
                    self._conn = self._connect()
                try:
                    with self._conn.transaction():
                        rows = self._conn.execute(_ADD, (minute, ids, [used[i] for i in ids])).fetchall()
                        self._conn.execute("delete from rate_counts where minute < %s", (minute - 1,))
                    return {identity: int(total) for identity, total in rows}
                except Exception:
                    lost = self._conn.closed
                    self._close()
                    if not lost or attempt == 2:
                        raise
        raise AssertionError("unreachable")

    def _close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def close(self) -> None:
        with self._lock:
            self._close()
