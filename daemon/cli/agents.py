"""``memorycloud agent ...`` and ``memorycloud workspace ...``: identities, keys, pairing codes
and workspaces, straight in the store (they work with the daemon stopped)."""

from __future__ import annotations

import argparse
from typing import Any

from daemon.cli.context import add_command, emit, open_store
from state.errors import MemoryCloudError
from state.paths import Paths


def cmd_agent_add(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        with store.transaction():
            identity, key = store.identities.create_agent(
                args.name, args.runtime, scopes=args.scopes.split(",") if args.scopes else None
            )
    finally:
        store.close()
    data = {
        "id": identity["id"],
        "name": identity["name"],
        "runtime": identity["runtime"],
        "scopes": identity["scopes"],
        "workspace_id": identity["workspace_id"],
        "api_key": key,
    }
    emit(
        args,
        data,
        f"agent {identity['name']} ({identity['runtime']}) created: {identity['id']}\n"
        f"API key (shown once, store it in the agent's secret store):\n{key}",
    )
    return 0


def cmd_agent_list(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        agents = store.identities.agents()
    finally:
        store.close()
    rows = [
        {
            "id": a["id"],
            "name": a["name"],
            "runtime": a["runtime"],
            "scopes": a["scopes"],
            "created_at": a["created_at"],
            "disabled": bool(a["disabled_at"]),
        }
        for a in agents
    ]
    text = (
        "\n".join(
            f"{r['name']:<24} {r['runtime'] or '':<14} {r['id']}" + ("  (removed)" if r["disabled"] else "")
            for r in rows
        )
        or "no agents yet"
    )
    emit(args, rows, text)
    return 0


def cmd_agent_remove(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        match = [
            a
            for a in store.identities.agents()
            if args.agent in (a["id"], a["name"]) and not a["disabled_at"]
        ]
        if not match:
            raise MemoryCloudError(f"no active agent named or with id {args.agent!r}")
        with store.transaction():
            store.identities.disable_agent(match[0]["id"])
    finally:
        store.close()
    emit(args, {"removed": match[0]["id"]}, f"removed {match[0]['name']}: its keys no longer work")
    return 0


def cmd_agent_pair(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        with store.transaction():
            workspace = store.identities.find_workspace(args.workspace)["id"] if args.workspace else None
            code = store.identities.create_pairing_code(
                args.name, args.runtime, ttl_minutes=args.minutes, workspace_id=workspace
            )
    finally:
        store.close()
    emit(
        args,
        code,
        f"pairing code for {args.name} ({code['runtime']}): {code['pairing_code']}\n"
        f"valid until {code['expires_at']}, usable once. The agent sends it to"
        ' POST /api/agent/register as {"pairing_code": "..."}.',
    )
    return 0


def cmd_workspace_list(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        workspaces = store.identities.workspaces()
    finally:
        store.close()
    emit(
        args,
        workspaces,
        "\n".join(f"{w['id']}  {w['name']}{'  (default)' if w['is_default'] else ''}" for w in workspaces),
    )
    return 0


def cmd_workspace_add(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        with store.transaction():
            owner = store.identities.owner()
            workspace = store.identities.create_workspace(args.name, owner_id=owner["id"] if owner else None)
    finally:
        store.close()
    emit(
        args,
        workspace,
        f"created {workspace['id']} {workspace['name']!r}; pair agents into it with"
        f" `memorycloud agent pair --workspace {workspace['name']!r} ...`",
    )
    return 0


def add_commands(sub: Any) -> None:
    """Register ``agent add|list|remove|pair`` and ``workspace list|add``."""
    agent = sub.add_parser("agent", help="agent identities and keys")
    asub = agent.add_subparsers(title="agent commands", metavar="ACTION", required=True)
    p = add_command(asub, "add", cmd_agent_add, "create an agent and print its key once")
    p.add_argument("name")
    p.add_argument(
        "--runtime", required=True, help="codex, claude_code, gemini_cli, cursor, openclaw, generic"
    )
    p.add_argument(
        "--scopes",
        help="comma-separated (default: memory:read,memory:write,agent:sync,skill:install,catalog:read)",
    )
    add_command(asub, "list", cmd_agent_list, "list agents")
    p = add_command(asub, "remove", cmd_agent_remove, "disable an agent and revoke its keys")
    p.add_argument("agent", help="name or id")
    p = add_command(asub, "pair", cmd_agent_pair, "issue a one-time pairing code for agent self-registration")
    p.add_argument("--name", required=True)
    p.add_argument("--runtime", required=True)
    p.add_argument("--minutes", type=int, default=10, help="validity (default 10)")
    p.add_argument(
        "--workspace",
        help="workspace name or id the agent joins (default: the"
        " default workspace; a team daemon gives each person or team its own)",
    )

    workspace = sub.add_parser("workspace", help="workspaces (a team daemon has one per person or team)")
    wsub = workspace.add_subparsers(title="workspace commands", metavar="ACTION", required=True)
    add_command(wsub, "list", cmd_workspace_list, "list workspaces")
    p = add_command(wsub, "add", cmd_workspace_add, "create a workspace")
    p.add_argument("name")
