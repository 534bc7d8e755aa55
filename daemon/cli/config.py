"""``memorycloud config show|set``: the effective settings, and one change to config.toml."""

from __future__ import annotations

import argparse
from typing import Any

from daemon.cli.context import add_command, emit
from state.config import SECTIONS, load_settings, set_setting
from state.paths import Paths


def cmd_config_show(args: argparse.Namespace, paths: Paths) -> int:
    settings = load_settings(paths.config_file)
    data = {name: getattr(settings, name) for name in SECTIONS}
    data = {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}
    emit(args, {"file": str(paths.config_file), "settings": data},
         f"# {paths.config_file}\n" + "\n".join(f"{k} = {v!r}" for k, v in data.items()))
    return 0


def cmd_config_set(args: argparse.Namespace, paths: Paths) -> int:
    value = set_setting(paths.config_file, args.key, args.value)
    emit(args, {args.key: list(value) if isinstance(value, tuple) else value},
         f"{args.key} = {value!r} (restart the daemon to apply)")
    return 0


def add_commands(sub: Any) -> None:
    """Register ``config show|set``."""
    config = sub.add_parser("config", help="show or change settings")
    csub = config.add_subparsers(title="config commands", metavar="ACTION", required=True)
    add_command(csub, "show", cmd_config_show, "print the effective settings")
    p = add_command(csub, "set", cmd_config_set, "change one setting in config.toml (comments are kept)")
    p.add_argument("key", choices=sorted(SECTIONS))
    p.add_argument("value")
