"""Numbered schema migrations, each applied in one transaction and recorded in the database.

A migration is a module ``mNNNN_name.py`` in this package with a ``SQL`` string. Add new
ones with the next number; never edit one that has shipped.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass

from state.db import Connection
from state.ids import now_iso


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def all_migrations() -> list[Migration]:
    """The migrations shipped with this package, in version order."""
    found: list[Migration] = []
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("m") or "_" not in info.name:
            continue
        number, _, name = info.name[1:].partition("_")
        if not number.isdigit():
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.append(Migration(int(number), name, module.SQL))
    found.sort(key=lambda m: m.version)
    return found


def applied_versions(conn: Connection) -> set[int]:
    conn.execute(
        "create table if not exists schema_migrations ("
        " version integer primary key, name text not null, applied_at text not null)"
    )
    return {row[0] for row in conn.execute("select version from schema_migrations")}


def migrate(conn: Connection) -> list[int]:
    """Apply every pending migration; return the versions applied now."""
    done = applied_versions(conn)
    applied: list[int] = []
    for migration in all_migrations():
        if migration.version in done:
            continue
        # executescript runs the whole script; wrapping it in BEGIN/COMMIT makes the
        # migration and its bookkeeping row one transaction.
        script = (
            "begin immediate;\n"
            + migration.sql
            + "\ninsert into schema_migrations (version, name, applied_at) values "
            + f"({migration.version}, '{migration.name}', '{now_iso()}');\ncommit;"
        )
        try:
            conn.executescript(script)
        except Exception:
            if conn.in_transaction:
                conn.execute("rollback")
            raise
        applied.append(migration.version)
    return applied
