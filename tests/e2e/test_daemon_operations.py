"""Operations, as a person meets them: ``daemon stop`` after a crash left a pid file that
names somebody else's process now (a reused pid), the rotating daemon.log, the optional
access log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from daemon.process import process_start
from tests.e2e.conftest import cli, free_port

LINUX_PROC = Path("/proc/self/stat").exists()


@pytest.fixture
def stranger():
    """A real process that is not ours: what a reused pid belongs to."""
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


def _crashed_daemon_files(home: Path, pid: int, *, runtime: dict | None) -> None:
    state = home / "state"
    state.mkdir(parents=True, exist_ok=True)
    (state / "daemon.pid").write_text(str(pid))
    if runtime is not None:
        (state / "daemon.json").write_text(json.dumps(runtime))


def _stop_refuses(home: Path, stranger: subprocess.Popen, why: str) -> None:
    result = cli("daemon", "stop", "--json")
    assert json.loads(result.stdout) == {"status": "not_running", "pid": None, "stale_pid": stranger.pid}
    assert f"the pid file named pid {stranger.pid}, which is not this installation's daemon" in result.stderr
    assert why in result.stderr and "signalled nothing" in result.stderr
    time.sleep(0.2)
    assert stranger.poll() is None  # still running: it was not signalled
    assert not (home / "state" / "daemon.pid").exists()
    assert not (home / "state" / "daemon.json").exists()
    assert cli("daemon", "stop").stdout.strip() == "not running"


def test_a_reused_pid_with_another_start_time_is_not_signalled(isolated_home, stranger):
    # What a daemon that crashed had written: its pid (now the stranger's) and start time.
    _crashed_daemon_files(
        isolated_home,
        stranger.pid,
        runtime={
            "pid": stranger.pid,
            "host": "127.0.0.1",
            "port": free_port(),
            "url": f"http://127.0.0.1:{free_port()}",
            "started_at": "2026-01-01T00:00:00.000Z",
            "process_start": "linux:1" if LINUX_PROC else "Thu Jan  1 00:00:00 2026",
        },
    )
    _stop_refuses(isolated_home, stranger, "it started after the daemon that wrote the file")


def test_a_pid_file_without_a_start_time_needs_a_daemon_command_line(isolated_home, stranger):
    _crashed_daemon_files(isolated_home, stranger.pid, runtime=None)  # an older release's record
    _stop_refuses(isolated_home, stranger, "it runs `sleep 60`")


def test_the_daemon_records_its_start_and_stop_signals_it(isolated_home):
    started = json.loads(cli("daemon", "start", "--port", str(free_port()), "--json").stdout)
    try:
        runtime = json.loads((isolated_home / "state" / "daemon.json").read_text())
        assert runtime["process_start"] and runtime["process_start"] == process_start(started["pid"])
        httpx.get(f"{started['url']}/healthz")
        assert not (isolated_home / "state" / "access.log").exists()  # off by default
    finally:
        stopped = cli("daemon", "stop", "--json")
    assert json.loads(stopped.stdout) == {"status": "stopped", "pid": started["pid"]}
    assert stopped.stderr == ""


def test_a_live_daemon_whose_record_names_another_start_is_left_alone(isolated_home):
    started = json.loads(cli("daemon", "start", "--port", str(free_port()), "--json").stdout)
    pid = started["pid"]
    runtime_file = isolated_home / "state" / "daemon.json"
    try:
        runtime = json.loads(runtime_file.read_text())
        runtime_file.write_text(json.dumps({**runtime, "process_start": "another start"}))
        result = cli("daemon", "stop", "--json")
        assert json.loads(result.stdout)["stale_pid"] == pid
        assert httpx.get(f"{started['url']}/healthz").status_code == 200  # not signalled
    finally:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)


def test_daemon_log_rotates_and_the_access_log_is_written_when_on(isolated_home):
    cli("config", "set", "log_max_bytes", "4096")
    cli("config", "set", "log_backups", "2")
    cli("config", "set", "access_log", "true")
    state = isolated_home / "state"
    state.mkdir(parents=True, exist_ok=True)
    (state / "daemon.log").write_text("a line from a month ago\n" * 400)  # 9.6 kB
    started = json.loads(cli("daemon", "start", "--port", str(free_port()), "--json").stdout)
    try:
        with httpx.Client() as client:
            for _ in range(120):
                assert client.get(f"{started['url']}/healthz").status_code == 200
        if LINUX_PROC:  # stderr follows the log to its new file
            assert os.readlink(f"/proc/{started['pid']}/fd/2") == str(state / "daemon.log")
    finally:
        cli("daemon", "stop")
    assert (state / "daemon.log.1").read_text().startswith("a line from a month ago")
    log = (state / "daemon.log").read_text()
    assert "daemon listening on" in log and "stopped" in log and "a line from a month ago" not in log
    access = sorted(p.name for p in state.glob("access.log*"))
    assert access == ["access.log", "access.log.1", "access.log.2"]
    assert all((state / name).stat().st_size <= 4096 + 300 for name in access)
    lines = (state / "access.log").read_text().splitlines()
    assert lines and all('"GET /healthz HTTP/1.1" 200' in line for line in lines)
