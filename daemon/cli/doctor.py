"""``memorycloud doctor [--repair]``: check the installation and the database, and rebuild the
derived search indexes.

The checks: SQLite and sqlite-vec versions, the secrets backend, the paths, SQLite's
``integrity_check`` of the database file, and whether the FTS and vector indexes agree with
the memory records (state/doctor.py). It also says, for every installed startup item, whether
its hook has run yet, or what the person still has to do (informational: no failure). Exit code 0 when everything is sound, 1 when a check
fails. A rebuild of the search index in progress (after an upgrade, state/rebuild.py) is
reported, not a failure. ``--repair`` rebuilds both indexes from the records, to the end:
the same rebuild the daemon runs in the background, at once; it refuses while the daemon
runs (two processes would share the batches' write lock for as long as it takes) and never
touches a file whose integrity check fails outside the search index: that needs a backup,
not a rebuild.

``--database URL`` checks a PostgreSQL database for a team server instead (issue #18): the
connection, the server's and pgvector's versions, which of this release's migrations the
database holds (one a newer release made is a problem), and how its search index stands (a
re-index under way or due at the next start: reported, not a failure). It writes nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from daemon import __version__
from daemon.cli.context import add_command, emit, open_store
from daemon.process import find_running
from state.errors import MemoryCloudError
from state.paths import Paths

# The store's modules are imported inside the commands: every `memorycloud` call loads this
# module to build its parser, and only `doctor` needs them.


def _integrity(paths: Paths) -> list[str]:
    from state.db import connect
    from state.doctor import integrity_check

    if not paths.database.exists():
        return ["ok"]  # created on first start
    try:
        conn = connect(paths.database, readonly=True)
    except MemoryCloudError as exc:
        return [exc.message]
    try:
        return integrity_check(conn)
    except Exception as exc:  # so damaged that the check itself stops
        return [f"integrity_check could not finish: {exc}"]
    finally:
        conn.close()


def startup_items(store: Any) -> list[dict[str, Any]]:
    """Each installed plan and whether its hook has run (daemon/runtime/hook_runs.py)."""
    from daemon.runtime.hook_runs import HookRunService

    runs = HookRunService(store)
    return [
        {
            "plan_id": p["id"],
            "runtime": p["runtime"],
            "repo_root": p["repo_root"],
            "status": p["status"],
            "hook": runs.describe(p),
        }
        for p in store.startup.active_plans()
    ]


def check_postgres(url: str, secrets_file: Path) -> tuple[dict[str, Any], list[str]]:
    """A team server's PostgreSQL, read only: can we connect, are the server and pgvector new
    enough, and which migrations the database holds. (report, problems)."""
    from state.errors import StoreUnavailable
    from state.pg.engine import check_server, connect, database_password, masked, versions
    from state.pg.migrations import schema_state
    from state.pg.reindex import index_status

    report: dict[str, Any] = {"database": masked(url)}
    problems: list[str] = []
    # StoreUnavailable (the password masked) when it cannot
    conn = connect(url, password=database_password(url, secrets_file))
    try:
        report.update(versions(conn))
        try:
            check_server(conn)
        except StoreUnavailable as exc:
            problems.append(exc.message)
        schema = schema_state(conn)
        # Only on a database this release has migrated: before, its tables may not be there.
        report["search_index"] = index_status(conn) if schema["applied"] and not schema["pending"] else None
    finally:
        conn.close()
    report["schema"] = schema
    if schema["unknown"]:
        problems.append(
            f"the database was migrated by a newer release (versions {schema['unknown']}): upgrade"
            " memorycloud-companion on this machine"
        )
    report["problems"] = problems
    return report, problems


def _cmd_doctor_postgres(args: argparse.Namespace, paths: Paths) -> int:
    report, problems = check_postgres(args.database, paths.secrets_file)
    schema = report["schema"]
    lines = [
        f"{'database':<16}  {report['database']}",
        f"{'postgresql':<16}  {report['postgresql']}",
        f"{'pgvector':<16}  {report['pgvector'] or 'not created in this database yet (the first start creates it)'}",
        f"{'schema':<16}  "
        + (
            f"{len(schema['applied'])} of {len(schema['known'])} migrations applied"
            + (f"; {len(schema['pending'])} to apply at the first start" if schema["pending"] else "")
        ),
        *(
            [f"{'search index':<16}  {report['search_index']['text'].removeprefix('search index: ')}"]
            if report["search_index"]
            else []
        ),
        *(f"{'PROBLEM':<16}  {problem}" for problem in problems),
    ]
    emit(args, report, "\n".join(lines))
    return 1 if problems else 0


def cmd_doctor(args: argparse.Namespace, paths: Paths) -> int:
    if args.database:
        if args.repair:
            raise MemoryCloudError(
                "--repair rebuilds this machine's SQLite store; it does not go with --database"
            )
        return _cmd_doctor_postgres(args, paths)
    from state.doctor import check_indexes, integrity_check, only_search_index_damaged, rebuild_indexes
    from state.secrets import open_secret_store

    running = find_running(paths)
    if args.repair and running is not None:
        raise MemoryCloudError(
            f"the daemon is running (pid {running.pid}): stop it first with"
            " `memorycloud daemon stop`, then run `memorycloud doctor --repair`"
        )
    integrity = _integrity(paths)
    report: dict[str, Any] = {"version": __version__, "python": sys.version.split()[0]}
    if integrity != ["ok"] and not only_search_index_damaged(integrity):
        report.update(
            integrity=integrity[:20],
            database=str(paths.database),
            advice="the database file is damaged: the daemon will not use it. Keep a copy,"
            " then restore a backup; --repair only rebuilds search indexes.",
        )
        emit(
            args,
            report,
            "\n".join([f"integrity  FAILED ({paths.database})", *integrity[:20], report["advice"]]),
        )
        return 1
    store = open_store(paths)
    try:
        repaired = None
        if args.repair:
            repaired = rebuild_indexes(store)
            integrity = integrity_check(store.conn)
        indexes = check_indexes(store.conn)
        report.update(
            {
                **store.versions(),
                "secrets_backend": open_secret_store(paths.secrets_file).describe(),
                "embedder": f"{store.embedder.name} ({store.embedder.dimension} dimensions)",
                "config_file": str(paths.config_file),
                "database": str(paths.database),
                "log_file": str(paths.log_file),
                "memories": store.memories.count(),
                # A damaged FTS index only: its own report below says so, and --repair fixes it.
                "integrity": "ok" if integrity == ["ok"] else "search index damaged",
                "search_index": store.index_status(),
                "indexes": {name: index.describe() for name, index in indexes.items()},
                "startup_items": startup_items(store),
            }
        )
    finally:
        store.close()
    if repaired is not None:
        report["repaired"] = repaired
    report["daemon"] = f"running (pid {running.pid}, {running.url})" if running else "not running"
    healthy = all(index.ok for index in indexes.values())
    lines = [
        f"{k:<16}  {v}"
        for k, v in report.items()
        if k not in ("indexes", "repaired", "startup_items", "search_index")
    ]
    rebuild = report["search_index"]
    lines.append(
        f"{'search index':<16}  {rebuild['text'].removeprefix('search index: ')}"
        + (
            " (the daemon continues it; `memorycloud doctor --repair` with the daemon stopped"
            " finishes it now)"
            if rebuild["state"] == "rebuilding"
            else ""
        )
    )
    for name, index in indexes.items():
        d = index.describe()
        lines.append(
            f"{'index ' + name:<16}  "
            + (
                "rebuilding (checked once it is complete)"
                if index.rebuilding
                else f"ok ({d['indexed']} rows)"
                if index.ok
                else f"DISAGREES: {d['missing']} missing, {d['stray']} stray, {d['stale']} stale"
                + (f"; {'; '.join(d['errors'])}" if d["errors"] else "")
                + " (run `memorycloud doctor --repair` with the daemon stopped)"
            )
        )
    if repaired is not None:
        lines.append(f"{'repaired':<16}  rebuilt {repaired['fts']} index entries")
    for item in report["startup_items"]:
        lines.append(
            f"{'startup item':<16}  {item['plan_id']} {item['runtime']} in"
            f" {item['repo_root']}: {item['hook']['text']}"
        )
    emit(args, report, "\n".join(lines))
    return 0 if healthy else 1


def add_commands(sub: Any) -> None:
    """Register ``doctor [--repair]``."""
    p = add_command(
        sub, "doctor", cmd_doctor, "check the installation, the database file and its search indexes"
    )
    p.add_argument(
        "--repair",
        action="store_true",
        help="rebuild the FTS and vector indexes from the records (daemon stopped)",
    )
    p.add_argument(
        "--database",
        metavar="URL",
        help="check a PostgreSQL database for a team server instead (postgresql://USER@HOST/DB;"
        " the password from PGPASSWORD or ~/.pgpass): connection, versions, pgvector, schema."
        " Reads only",
    )
