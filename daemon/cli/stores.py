"""``memorycloud stores ...`` and ``memorycloud mount``: Memory Stores from the command line."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from daemon.cli.context import add_command, client, emit
from daemon.mount import BASE, Mount
from daemon.owner_client import OwnerClient
from state.errors import MemoryCloudError
from state.paths import Paths


def resolve_store(owner: OwnerClient, name_or_id: str) -> str:
    """The id of the memory store named ``name_or_id`` (an id is taken as it is)."""
    if name_or_id.startswith("memstore_"):
        return name_or_id
    cursor = None
    while True:
        page = owner.get(BASE, limit=100, **({"cursor": cursor} if cursor else {}))
        for store in page["data"]:
            if store["name"] == name_or_id:
                return store["id"]
        if not page["has_more"]:
            raise MemoryCloudError(f"no memory store named {name_or_id!r}")
        cursor = page["next_cursor"]


def cmd_stores_list(args: argparse.Namespace, paths: Paths) -> int:
    stores = client(paths).get(BASE, limit=100)["data"]
    emit(
        args,
        stores,
        "\n".join(f"{s['id']}  {s['status']:<8} {s['entry_count']:>5} memories  {s['name']}" for s in stores)
        or "no memory stores",
    )
    return 0


def cmd_stores_create(args: argparse.Namespace, paths: Paths) -> int:
    store = client(paths).post(BASE, {"name": args.name, "description": args.description or ""})
    emit(args, store, f"created {store['id']} ({store['name']})")
    return 0


def cmd_mount(args: argparse.Namespace, paths: Paths) -> int:
    owner = client(paths)
    mount = Mount(owner, resolve_store(owner, args.store), Path(args.directory))
    if args.once:
        report = mount.sync()
        emit(args, report.to_dict(), _report_text(report.to_dict()))
        return 1 if report.conflicts else 0
    print(f"mounted {mount.store_id} at {mount.root}; syncing every {args.interval:g} s (Ctrl-C stops)")
    try:
        mount.run(args.interval, lambda report: print(_report_text(report.to_dict()), flush=True))
    except KeyboardInterrupt:
        return 0
    return 0


def _report_text(report: dict[str, list[str]]) -> str:
    lines = [f"{kind}: {', '.join(items)}" for kind, items in report.items() if items]
    return "\n".join(lines) or "in sync"


def add_commands(sub: Any) -> None:
    stores = sub.add_parser("stores", help="Memory Stores: list, create")
    ssub = stores.add_subparsers(title="stores commands", metavar="ACTION", required=True)
    add_command(ssub, "list", cmd_stores_list, "list memory stores")
    p = add_command(ssub, "create", cmd_stores_create, "create a memory store")
    p.add_argument("name")
    p.add_argument("--description")
    p = add_command(sub, "mount", cmd_mount, "materialize a memory store as files and keep both in step")
    p.add_argument("store", help="store id (memstore_...) or name")
    p.add_argument("directory")
    p.add_argument("--once", action="store_true", help="one sync pass, then exit")
    p.add_argument("--interval", type=float, default=2.0, help="seconds between passes (default 2)")
