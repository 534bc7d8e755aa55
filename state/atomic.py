"""The one atomic file writer: every file the project writes whole (config, secrets, launcher
credentials, startup items, service units, the daemon's runtime files, mounts, caches) goes
through ``write_atomic``, so a reader, or the next start after a crash or a full disk, sees
the old content or the new, never half a file.

It lives in ``state``, the lowest layer: ``daemon`` and ``startup_items`` may both import it.
The launcher (startup_items/launcher.py) is the one exception: it is written into
repositories and runs alone on the standard library, so it keeps its own few lines.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

# Most files written here hold memory or keys: a new one is the user's alone unless the
# caller says otherwise (mkstemp's 0600). An existing file keeps its permission bits.
PRIVATE = 0o600


def write_atomic(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """Write ``data`` (text as UTF-8, no newline translation) to ``path``: a temp file in the
    same directory, flushed to disk, then renamed over ``path``. ``mode`` forces the file's
    permission bits (secrets: ``PRIVATE``); without it an existing file keeps its bits and a
    new one is ``PRIVATE``. The temp file is 0600 from its creation, so no byte is ever
    readable by others, and it is removed again when anything fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = PRIVATE
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if mode != PRIVATE:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
