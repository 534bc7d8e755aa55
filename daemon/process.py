"""Managing the detached daemon from the CLI: find it, start it, stop it.

``daemon stop`` signals only a process that is still the daemon that wrote the runtime file:
after a crash or a reboot the pid file may name a pid the system has given to another
program since. The daemon records its own start time beside its pid (``process_start`` in
``daemon.json``; Linux: the start tick in /proc/PID/stat, elsewhere ``ps -o lstart=``), and
stop compares it with the process's; where nothing was recorded (a daemon of an older
release) the process's command line must be a ``daemon run``. A pid that fails the check is
a stale pid file: it is removed with the runtime file, said so, and nothing is signalled.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.http_clients import Unreachable, local_request
from state.config import Settings
from state.paths import Paths


@dataclass(frozen=True)
class RunningDaemon:
    pid: int
    url: str
    info: dict[str, Any]


@dataclass(frozen=True)
class Stopped:
    """What ``stop_running`` did: the pid it stopped (None: nothing ran), or why the pid file
    was stale (``stale_pid`` named a process that is not our daemon; nothing was signalled)."""

    pid: int | None
    stale_pid: int | None = None
    reason: str | None = None


def _ps(pid: int, field: str) -> str | None:
    """One ``ps`` column for ``pid`` (systems without /proc), or None."""
    try:
        done = subprocess.run(
            ["ps", "-o", f"{field}=", "-p", str(pid)], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def process_start(pid: int) -> str | None:
    """When process ``pid`` started, as an opaque text that a later process with the same pid
    cannot have; None when it cannot be told (no such process, no /proc and no ps)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None if Path("/proc/self/stat").exists() else _ps(pid, "lstart")
    except OSError:
        return None
    # Field 22, starttime (clock ticks after boot); the command name (field 2) is in
    # parentheses and may hold spaces, so count from the last ')'.
    fields = stat[stat.rindex(")") + 1 :].split()
    return f"linux:{fields[19]}" if len(fields) > 19 else None


def process_command(pid: int) -> list[str] | None:
    """Process ``pid``'s command line (words), or None when it cannot be read."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        if Path("/proc/self/cmdline").exists():
            return None
        text = _ps(pid, "command")
        return text.split() if text else None
    except OSError:
        return None
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part] or None


def _is_daemon_command(words: list[str]) -> bool:
    """``memorycloud daemon run ...`` or ``python [-P] -m daemon daemon run ...``."""
    return any(words[i : i + 2] == ["daemon", "run"] for i in range(len(words) - 1))


def not_our_daemon(pid: int, info: dict[str, Any]) -> str | None:
    """Why live process ``pid`` is not the daemon that wrote ``info`` (the runtime file), or
    None when it is (or nothing can tell: no /proc, no ps; then it is trusted, as before)."""
    recorded = info.get("process_start") if info.get("pid") == pid else None
    current = process_start(pid)
    if recorded and current:
        return None if current == recorded else "it started after the daemon that wrote the file"
    words = process_command(pid)
    if words is None or _is_daemon_command(words):
        return None
    return f"it runs `{' '.join(words)[:80]}`"


def _pid_alive(pid: int) -> bool:
    """Whether ``pid`` is a live process: an exited one its parent has not collected yet (a
    zombie: a daemon started by a process of an earlier release that runs on) is not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _exited(pid)


def _exited(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie, or gone since it answered a signal): state Z in
    /proc/PID/stat, the field after the command's closing parenthesis. Without /proc (macOS)
    not known: a ``ps`` for every check would slow every CLI call, and the processes that
    start the daemon collect it (start_detached)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return Path("/proc/self/stat").exists()  # gone since os.kill answered (Linux)
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


def _healthy(url: str, timeout: float = 1.0) -> bool:
    try:
        status, text = local_request("GET", f"{url}/healthz", timeout=timeout)
        return status == 200 and json.loads(text).get("service") == "memorycloud-companion"
    except (Unreachable, ValueError, AttributeError):  # no answer, not JSON, not an object
        return False


def _runtime_info(paths: Paths) -> dict[str, Any]:
    try:
        info = json.loads(paths.runtime_file.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def find_running(paths: Paths) -> RunningDaemon | None:
    """The daemon this installation started, if its process is alive and answering."""
    info = _runtime_info(paths)
    if not info:
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
    command = [
        sys.executable,
        "-m",
        "daemon",
        "daemon",
        "run",
        "--host",
        settings.host,
        "--port",
        str(settings.port),
        "--role",
        settings.role,
    ]
    log_handle = open(paths.log_file, "ab")
    offset = log_handle.tell()
    child = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=log_handle,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        # The database URL goes by the environment, not the command line that `ps` shows.
        env={
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            **({"MEMORYCLOUD_DATABASE_URL": settings.database_url} if settings.database_url else {}),
        },
    )
    log_handle.close()
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise RuntimeError(_log_tail(paths, offset) or f"daemon exited with code {child.returncode}")
        running = find_running(paths)
        if running is not None and running.pid == child.pid:
            # The TUI starts the daemon and runs on: whenever the daemon exits (`daemon stop`
            # from another terminal), this process must collect its exit status, or it stays a
            # zombie that the stop took for a daemon still running ("did not stop within 15 s").
            threading.Thread(target=child.wait, name="memorycloud-daemon-reaper", daemon=True).start()
            return running
        time.sleep(0.1)
    child.terminate()
    raise RuntimeError(f"daemon did not answer within {wait_seconds:.0f} s; see {paths.log_file}")


def _log_tail(paths: Paths, offset: int) -> str:
    try:
        with open(paths.log_file, "rb") as handle:
            # The child may have rotated the log (daemon/logs.py): then all of it is new.
            handle.seek(offset if handle.seek(0, os.SEEK_END) >= offset else 0)
            lines = handle.read().decode("utf-8", "replace").strip().splitlines()
    except FileNotFoundError:
        return ""
    errors = [line for line in lines if "Error" in line or "error" in line or "cannot" in line]
    return (errors[-1] if errors else "\n".join(lines[-5:])).strip()


def stop_running(paths: Paths, *, wait_seconds: float = 15.0) -> Stopped:
    """SIGTERM the running daemon and wait for it to exit (see the module docstring)."""
    running = find_running(paths)
    info = running.info if running is not None else _runtime_info(paths)
    if running is None:
        try:
            pid = int(paths.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return Stopped(None)
        if not _pid_alive(pid):
            paths.pid_file.unlink(missing_ok=True)
            paths.runtime_file.unlink(missing_ok=True)
            return Stopped(None)
    else:
        pid = running.pid
    reason = not_our_daemon(pid, info)
    if reason is not None:
        paths.pid_file.unlink(missing_ok=True)
        paths.runtime_file.unlink(missing_ok=True)
        return Stopped(None, pid, reason)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:  # it ended while we looked
        return Stopped(None)
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline and _pid_alive(pid):
        _reap(pid)
        time.sleep(0.05)
    if _pid_alive(pid):
        raise RuntimeError(f"daemon (pid {pid}) did not stop within {wait_seconds:.0f} s")
    return Stopped(pid)


def _reap(pid: int) -> None:
    """Collect the exit status if the daemon is our own child (tests start it that way)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
