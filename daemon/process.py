"""Managing the detached daemon from the CLI: find it, start it, stop it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import httpx

from state.config import Settings
from state.paths import Paths


@dataclass(frozen=True)
class RunningDaemon:
    pid: int
    url: str
    info: dict[str, Any]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _healthy(url: str, timeout: float = 1.0) -> bool:
    try:
        response = httpx.get(f"{url}/healthz", timeout=timeout)
        return response.status_code == 200 and response.json().get("service") == "memorycloud-companion"
    except (httpx.HTTPError, ValueError):
        return False


def find_running(paths: Paths) -> RunningDaemon | None:
    """The daemon this installation started, if its process is alive and answering."""
    try:
        info = json.loads(paths.runtime_file.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    pid = int(info.get("pid", 0))
    if pid <= 0 or not _pid_alive(pid) or not _healthy(info["url"]):
        return None
    return RunningDaemon(pid, info["url"], info)


def start_detached(paths: Paths, settings: Settings, *, wait_seconds: float = 20.0) -> RunningDaemon:
    """Start ``memorycloud daemon run`` in its own session, logging to the log file.

    Waits until it answers /healthz; raises RuntimeError with the log's last lines if the
    child exits or does not come up in time.
    """
    paths.ensure()
    command = [sys.executable, "-m", "daemon", "daemon", "run",
               "--host", settings.host, "--port", str(settings.port), "--role", settings.role]
    log_handle = open(paths.log_file, "ab")
    offset = log_handle.tell()
    child = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=log_handle, stderr=subprocess.STDOUT,
        start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    log_handle.close()
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise RuntimeError(_log_tail(paths, offset) or f"daemon exited with code {child.returncode}")
        running = find_running(paths)
        if running is not None and running.pid == child.pid:
            return running
        time.sleep(0.1)
    child.terminate()
    raise RuntimeError(f"daemon did not answer within {wait_seconds:.0f} s; see {paths.log_file}")


def _log_tail(paths: Paths, offset: int) -> str:
    try:
        with open(paths.log_file, "rb") as handle:
            handle.seek(offset)
            lines = handle.read().decode("utf-8", "replace").strip().splitlines()
    except FileNotFoundError:
        return ""
    errors = [line for line in lines if "Error" in line or "error" in line or "cannot" in line]
    return (errors[-1] if errors else "\n".join(lines[-5:])).strip()


def stop_running(paths: Paths, *, wait_seconds: float = 15.0) -> int | None:
    """SIGTERM the running daemon and wait for it to exit; its pid, or None if none ran."""
    running = find_running(paths)
    if running is None:
        try:
            pid = int(paths.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        if not _pid_alive(pid):
            paths.pid_file.unlink(missing_ok=True)
            paths.runtime_file.unlink(missing_ok=True)
            return None
    else:
        pid = running.pid
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline and _pid_alive(pid):
        _reap(pid)
        time.sleep(0.05)
    if _pid_alive(pid):
        raise RuntimeError(f"daemon (pid {pid}) did not stop within {wait_seconds:.0f} s")
    return pid


def _reap(pid: int) -> None:
    """Collect the exit status if the daemon is our own child (tests start it that way)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
