"""``memorycloud daemon run|start|stop|status`` and ``memorycloud tui`` (the product's entry:
start the daemon if needed, then open the TUI)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from daemon.cli import service
from daemon.cli.context import add_command, emit, settings
from daemon.logs import configure_daemon_logging
from daemon.process import find_running, start_detached, stop_running
from state.errors import MemoryCloudError
from state.paths import Paths


def cmd_daemon_run(args: argparse.Namespace, paths: Paths) -> int:
    from daemon.server import serve

    resolved = settings(args, paths)
    configure_daemon_logging(paths, resolved)
    running = find_running(paths)
    if running is not None:
        raise MemoryCloudError(f"a daemon is already running (pid {running.pid}, {running.url})")
    asyncio.run(serve(resolved, paths.ensure()))
    return 0


def cmd_daemon_start(args: argparse.Namespace, paths: Paths) -> int:
    running = find_running(paths)
    if running is not None:
        emit(
            args,
            {"status": "already_running", "pid": running.pid, "url": running.url},
            f"already running: pid {running.pid} at {running.url}",
        )
        return 0
    try:
        running = start_detached(paths, settings(args, paths))
    except RuntimeError as exc:
        raise MemoryCloudError(f"the daemon did not start: {exc}") from exc
    emit(
        args,
        {"status": "started", "pid": running.pid, "url": running.url, "log": str(paths.log_file)},
        f"started: pid {running.pid} at {running.url} (log: {paths.log_file})",
    )
    return 0


def cmd_daemon_stop(args: argparse.Namespace, paths: Paths) -> int:
    try:
        stopped = stop_running(paths)
    except RuntimeError as exc:
        raise MemoryCloudError(str(exc)) from exc
    pid = stopped.pid
    if stopped.stale_pid is not None:
        # Not running, and the files said otherwise: say why nothing was signalled.
        print(
            f"memorycloud: the pid file named pid {stopped.stale_pid}, which is not this"
            f" installation's daemon ({stopped.reason}): removed {paths.pid_file} and"
            f" {paths.runtime_file.name}, signalled nothing",
            file=sys.stderr,
        )
    emit(
        args,
        {
            "status": "stopped" if pid else "not_running",
            "pid": pid,
            **({"stale_pid": stopped.stale_pid} if stopped.stale_pid is not None else {}),
        },
        f"stopped (pid {pid})" if pid else "not running",
    )
    return 0


def cmd_daemon_status(args: argparse.Namespace, paths: Paths) -> int:
    from daemon.owner_client import OwnerClient

    running = find_running(paths)
    state = service.status(paths)
    service_line = f"service: {service.describe_status(state, running.pid if running else None)}\n"
    if running is None:
        emit(
            args,
            {"status": "not_running", "log": str(paths.log_file), "service": state},
            f"not running (start it with `memorycloud daemon start`)\n{service_line}log: {paths.log_file}",
        )
        return 3  # like `systemctl status`: scripts can tell "not running" apart
    status = OwnerClient.for_installation(paths, running.url).get("/api/local/status")
    status.update(status="running", log=str(paths.log_file), service=state)
    emit(
        args,
        status,
        f"running: pid {status['pid']} at {running.url}, up {status['uptime_seconds']:.0f} s\n"
        f"{service_line}log: {paths.log_file}\n"
        f"memories: {status['counts']['memories']}, agents: {status['counts']['agents']}, "
        f"store: {status['store_bytes'] / 1e6:.1f} MB ({status['database']})\n"
        + (f"{status['search_index']['text']}\n" if status.get("search_index") else "")
        + upstream_line(status.get("upstream") or {})
        + "\n".join(
            f"job {j['name']:<22} last {j['last_run_at'] or 'not yet'}"
            f" ({j['last_result'] or '-'}), next {j['next_run_at'] or '-'}"
            for j in status.get("jobs", [])
        ),
    )
    return 0


def upstream_line(upstream: dict[str, Any]) -> str:
    """The upstream's line in ``daemon status`` (none when no upstream is connected)."""
    if not upstream.get("connected"):
        return ""
    line = (
        f"upstream: {upstream['url']}, backlog {upstream['backlog']}, last success"
        f" {upstream['last_success_at'] or 'never'}"
    )
    if upstream.get("last_error"):
        line += f", last error: {upstream['last_error']}"
    return line + "\n"


def cmd_tui(args: argparse.Namespace, paths: Paths) -> int:
    """Start the daemon if needed, then open the TUI on it."""
    running = find_running(paths)
    if running is None:
        print("starting the daemon...", file=sys.stderr)
        running = start_detached(paths, settings(args, paths))
    from state.secrets import open_secret_store
    from state.setup import OWNER_KEY_SECRET

    # The one import of the TUI: this is its entry point, not a dependency of the daemon.
    from tui.app import run_tui

    key = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
    code = run_tui(running.url, key or "")
    print(
        f"The daemon keeps running at {running.url} (pid {running.pid}) for your agents;"
        " `memorycloud daemon stop` stops it.",
        file=sys.stderr,
    )
    return code


def add_commands(sub: Any) -> None:
    """Register ``daemon run|start|stop|status``."""
    daemon = sub.add_parser("daemon", help="run, start, stop or check the daemon")
    dsub = daemon.add_subparsers(title="daemon commands", metavar="ACTION", required=True)
    add_command(
        dsub,
        "run",
        cmd_daemon_run,
        "run in the foreground (Ctrl-C or SIGTERM stops it)",
        json_flag=False,
        address=True,
    )
    add_command(dsub, "start", cmd_daemon_start, "start in the background (pidfile, log file)", address=True)
    add_command(dsub, "stop", cmd_daemon_stop, "stop the background daemon")
    add_command(dsub, "status", cmd_daemon_status, "is it running, and how is it")


def add_tui_command(sub: Any) -> None:
    """Register ``tui`` (also what ``memorycloud`` with no command runs)."""
    add_command(
        sub, "tui", cmd_tui, "open the TUI (starts the daemon if needed)", json_flag=False, address=True
    )
