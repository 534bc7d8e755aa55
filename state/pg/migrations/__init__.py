"""Numbered migrations of the PostgreSQL engine: ``mNNNN_name.sql`` files applied in order,
each in one transaction with its row in ``schema_migrations``. Several daemon processes may
start at once on one database: the first takes an advisory lock and migrates, the others
wait for it and find nothing left to do. A database migrated by a newer release (a version
this code does not have) is refused, with what to do, before anything is written."""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

from state.errors import StoreUnavailable

_NAME = re.compile(r"^m(\d{4})_(\w+)\.sql$")
# pg_advisory_xact_lock's key for "migrating": any fixed number; this one spells MCMG.
MIGRATION_LOCK = 0x4D434D47


def known() -> list[tuple[int, str, str]]:
    """(version, name, SQL) of every migration shipped, in order."""
    found = []
    for entry in resources.files(__package__).iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8")))
    return sorted(found)


def migrate(conn: Any) -> list[int]:
    """Apply the migrations the database lacks; the versions applied now."""
    shipped = known()
    newest_known = shipped[-1][0] if shipped else 0
    applied_now: list[int] = []
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute(
            "create table if not exists schema_migrations (version integer primary key,"
            " name text not null, applied_at timestamptz not null default now())"
        )
        applied = {row[0] for row in conn.execute("select version from schema_migrations")}
        newer = sorted(v for v in applied if v > newest_known)
        if newer:
            raise StoreUnavailable(
                f"the PostgreSQL database was migrated by a newer release (schema version {newer[-1]};"
                f" this one knows up to {newest_known}): upgrade memorycloud-companion on this"
                " machine, or point it at another database"
            )
        conn.execute("create extension if not exists vector")
        for version, name, sql in shipped:
            if version in applied:
                continue
            conn.execute(sql)
            conn.execute("insert into schema_migrations (version, name) values (%s, %s)", (version, name))
            applied_now.append(version)
    return applied_now


def schema_state(conn: Any) -> dict[str, Any]:
    """What a database holds, without changing it: the versions applied, those this code
    would apply, and those it does not know (a newer release's)."""
    shipped = [version for version, _, _ in known()]
    exists = conn.execute("select to_regclass('schema_migrations') is not null").fetchone()[0]
    applied = (
        sorted(row[0] for row in conn.execute("select version from schema_migrations")) if exists else []
    )
    return {
        "applied": applied,
        "pending": [v for v in shipped if v not in applied],
        "unknown": [v for v in applied if v not in shipped],
        "known": shipped,
    }
