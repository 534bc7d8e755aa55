"""``memorycloud config show|set|describe``: the effective settings, one change to
config.toml, and what every setting means. All three read the settings model
(state/settings.py), so a new setting appears here without a word in this file."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from daemon.cli.context import add_command, emit
from state.config import SECTIONS, environment_overrides, environment_variable, load_settings, set_setting
from state.errors import InvalidRequest
from state.paths import Paths
from state.settings import describe_settings


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def cmd_config_show(args: argparse.Namespace, paths: Paths) -> int:
    settings = load_settings(paths.config_file)
    data = {name: _plain(getattr(settings, name)) for name in SECTIONS}
    overridden = {name: environment_variable(name) for name in environment_overrides()}
    text = f"# {paths.config_file}\n" + "\n".join(
        f"{k} = {v!r}" + (f"  # from {overridden[k]}" if k in overridden else "") for k, v in data.items()
    )
    emit(args, {"file": str(paths.config_file), "settings": data, "environment": overridden}, text)
    return 0


def cmd_config_set(args: argparse.Namespace, paths: Paths) -> int:
    value = set_setting(paths.config_file, args.key, args.value)
    note = "restart the daemon to apply"
    if args.key in environment_overrides():
        note += f"; {environment_variable(args.key)} overrides it while it is set"
    emit(args, {args.key: _plain(value)}, f"{args.key} = {value!r} ({note})")
    return 0


def cmd_config_describe(args: argparse.Namespace, paths: Paths) -> int:
    rows = describe_settings()
    lines = []
    for row in rows:
        facts = [row["type"], f"default {row['default']!r}"]
        facts += [
            row[k] if k == "bounds" else "one of " + ", ".join(map(repr, row[k]))
            for k in ("bounds", "choices")
            if k in row
        ]
        lines.append(
            f"[{row['section']}] {row['name']} ({'; '.join(facts)};"
            f" env {environment_variable(row['name'])})\n    {row['description']}"
        )
    emit(args, {"settings": rows}, "\n".join(lines))
    return 0


def cmd_config_set_database_password(args: argparse.Namespace, paths: Paths) -> int:
    """The team server's PostgreSQL password into the secret store (never config.toml): read
    without echo at a terminal, else the first line of stdin (for scripts)."""
    from state.pg.engine import DATABASE_PASSWORD_SECRET
    from state.secrets import open_secret_store

    secrets = open_secret_store(paths.secrets_file)
    if args.clear:
        secrets.delete(DATABASE_PASSWORD_SECRET)
        emit(args, {"stored": False}, f"database password removed from {secrets.describe()}")
        return 0
    if sys.stdin.isatty():
        password = getpass.getpass("PostgreSQL password (not shown): ")
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        raise InvalidRequest("no password given: type it at the prompt, or pipe it on stdin")
    secrets.set(DATABASE_PASSWORD_SECRET, password)
    emit(
        args,
        {"stored": True, "where": secrets.describe()},
        f"database password stored in {secrets.describe()}: used when neither database_url nor"
        " PGPASSWORD has one (before ~/.pgpass); restart the daemon to apply",
    )
    return 0


def add_commands(sub: Any) -> None:
    """Register ``config show|set|describe``."""
    config = sub.add_parser("config", help="show or change settings")
    csub = config.add_subparsers(title="config commands", metavar="ACTION", required=True)
    add_command(csub, "show", cmd_config_show, "print the effective settings")
    p = add_command(csub, "set", cmd_config_set, "change one setting in config.toml (comments are kept)")
    p.add_argument("key", choices=sorted(SECTIONS))
    p.add_argument("value")
    p = add_command(
        csub,
        "set-database-password",
        cmd_config_set_database_password,
        "store the team server's PostgreSQL password in the keyring (else the secrets file),"
        " never in config.toml: typed at a prompt, or the first line of stdin",
    )
    p.add_argument("--clear", action="store_true", help="remove the stored password")
    add_command(
        csub,
        "describe",
        cmd_config_describe,
        "every setting: section, type, default, bounds, meaning, environment variable",
    )
