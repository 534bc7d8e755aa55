"""The store opened by the CLI itself (commands that work without the daemon), with the
first-start setup. A module of its own so that the CLI's command modules can open it without
importing daemon.cli (which imports them)."""

from __future__ import annotations

from state.config import load_settings
from state.paths import Paths
from state.store import Store


def open_store(paths: Paths) -> Store:
    """The store plus first-start setup (owner key, default workspace)."""
    from state.secrets import open_secret_store
    from state.setup import ensure_installation

    store = Store.open(paths.database, load_settings(paths.config_file))
    ensure_installation(store, open_secret_store(paths.secrets_file))
    return store
