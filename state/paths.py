"""Where MemoryCloud Companion keeps its files.

By default the platform's user directories (platformdirs). ``MEMORYCLOUD_HOME`` moves every
directory under one root, which is what tests and portable installs use.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "memorycloud"


@dataclass(frozen=True)
class Paths:
    """The directories and well-known files of one installation."""

    config_dir: Path
    data_dir: Path
    state_dir: Path
    cache_dir: Path

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def database(self) -> Path:
        return self.data_dir / "memorycloud.db"

    @property
    def secrets_file(self) -> Path:
        return self.config_dir / "secrets.json"

    @property
    def pid_file(self) -> Path:
        return self.state_dir / "daemon.pid"

    @property
    def runtime_file(self) -> Path:
        """Written by a running daemon: its pid, address and start time."""
        return self.state_dir / "daemon.json"

    @property
    def log_file(self) -> Path:
        return self.state_dir / "daemon.log"

    @property
    def access_log_file(self) -> Path:
        """Every request, when the ``access_log`` setting is on (daemon/logs.py)."""
        return self.state_dir / "access.log"

    def ensure(self) -> Paths:
        """Create the directories (user-only permissions) and return self."""
        for directory in (self.config_dir, self.data_dir, self.state_dir, self.cache_dir):
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self


def resolve_paths(environ: Mapping[str, str] | None = None) -> Paths:
    """Paths for this process: ``MEMORYCLOUD_HOME`` if set, else platformdirs."""
    environ = os.environ if environ is None else environ
    home = environ.get("MEMORYCLOUD_HOME")
    if home:
        root = Path(home).expanduser().resolve()
        return Paths(root / "config", root / "data", root / "state", root / "cache")
    return Paths(
        Path(platformdirs.user_config_dir(APP_NAME)),
        Path(platformdirs.user_data_dir(APP_NAME)),
        Path(platformdirs.user_state_dir(APP_NAME)),
        Path(platformdirs.user_cache_dir(APP_NAME)),
    )
