"""``memorycloud``: run the daemon, manage agents, check the installation, open the TUI.

Every command that prints data accepts ``--json`` for scripts. Errors go to stderr with
exit code 1 (2 for bad usage, as argparse does).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from typing import Any, Callable

from daemon import (__version__, cli_doctor, cli_mcp, cli_service, cli_setup, cli_stores, cli_updates,
                    cli_upstream)
from daemon.local_store import open_store
from daemon.process import find_running, start_detached, stop_running
from state.config import SECTIONS, load_settings, set_setting
from state.errors import MemoryCloudError
from state.paths import Paths, resolve_paths


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2) if getattr(args, "json", False) else text)


def _settings(args: argparse.Namespace, paths: Paths):
    return load_settings(paths.config_file).with_overrides(
        host=getattr(args, "host", None), port=getattr(args, "port", None),
        role=getattr(args, "role", None))


# -- daemon ------------------------------------------------------------------------------

def cmd_daemon_run(args: argparse.Namespace, paths: Paths) -> int:
    from daemon.server import serve

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = _settings(args, paths)
    running = find_running(paths)
    if running is not None:
        raise MemoryCloudError(f"a daemon is already running (pid {running.pid}, {running.url})")
    asyncio.run(serve(settings, paths.ensure()))
    return 0


def cmd_daemon_start(args: argparse.Namespace, paths: Paths) -> int:
    running = find_running(paths)
    if running is not None:
        _emit(args, {"status": "already_running", "pid": running.pid, "url": running.url},
              f"already running: pid {running.pid} at {running.url}")
        return 0
    try:
        running = start_detached(paths, _settings(args, paths))
    except RuntimeError as exc:
        raise MemoryCloudError(f"the daemon did not start: {exc}") from exc
    _emit(args, {"status": "started", "pid": running.pid, "url": running.url,
                 "log": str(paths.log_file)},
          f"started: pid {running.pid} at {running.url} (log: {paths.log_file})")
    return 0


def cmd_daemon_stop(args: argparse.Namespace, paths: Paths) -> int:
    try:
        pid = stop_running(paths)
    except RuntimeError as exc:
        raise MemoryCloudError(str(exc)) from exc
    _emit(args, {"status": "stopped" if pid else "not_running", "pid": pid},
          f"stopped (pid {pid})" if pid else "not running")
    return 0


def cmd_daemon_status(args: argparse.Namespace, paths: Paths) -> int:
    from daemon.owner_client import OwnerClient

    running = find_running(paths)
    service = cli_service.status(paths)
    service_line = f"service: {cli_service.describe_status(service, running.pid if running else None)}\n"
    if running is None:
        _emit(args, {"status": "not_running", "log": str(paths.log_file), "service": service},
              f"not running (start it with `memorycloud daemon start`)\n{service_line}log: {paths.log_file}")
        return 3  # like `systemctl status`: scripts can tell "not running" apart
    status = OwnerClient.for_installation(paths, running.url).get("/api/local/status")
    status.update(status="running", log=str(paths.log_file), service=service)
    _emit(args, status,
          f"running: pid {status['pid']} at {running.url}, up {status['uptime_seconds']:.0f} s\n"
          f"{service_line}log: {paths.log_file}\n"
          f"memories: {status['counts']['memories']}, agents: {status['counts']['agents']}, "
          f"store: {status['store_bytes'] / 1e6:.1f} MB ({status['database']})\n"
          + (f"{status['search_index']['text']}\n" if status.get("search_index") else "")
          + _upstream_line(status.get("upstream") or {})
          + "\n".join(f"job {j['name']:<22} last {j['last_run_at'] or 'not yet'}"
                      f" ({j['last_result'] or '-'}), next {j['next_run_at'] or '-'}"
                      for j in status.get("jobs", [])))
    return 0


def _upstream_line(upstream: dict[str, Any]) -> str:
    if not upstream.get("connected"):
        return ""
    line = (f"upstream: {upstream['url']}, backlog {upstream['backlog']}, last success"
            f" {upstream['last_success_at'] or 'never'}")
    if upstream.get("last_error"):
        line += f", last error: {upstream['last_error']}"
    return line + "\n"


# -- agents ------------------------------------------------------------------------------

def cmd_agent_add(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        with store.transaction():
            identity, key = store.identities.create_agent(
                args.name, args.runtime, scopes=args.scopes.split(",") if args.scopes else None)
    finally:
        store.close()
    data = {"id": identity["id"], "name": identity["name"], "runtime": identity["runtime"],
            "scopes": identity["scopes"], "workspace_id": identity["workspace_id"], "api_key": key}
    _emit(args, data,
          f"agent {identity['name']} ({identity['runtime']}) created: {identity['id']}\n"
          f"API key (shown once, store it in the agent's secret store):\n{key}")
    return 0


def cmd_agent_list(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        agents = store.identities.agents()
    finally:
        store.close()
    rows = [{"id": a["id"], "name": a["name"], "runtime": a["runtime"], "scopes": a["scopes"],
             "created_at": a["created_at"], "disabled": bool(a["disabled_at"])} for a in agents]
    text = "\n".join(f"{r['name']:<24} {r['runtime'] or '':<14} {r['id']}"
                     + ("  (removed)" if r["disabled"] else "") for r in rows) or "no agents yet"
    _emit(args, rows, text)
    return 0


def cmd_agent_remove(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        match = [a for a in store.identities.agents()
                 if args.agent in (a["id"], a["name"]) and not a["disabled_at"]]
        if not match:
            raise MemoryCloudError(f"no active agent named or with id {args.agent!r}")
        with store.transaction():
            store.identities.disable_agent(match[0]["id"])
    finally:
        store.close()
    _emit(args, {"removed": match[0]["id"]}, f"removed {match[0]['name']}: its keys no longer work")
    return 0


def cmd_agent_pair(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        with store.transaction():
            workspace = (store.identities.find_workspace(args.workspace)["id"]
                         if args.workspace else None)
            code = store.identities.create_pairing_code(args.name, args.runtime,
                                                        ttl_minutes=args.minutes,
                                                        workspace_id=workspace)
    finally:
        store.close()
    _emit(args, code,
          f"pairing code for {args.name} ({code['runtime']}): {code['pairing_code']}\n"
          f"valid until {code['expires_at']}, usable once. The agent sends it to"
          " POST /api/agent/register as {\"pairing_code\": \"...\"}.")
    return 0


def cmd_workspace_list(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        workspaces = store.identities.workspaces()
    finally:
        store.close()
    _emit(args, workspaces, "\n".join(f"{w['id']}  {w['name']}{'  (default)' if w['is_default'] else ''}"
                                       for w in workspaces))
    return 0


def cmd_workspace_add(args: argparse.Namespace, paths: Paths) -> int:
    store = open_store(paths)
    try:
        with store.transaction():
            owner = store.identities.owner()
            workspace = store.identities.create_workspace(args.name, owner_id=owner["id"] if owner else None)
    finally:
        store.close()
    _emit(args, workspace, f"created {workspace['id']} {workspace['name']!r}; pair agents into it with"
                           f" `memorycloud agent pair --workspace {workspace['name']!r} ...`")
    return 0


# -- doctor and config ---------------------------------------------------------------------

def cmd_config_show(args: argparse.Namespace, paths: Paths) -> int:
    settings = load_settings(paths.config_file)
    data = {name: getattr(settings, name) for name in SECTIONS}
    data = {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}
    _emit(args, {"file": str(paths.config_file), "settings": data},
          f"# {paths.config_file}\n" + "\n".join(f"{k} = {v!r}" for k, v in data.items()))
    return 0


def cmd_config_set(args: argparse.Namespace, paths: Paths) -> int:
    value = set_setting(paths.config_file, args.key, args.value)
    _emit(args, {args.key: list(value) if isinstance(value, tuple) else value},
          f"{args.key} = {value!r} (restart the daemon to apply)")
    return 0


def cmd_mcp(args: argparse.Namespace, paths: Paths) -> int:
    # The server finds its own home (--home, MEMORYCLOUD_HOME, .amp/local.json, default):
    # a runtime may start it without the environment this process was given.
    from daemon.mcp.stdio import run

    return run(args.home, args.project, args.credential_ref, args.verbose)


# -- product entry -----------------------------------------------------------------------

def cmd_tui(args: argparse.Namespace, paths: Paths) -> int:
    """Start the daemon if needed, then open the TUI on it."""
    running = find_running(paths)
    if running is None:
        print("starting the daemon...", file=sys.stderr)
        running = start_detached(paths, _settings(args, paths))
    from state.secrets import open_secret_store
    from state.setup import OWNER_KEY_SECRET
    from tui.app import run_tui

    key = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
    code = run_tui(running.url, key or "")
    print(f"The daemon keeps running at {running.url} (pid {running.pid}) for your agents;"
          " `memorycloud daemon stop` stops it.", file=sys.stderr)
    return code


def _with_emit(func: Callable) -> Callable:
    """Setup commands take the emitter explicitly (they live in their own module)."""
    return lambda args, paths: func(args, paths, _emit)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memorycloud",
        description="MemoryCloud Companion: local memory for AI agents (AMP on localhost).\n"
                    "With no command: start the daemon if needed and open the TUI.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"memorycloud {__version__}")
    parser.set_defaults(func=cmd_tui)
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

    def add(parent: Any, name: str, func: Callable, help_text: str, *, json_flag: bool = True,
            address: bool = False) -> argparse.ArgumentParser:
        p = parent.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        if json_flag:
            p.add_argument("--json", action="store_true", help="print JSON for scripts")
        if address:
            p.add_argument("--host", help="address to listen on (default from config: 127.0.0.1)")
            p.add_argument("--port", type=int, help="port (default from config: 8517)")
            p.add_argument("--role", choices=("local", "cloud"),
                           help="local (default): this machine's agents; cloud: serve a team's"
                                " daemons as their upstream (see README, 'Team upstream')")
        return p

    daemon = sub.add_parser("daemon", help="run, start, stop or check the daemon")
    dsub = daemon.add_subparsers(title="daemon commands", metavar="ACTION", required=True)
    add(dsub, "run", cmd_daemon_run, "run in the foreground (Ctrl-C or SIGTERM stops it)",
        json_flag=False, address=True)
    add(dsub, "start", cmd_daemon_start, "start in the background (pidfile, log file)", address=True)
    add(dsub, "stop", cmd_daemon_stop, "stop the background daemon")
    add(dsub, "status", cmd_daemon_status, "is it running, and how is it")

    agent = sub.add_parser("agent", help="agent identities and keys")
    asub = agent.add_subparsers(title="agent commands", metavar="ACTION", required=True)
    p = add(asub, "add", cmd_agent_add, "create an agent and print its key once")
    p.add_argument("name")
    p.add_argument("--runtime", required=True, help="codex, claude_code, gemini_cli, cursor, openclaw, generic")
    p.add_argument("--scopes", help="comma-separated (default: memory:read,memory:write,agent:sync,skill:install,catalog:read)")
    add(asub, "list", cmd_agent_list, "list agents")
    p = add(asub, "remove", cmd_agent_remove, "disable an agent and revoke its keys")
    p.add_argument("agent", help="name or id")
    p = add(asub, "pair", cmd_agent_pair, "issue a one-time pairing code for agent self-registration")
    p.add_argument("--name", required=True)
    p.add_argument("--runtime", required=True)
    p.add_argument("--minutes", type=int, default=10, help="validity (default 10)")
    p.add_argument("--workspace", help="workspace name or id the agent joins (default: the"
                   " default workspace; a team daemon gives each person or team its own)")

    workspace = sub.add_parser("workspace", help="workspaces (a team daemon has one per person or team)")
    wsub = workspace.add_subparsers(title="workspace commands", metavar="ACTION", required=True)
    add(wsub, "list", cmd_workspace_list, "list workspaces")
    p = add(wsub, "add", cmd_workspace_add, "create a workspace")
    p.add_argument("name")

    cli_doctor.add_arguments(add(sub, "doctor", _with_emit(cli_doctor.cmd_doctor),
                                 "check the installation, the database file and its search indexes"))

    config = sub.add_parser("config", help="show or change settings")
    csub = config.add_subparsers(title="config commands", metavar="ACTION", required=True)
    add(csub, "show", cmd_config_show, "print the effective settings")
    p = add(csub, "set", cmd_config_set, "change one setting in config.toml (comments are kept)")
    p.add_argument("key", choices=sorted(SECTIONS))
    p.add_argument("value")

    for module in (cli_setup, cli_updates, cli_stores, cli_upstream, cli_service):
        module.add_commands(sub, lambda parent, name, func, help_text, **kw: add(
            parent, name, _with_emit(func), help_text, **kw))

    p = sub.add_parser("mcp", help="serve MCP on stdio (and install it into agent runtimes)",
                       description="With no action: serve MCP on stdio for an agent runtime.")
    p.set_defaults(func=cmd_mcp)
    p.add_argument("--credential-ref", default="memorycloud_default",
                   help="key name in the credentials file (or set MEMORYCLOUD_API_KEY)")
    p.add_argument("--home", help="the MemoryCloud home to use (default: MEMORYCLOUD_HOME, then"
                   " the project's .amp/local.json, then the platform's directories)")
    p.add_argument("--project", help="the runtime's project directory, where .amp/local.json is"
                   " looked for (default: the working directory)")
    p.add_argument("--verbose", action="store_true", help="log start-up and progress on stderr")
    cli_mcp.add_commands(p, lambda parent, name, func, help_text, **kw: add(
        parent, name, _with_emit(func), help_text, **kw))

    add(sub, "tui", cmd_tui, "open the TUI (starts the daemon if needed)", json_flag=False, address=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    paths = resolve_paths()
    try:
        return int(args.func(args, paths) or 0)
    except MemoryCloudError as exc:
        print(f"memorycloud: {exc.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
