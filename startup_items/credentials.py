"""The launcher credentials file: agent keys by credential_ref, readable only by the user.

Launchers are standard-library scripts that cannot reach the OS keyring, so the keys they
use live here (mode 0600, outside every repository). These keys have memory scopes only and
can never approve anything. The launcher finds this file the same way (MEMORYCLOUD_HOME, else
the platform's config directory).
"""

from __future__ import annotations

import json
from pathlib import Path

from state.atomic import PRIVATE, write_atomic
from state.paths import Paths


def credentials_path(paths: Paths) -> Path:
    return paths.config_dir / "credentials.json"


def read_credentials(paths: Paths) -> dict[str, str]:
    try:
        data = json.loads(credentials_path(paths).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def store_credential(paths: Paths, credential_ref: str, key: str) -> None:
    """Add or replace one key, atomically, never readable by other users."""
    path = credentials_path(paths)
    data = read_credentials(paths)
    data[credential_ref] = key
    write_atomic(path, json.dumps(data, indent=2), mode=PRIVATE)
