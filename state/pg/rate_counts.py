"""Requests per caller and minute, counted across the processes of one team server (issue #18):
the table of migration m0005, on a connection of its own (daemon/rate_limit.py calls it from a
worker thread about once a second, never on the event loop)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from state.pg.engine import OwnConnection

_ADD = (
    "insert into rate_counts (identity_id, minute, used)"
    " select i, %s, n from unnest(%s::text[], %s::int[]) as u(i, n)"
    " on conflict (identity_id, minute) do update set used = rate_counts.used + excluded.used"
    " returning identity_id, used"
)


class RateCounts:
    """``add`` this process's admitted requests of a minute, and learn every process's."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._conn = OwnConnection(connect)
        self._lock = threading.Lock()

    def add(self, minute: int, used: dict[str, int]) -> dict[str, int]:
        """Add ``used`` (identity -> requests admitted since the last call) to ``minute``'s
        counts; each identity's total for that minute, over all processes. Minutes before
        the last one are forgotten on the way."""
        if not used:
            return {}
        ids = sorted(used)  # the same order in every process: upserts never deadlock

        def add(conn: Any) -> list[Any]:
            with conn.transaction():
                rows = conn.execute(_ADD, (minute, ids, [used[i] for i in ids])).fetchall()
                conn.execute("delete from rate_counts where minute < %s", (minute - 1,))
            return rows

        with self._lock:
            rows = self._conn.run(add)
        return {identity: int(total) for identity, total in rows}

    def close(self) -> None:
        with self._lock:
            self._conn.close()
