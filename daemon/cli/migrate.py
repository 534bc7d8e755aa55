"""``memorycloud migrate-store --to postgresql://...``: move a (team server's) SQLite store onto
PostgreSQL, resumably, and verify it (state/pg/copy_store.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from daemon.cli.context import add_command, emit
from daemon.process import find_running
from state.config import load_settings
from state.errors import MemoryCloudError
from state.paths import Paths


def cmd_migrate_store(args: argparse.Namespace, paths: Paths) -> int:
    from state.pg.copy_store import StoreCopy, TableCopy
    from state.pg.engine import database_password, masked
    from state.pg.store import PgStore
    from state.store import Store

    source_path = Path(args.source) if args.source else paths.database
    running = find_running(paths)
    if running is not None and not args.source:
        raise MemoryCloudError(
            f"the daemon is running (pid {running.pid}) and writing {source_path}: stop it first"
            " with `memorycloud daemon stop`, then run migrate-store"
        )
    if not source_path.exists():
        raise MemoryCloudError(f"no SQLite store at {source_path} (--from names another file)")
    settings = load_settings(paths.config_file)
    source = Store.open(source_path, settings)
    try:
        target = PgStore.open(args.to, settings, database_password(args.to, paths.secrets_file))
        try:
            shown: dict[str, int] = {}

            def progress(copy: TableCopy) -> None:
                if copy.target_rows is None and shown.get(copy.table) != copy.copied and copy.source_rows:
                    shown[copy.table] = copy.copied
                    print(
                        f"copying {copy.table}: {copy.copied:,} of {copy.source_rows:,} rows", file=sys.stderr
                    )

            copies = StoreCopy(source, target).run(progress)
        finally:
            target.close()
    finally:
        source.close()
    failed = [c for c in copies if not c.verified]
    report: dict[str, Any] = {
        "from": str(source_path),
        "to": masked(args.to),
        "verified": not failed,
        "tables": [
            {
                "table": c.table,
                "source_rows": c.source_rows,
                "target_rows": c.target_rows,
                "checksum_matches": c.source_checksum == c.target_checksum,
            }
            for c in copies
        ],
    }
    lines = [f"{'table':<26} {'rows':>10} {'copied':>10}  verified"]
    lines += [
        f"{c.table:<26} {c.source_rows:>10,} {c.target_rows or 0:>10,}  {'yes' if c.verified else 'NO'}"
        for c in copies
    ]
    if failed:
        lines.append(
            f"{len(failed)} table(s) differ: {', '.join(c.table for c in failed)}. Nothing was changed in"
            f" {source_path}; run migrate-store again to resume, or copy into an empty database."
        )
    else:
        lines.append(
            f"every table copied and verified (counts and checksums). Next: `memorycloud config set"
            f" role cloud`, `memorycloud config set database_url {masked(args.to)}`, then start the daemon."
        )
    emit(args, report, "\n".join(lines))
    return 1 if failed else 0


def add_commands(sub: Any) -> None:
    """Register ``migrate-store``."""
    p = add_command(
        sub,
        "migrate-store",
        cmd_migrate_store,
        "copy this store (a team server's SQLite file) into a PostgreSQL database, resumably,"
        " then verify every table by counts and checksums",
    )
    p.add_argument(
        "--to",
        required=True,
        metavar="URL",
        help="the PostgreSQL database, postgresql://USER@HOST/DB (the password from PGPASSWORD or"
        " ~/.pgpass); empty, or holding an earlier run of this copy (it resumes)",
    )
    p.add_argument(
        "--from",
        dest="source",
        metavar="FILE",
        help="another SQLite store file (default: this installation's, with its daemon stopped)",
    )
