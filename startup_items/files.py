"""Reading the files of a repository (writing them: state/atomic.py ``write_atomic``)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_text(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_text(path: Path) -> str | None:
    """The file's text, or None if it does not exist."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


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
