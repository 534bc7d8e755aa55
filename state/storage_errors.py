"""What a failing disk or database file means for a request, in words a person can act on.

SQLite reports a full disk, a read-only file, a damaged file or an I/O error as its own
exception types; the daemon's middleware asks :func:`storage_error` to turn them into domain
errors (507 for a full disk, 503 otherwise) instead of an anonymous 500. The write that hit
the failure was rolled back as a whole (state/db.py: ``transaction``), so the message can say
that nothing was stored.
"""

from __future__ import annotations

import sqlite3

from state.db import sqlite_module
from state.errors import MemoryCloudError, StorageFull, StoreUnavailable

_NOTHING_STORED = "this request changed nothing"


def storage_error(exc: BaseException) -> MemoryCloudError | None:
    """The domain error for a SQLite storage failure, or None if ``exc`` is something else."""
    if not isinstance(exc, (sqlite3.Error, sqlite_module().Error)):
        return None
    text = str(exc).lower()
    if "full" in text:  # "database or disk is full"
        return StorageFull(
            f"the disk is full: {_NOTHING_STORED}. Free some space and retry; reading still works."
        )
    if "readonly" in text or "read-only" in text:
        return StoreUnavailable(
            f"the database is read-only (check the permissions of the data"
            f" directory): {_NOTHING_STORED}; reading still works."
        )
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return StoreUnavailable(
            "the database file is damaged: the daemon cannot use this part"
            " of it. Stop the daemon and run `memorycloud doctor`."
        )
    if "disk i/o error" in text:
        return StoreUnavailable(
            f"the disk failed a read or write (I/O error; is it full or failing?): {_NOTHING_STORED}."
        )
    if "locked" in text or "busy" in text:
        return StoreUnavailable(
            f"the database is busy (another program holds a lock): {_NOTHING_STORED}; retry in a moment."
        )
    return None
