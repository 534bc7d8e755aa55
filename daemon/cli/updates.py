"""``memorycloud updates ...`` and ``memorycloud intents``: platform updates and held-back writes."""

from __future__ import annotations

import argparse
from typing import Any

from daemon.cli.context import add_command, client, emit
from state.paths import Paths


def cmd_updates_list(args: argparse.Namespace, paths: Paths) -> int:
    data = client(paths).get("/api/local/updates")
    lines = [
        f"{u['update_id']}  {u['severity']:<11} {u['version']:<36} {u['title']}" for u in data["updates"]
    ]
    for agent in data["agents"]:
        lines.append(f"agent {agent['name']}: " + (", ".join(agent["pending"]) or "up to date"))
    emit(args, data, "\n".join(lines) or "no updates")
    return 0


def cmd_updates_publish(args: argparse.Namespace, paths: Paths) -> int:
    body = {
        "title": args.title,
        "summary": args.summary,
        "severity": args.severity,
        "requires_repull": args.repull or [],
        "next_actions": args.action or [],
    }
    if args.version:
        body["version"] = args.version
    update = client(paths).post("/api/local/updates", body)
    emit(
        args,
        update,
        f"published {update['update_id']} ({update['severity']}, version"
        f" {update['version']}): agents see it on their next check",
    )
    return 0


def cmd_updates_ack(args: argparse.Namespace, paths: Paths) -> int:
    body: dict[str, Any] = {"update_ids": args.update_ids}
    if args.seen_version:
        body["seen_version"] = args.seen_version
    result = client(paths).post(f"/api/local/agents/{args.agent}/updates/ack", body)
    acked = result.get("acked_now", [])
    remaining = [u["update_id"] for u in result["pending_updates"]]
    emit(
        args,
        result,
        f"acked for {args.agent}: {', '.join(acked) or 'nothing new'}"
        + (f"; still pending: {', '.join(remaining)}" if remaining else "; up to date"),
    )
    return 0


def cmd_intents(args: argparse.Namespace, paths: Paths) -> int:
    params = {"status": args.status} if args.status else {}
    intents = client(paths).get("/api/local/sync-intents", **params)["sync_intents"]
    text = "\n".join(
        f"{i['sync_intent_id']}  {i['status']:<9} {i['endpoint']:<24} importance"
        f" {i['importance']}  expires {i['expires_at']}"
        for i in intents
    )
    emit(args, intents, text or "no sync intents")
    return 0


def add_commands(sub: Any) -> None:
    updates = sub.add_parser("updates", help="platform updates: list, publish, ack for an agent")
    usub = updates.add_subparsers(title="updates commands", metavar="ACTION", required=True)
    add_command(usub, "list", cmd_updates_list, "known updates and what each agent still has pending")
    p = add_command(usub, "publish", cmd_updates_publish, "publish an update for your agents")
    p.add_argument("--title", required=True)
    p.add_argument("--summary", required=True, help="what changed and what agents must do")
    p.add_argument(
        "--severity",
        choices=("required", "recommended"),
        default="recommended",
        help="required updates hold back agents' important writes until acked",
    )
    p.add_argument("--version", help="this update's own version (default: dated)")
    p.add_argument("--repull", action="append", metavar="SKILL", help="a skill agents must re-pull")
    p.add_argument("--action", action="append", metavar="TEXT", help="a next action for agents")
    p = add_command(usub, "ack", cmd_updates_ack, "ack updates for an agent (all pending ones by default)")
    p.add_argument("--agent", required=True, help="agent name or id")
    p.add_argument("update_ids", nargs="*", help="update ids (default: every pending one)")
    p.add_argument("--seen-version", help="the runtime version the agent now runs")
    p = add_command(sub, "intents", cmd_intents, "writes held back by the update gate (sync intents)")
    p.add_argument("--status", choices=("blocked", "resumed", "discarded", "expired"))
