"""What every ``memorycloud`` command shares: output, settings, the store, the daemon client,
and how a command is registered on the parser.

The command modules import from here and from nowhere else in ``daemon.cli``, except where
one group uses another's public function (``connect`` registers the MCP server, ``setup``
asks ``service`` for its hint); ``daemon/cli/__init__.py`` imports them all to build the
parser. tests/test_architecture.py keeps it so: no cycles, no private names across modules.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from daemon.owner_client import OwnerClient
from daemon.process import find_running, start_detached
from state.config import Settings, load_settings
from state.errors import MemoryCloudError
from state.paths import Paths

if TYPE_CHECKING:
    from state.store import Store

# Every command: (parsed arguments, this installation's paths) -> exit code.
Command = Callable[[argparse.Namespace, Paths], int]


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """Print ``data`` as JSON with ``--json``, else the human ``text``."""
    print(json.dumps(data, ensure_ascii=False, indent=2) if getattr(args, "json", False) else text)


def settings(args: argparse.Namespace, paths: Paths) -> Settings:
    """The config file's settings with the command line's ``--host/--port/--role/--database``
    on top."""
    return load_settings(paths.config_file).with_overrides(
        host=getattr(args, "host", None),
        port=getattr(args, "port", None),
        role=getattr(args, "role", None),
        database_url=getattr(args, "database", None),
    )


def open_store(paths: Paths) -> Store:
    """The store, opened by the CLI itself (commands that work without the daemon), plus the
    first-start setup (owner key, default workspace): the configured one (a cloud role's
    PostgreSQL database from ``database_url`` or MEMORYCLOUD_DATABASE_URL, else the file)."""
    # Imported here: most commands only talk to the daemon and need none of the store's code.
    from state.secrets import open_secret_store
    from state.setup import ensure_installation
    from state.store import open_store as open_configured_store

    store = open_configured_store(paths, load_settings(paths.config_file))
    ensure_installation(store, open_secret_store(paths.secrets_file))
    return store


def client(paths: Paths, *, start: bool = False) -> OwnerClient:
    """The owner's client to this installation's running daemon; ``start``: start it first
    when none runs (else a clear error)."""
    running = find_running(paths)
    if running is None:
        if not start:
            raise MemoryCloudError("the daemon is not running: start it with `memorycloud daemon start`")
        print("starting the daemon...", file=sys.stderr)
        running = start_detached(paths, load_settings(paths.config_file))
    return OwnerClient.for_installation(paths, running.url)


def add_command(
    parent: Any, name: str, func: Command, help_text: str, *, json_flag: bool = True, address: bool = False
) -> argparse.ArgumentParser:
    """Add the subcommand ``name`` running ``func`` to the subparsers ``parent``; ``json_flag``
    gives it ``--json``, ``address`` the daemon's ``--host/--port/--role``."""
    p = parent.add_parser(name, help=help_text, description=help_text)
    p.set_defaults(func=func)
    if json_flag:
        p.add_argument("--json", action="store_true", help="print JSON for scripts")
    if address:
        p.add_argument("--host", help="address to listen on (default from config: 127.0.0.1)")
        p.add_argument("--port", type=int, help="port (default from config: 8517)")
        p.add_argument(
            "--role",
            choices=("local", "cloud"),
            help="local (default): this machine's agents; cloud: serve a team's"
            " daemons as their upstream (see README, 'Team upstream')",
        )
        p.add_argument(
            "--database",
            metavar="URL",
            help="the cloud role's PostgreSQL database, postgresql://USER@HOST/DB (default from"
            " config or MEMORYCLOUD_DATABASE_URL: the SQLite file); the password comes from"
            " PGPASSWORD or ~/.pgpass",
        )
    return p
