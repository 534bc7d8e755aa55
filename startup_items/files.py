"""Reading and atomically writing the files of a repository."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def sha256_text(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_text(path: Path) -> str | None:
    """The file's text, or None if it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def write_atomic(path: Path, text: str) -> None:
    """Write via a temp file in the same directory and rename, so readers never see half a
    file; an existing file keeps its permission bits."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def missing_dirs(root: Path, relative: str) -> list[str]:
    """Directories between root and the file that do not exist yet (outermost first)."""
    out: list[str] = []
    parent = Path(relative).parent
    parts = parent.parts
    for index in range(1, len(parts) + 1):
        candidate = Path(*parts[:index])
        if not (root / candidate).exists():
            out.append(candidate.as_posix())
    return out
