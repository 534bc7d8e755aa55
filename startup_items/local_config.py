"""``.amp/local.json``: where this machine keeps MemoryCloud, next to a repository's startup files.

A runtime starts hooks and MCP servers with whatever environment it chooses (Codex passes MCP
servers only a short list of variables), so ``MEMORYCLOUD_HOME`` cannot be relied on to
reach them. The repository's shared files stay the same on every machine (``memorycloud``,
``python3 -S .amp/launcher.py``); the one machine-specific fact, which MemoryCloud home holds
the keys, lives in this git-ignored file. Readers (the launcher, ``memorycloud mcp``) look
for it after the environment and before the platform's default directories.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from state.paths import Paths

LOCAL_CONFIG_PATH = ".amp/local.json"
SCHEMA = "memorycloud.local-config.v1"


def local_config_text(paths: Paths) -> str:
    """The file's content for this installation (deterministic: same home, same bytes)."""
    home = os.environ.get("MEMORYCLOUD_HOME")
    return (
        json.dumps(
            {
                "schema": SCHEMA,
                "memorycloud_home": str(Path(home).expanduser().resolve()) if home else None,
                "credentials_file": str(paths.config_dir / "credentials.json"),
            },
            indent=2,
        )
        + "\n"
    )


def find_local_config(start: Path) -> dict | None:
    """The nearest ``.amp/local.json`` at or above ``start`` (None when there is none)."""
    for directory in (start, *start.parents):
        candidate = directory / LOCAL_CONFIG_PATH
        try:
            data = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("schema") == SCHEMA:
            return data
    return None


def local_home(start: Path) -> Path | None:
    """The MemoryCloud home named by the nearest local config (None: the default one)."""
    data = find_local_config(start)
    home = data.get("memorycloud_home") if data else None
    return Path(home) if isinstance(home, str) and home else None
