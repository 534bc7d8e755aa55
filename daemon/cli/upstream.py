"""``memorycloud upstream ...``: connect this daemon to a MemoryCloud upstream and watch sync."""

from __future__ import annotations

import argparse
from typing import Any

from daemon.cli.context import add_command, client, emit
from state.paths import Paths


def _pull(pull: dict[str, Any]) -> str:
    if pull["via"] == "sync_extension":
        how = "as they happen (following)" if pull.get("following") else "at each sync round"
        return f"changes feed, cursor {pull['cursor']}, {how}"
    if pull.get("unavailable"):
        return f"none: {pull['unavailable']}"
    text = f"read endpoints, up to {pull.get('mark') or 'nothing yet'}"
    if pull.get("retry_at"):
        text += f", backing off until {pull['retry_at']}"
    if pull.get("gap"):
        text += f"; possible gap at {pull['gap']['at']}: {pull['gap']['reason']}"
    return text


def describe(status: dict[str, Any]) -> str:
    if not status.get("connected"):
        return "no upstream connected (memorycloud upstream connect URL)"
    waiting = ", ".join(f"{k} {v}" for k, v in status["outbox"].items() if v) or "nothing waiting"
    finished = ", ".join(f"{k} {v}" for k, v in status["finished"].items() if v) or "none yet"
    lines = [
        f"upstream      {status['url']} as {status['handle']} (key in {status['credential_ref']})",
        f"runtime       {status.get('upstream_runtime_version') or 'unknown'}"
        f"{'' if status['sync_extension'] else '  (no sync extension: edits stay local)'}",
        f"backlog       {status['backlog']} change(s) waiting ({waiting}); finished: {finished}",
        f"pull          {_pull(status['pull'])}",
        f"last success  {status.get('last_success_at') or 'never'}",
    ]
    if status.get("syncing"):
        lines.append("round         running now")
    elif status.get("sync_scheduled_at"):
        lines.append(f"next round    {status['sync_scheduled_at']} (after local changes)")
    if status.get("last_error"):
        lines.append(f"last error    {status['last_error']} ({status['last_error_at']})")
    for update in status.get("pending_updates", []):
        lines.append(
            f"update        {update.get('update_id') or update.get('id')}"
            f" {update.get('severity')}: {update.get('title')}"
            "  (memorycloud upstream ack)"
        )
    for entry in status.get("interrupted", []):
        lines.append(
            f"interrupted   #{entry['seq']} {entry['title']!r} (sync intent"
            f" {entry['upstream_sync_intent_id']}): resumes after the ack"
        )
    return "\n".join(lines)


def cmd_connect(args: argparse.Namespace, paths: Paths) -> int:
    body: dict[str, Any] = {"url": args.url, "backfill": not args.no_backfill}
    for name in ("pairing_code", "handle"):
        if getattr(args, name):
            body[name] = getattr(args, name)
    if args.api_key_stdin:
        import sys

        body["api_key"] = sys.stdin.readline().strip()
    status = client(paths).post("/api/local/upstream/connect", body)
    emit(
        args, status, f"connected; {status['queued']} existing record(s) queued to send\n" + describe(status)
    )
    return 0


def cmd_status(args: argparse.Namespace, paths: Paths) -> int:
    status = client(paths).get("/api/local/upstream")
    emit(args, status, describe(status))
    return 0


def cmd_sync(args: argparse.Namespace, paths: Paths) -> int:
    status = client(paths).post("/api/local/upstream/sync")
    emit(args, status, f"{status['outcome']}\n{describe(status)}")
    return 0


def cmd_ack(args: argparse.Namespace, paths: Paths) -> int:
    body = {"update_ids": args.update_ids} if args.update_ids else {}
    status = client(paths).post("/api/local/upstream/updates/ack", body)
    emit(args, status, "acked; interrupted writes resume at the next sync\n" + describe(status))
    return 0


def cmd_discard(args: argparse.Namespace, paths: Paths) -> int:
    entry = client(paths).post(f"/api/local/upstream/outbox/{args.seq}/discard")
    emit(args, entry, f"discarded #{entry['seq']}; the local record is kept")
    return 0


def cmd_disconnect(args: argparse.Namespace, paths: Paths) -> int:
    result = client(paths).post("/api/local/upstream/disconnect")
    emit(
        args,
        result,
        f"disconnected; {result['dropped_backlog']} unsent change(s) dropped from"
        " the outbox, local memory kept",
    )
    return 0


def add_commands(sub: Any) -> None:
    upstream = sub.add_parser("upstream", help="sync with a MemoryCloud upstream (service or team daemon)")
    usub = upstream.add_subparsers(title="upstream commands", metavar="ACTION", required=True)
    p = add_command(usub, "connect", cmd_connect, "register on an upstream and start syncing")
    p.add_argument("url", help="e.g. https://memory.example.com or http://10.0.0.5:8517")
    p.add_argument("--pairing-code", help="from the upstream's owner (`memorycloud agent pair` there)")
    p.add_argument("--handle", help="this daemon's name on the upstream (default: companion-HOSTNAME)")
    p.add_argument(
        "--api-key-stdin",
        action="store_true",
        help="reuse an existing upstream key, read from stdin (never pass keys as arguments)",
    )
    p.add_argument("--no-backfill", action="store_true", help="do not send the memory kept so far")
    add_command(usub, "status", cmd_status, "connection, backlog, last sync, pending updates")
    add_command(usub, "sync", cmd_sync, "run one sync round now")
    p = add_command(usub, "ack", cmd_ack, "ack the upstream's pending updates after applying them")
    p.add_argument("update_ids", nargs="*", help="update ids (default: every pending one)")
    p = add_command(usub, "discard", cmd_discard, "give up an interrupted push (the local record stays)")
    p.add_argument("seq", type=int, help="outbox entry number (see status)")
    add_command(usub, "disconnect", cmd_disconnect, "stop syncing; the key is removed, local memory stays")
