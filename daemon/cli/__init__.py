"""``memorycloud``: run the daemon, manage agents, check the installation, open the TUI.

Every command that prints data accepts ``--json`` for scripts. Errors go to stderr with
exit code 1 (2 for bad usage, as argparse does).

One module per command group; what they share (output, settings, the store, the owner's
client to the daemon, registering a command) is in ``daemon/cli/context.py``. This module only
builds the parser from the groups and runs the chosen command.
"""

from __future__ import annotations

import argparse
import sys

from daemon import __version__
from daemon.cli import (
    agents,
    config,
    doctor,
    lifecycle,
    mcp,
    migrate,
    service,
    startup,
    stores,
    updates,
    upstream,
)
from state.errors import MemoryCloudError
from state.paths import resolve_paths


def build_parser() -> argparse.ArgumentParser:
    """The whole ``memorycloud`` parser (the groups in the order ``--help`` lists them)."""
    parser = argparse.ArgumentParser(
        prog="memorycloud",
        description="MemoryCloud Companion: local memory for AI agents (AMP on localhost).\n"
        "With no command: start the daemon if needed and open the TUI.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memorycloud {__version__}")
    parser.set_defaults(func=lifecycle.cmd_tui)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for group in (
        lifecycle,
        agents,
        doctor,
        config,
        startup,
        updates,
        stores,
        upstream,
        service,
        mcp,
        migrate,
    ):
        group.add_commands(sub)
    lifecycle.add_tui_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``memorycloud ARGV``; the exit code (domain errors: their message, exit 1)."""
    args = build_parser().parse_args(argv)
    paths = resolve_paths()
    try:
        return int(args.func(args, paths) or 0)
    except MemoryCloudError as exc:
        print(f"memorycloud: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
