"""Prefixed, time-ordered identifiers and RFC 3339 timestamps.

An id is ``prefix + 32 hex``: 48 bits of Unix milliseconds, then 80 random bits, so ids sort
by creation time (useful for cursors and for "most recent first" without an extra index).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

_lock = threading.Lock()
_last_ms = 0
_last_rand = 0
# Tests only (see use_id_source): when set, new_id() returns _source(prefix).
_source: Callable[[str], str] | None = None


@contextmanager
def use_id_source(source: Callable[[str], str]) -> Iterator[None]:
    """Inside the block, :func:`new_id` returns ``source(prefix)`` (for tests only).

    The TUI's snapshot tests use it so that the ids they show are the same on every run and
    machine, while the real store and daemon make every record. ``source`` must keep the id
    format (``prefix`` + 32 hex), uniqueness, and creation order for each prefix, and be safe
    to call from threads. The previous source (normally none) is restored on exit.
    """
    global _source
    previous, _source = _source, source
    try:
        yield
    finally:
        _source = previous


def new_id(prefix: str) -> str:
    """Return ``prefix`` followed by a time-ordered 32-hex id (e.g. ``mem_019e5cdb...``).

    Within one millisecond the random part is incremented instead of redrawn, so ids made by
    one process are strictly increasing.
    """
    global _last_ms, _last_rand
    if _source is not None:
        return _source(prefix)
    with _lock:
        ms = int(time.time() * 1000)
        if ms <= _last_ms:
            ms = _last_ms
            rand = (_last_rand + 1) & ((1 << 80) - 1)
        else:
            rand = int.from_bytes(os.urandom(10), "big") >> 1  # leave room to increment
        _last_ms, _last_rand = ms, rand
    return f"{prefix}{ms:012x}{rand:020x}"


def iso_from_datetime(moment: datetime) -> str:
    """Format an aware datetime as RFC 3339 UTC with milliseconds."""
    # isoformat is C and ends in "+00:00" for UTC: ~2x faster than strftime, and a write
    # stamps several rows (equal output: tests/state/test_ids.py).
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def now_iso() -> str:
    """The current time as ``2026-05-18T08:00:00.000Z``."""
    return iso_from_datetime(datetime.now(UTC))


def parse_iso(value: str) -> datetime:
    """Parse a timestamp written by :func:`now_iso` (or any RFC 3339 string)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
