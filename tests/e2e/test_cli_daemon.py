"""The CLI's daemon lifecycle, agent commands and doctor, as a user runs them."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import cli, free_port


def test_start_twice_status_stop(isolated_home):
    port = str(free_port())
    started = json.loads(cli("daemon", "start", "--port", port, "--json").stdout)
    try:
        assert started["status"] == "started"
        again = json.loads(cli("daemon", "start", "--port", port, "--json").stdout)
        assert again == {"status": "already_running", "pid": started["pid"], "url": started["url"]}
        status = json.loads(cli("daemon", "status", "--json").stdout)
        assert status["status"] == "running" and status["port"] == int(port)
        assert status["versions"]["sqlite_vec"].startswith("v")
    finally:
        stopped = json.loads(cli("daemon", "stop", "--json").stdout)
    assert stopped == {"status": "stopped", "pid": started["pid"]}
    assert cli("daemon", "status", check=False).returncode == 3
    assert not (isolated_home / "state" / "daemon.pid").exists()


def test_port_in_use_is_a_clear_message(isolated_home):
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = str(blocker.getsockname()[1])
        result = cli("daemon", "start", "--port", port, check=False)
    assert result.returncode == 1
    assert "already in use" in result.stderr and "--port" in result.stderr


def test_sigterm_stops_cleanly(daemon):
    assert daemon.stop() == 0
    assert not (daemon.home / "state" / "daemon.json").exists()


def test_agent_add_list_remove_and_doctor(daemon):
    created = json.loads(cli("agent", "add", "gemini-1", "--runtime", "gemini", "--json").stdout)
    assert created["runtime"] == "gemini_cli" and created["api_key"].startswith("mca_")
    auth = {"Authorization": f"Bearer {created['api_key']}"}
    assert httpx.get(f"{daemon.url}/api/me", headers=auth).status_code == 200
    names = [a["name"] for a in json.loads(cli("agent", "list", "--json").stdout)]
    assert names == ["gemini-1"]
    duplicate = cli("agent", "add", "gemini-1", "--runtime", "gemini", check=False)
    assert duplicate.returncode == 1 and "already exists" in duplicate.stderr
    cli("agent", "remove", "gemini-1")
    assert httpx.get(f"{daemon.url}/api/me", headers=auth).status_code == 401

    doctor = json.loads(cli("doctor", "--json").stdout)
    assert doctor["secrets_backend"].startswith("file")
    assert doctor["sqlite_vec"].startswith("v") and doctor["sqlite"]
    assert doctor["daemon"].startswith("running")


def test_pairing_flow_from_the_cli(daemon):
    code = json.loads(cli("agent", "pair", "--name", "claude-1", "--runtime", "claude", "--json").stdout)
    answer = httpx.post(f"{daemon.url}/api/agent/register", json={"pairing_code": code["pairing_code"]})
    assert answer.status_code == 200
    key = answer.json()["api_key"]
    me = httpx.get(f"{daemon.url}/api/me", headers={"Authorization": f"Bearer {key}"}).json()
    assert me["user"]["runtime"] == "claude_code"


def test_config_set_and_show(isolated_home):
    cli("config", "set", "port", "9123")
    shown = json.loads(cli("config", "show", "--json").stdout)
    assert shown["settings"]["port"] == 9123
    bad = cli("config", "set", "port", "nope", check=False)
    assert bad.returncode == 1 and "must be of type int" in bad.stderr


def test_connect_without_a_terminal_asks_nothing_and_writes_nothing(daemon, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    result = cli("connect", "--runtime", "generic", "--repo", str(repo))
    assert "not approved (no terminal to ask)" in result.stdout
    assert "memorycloud setup approve splan_" in result.stdout
    assert not (repo / "AGENTS.md").exists() and not (repo / ".amp").exists()
    pending = json.loads(cli("setup", "list", "--status", "pending_approval", "--json").stdout)
    assert [p["repo_root"] for p in pending] == [str(repo)]


# The TUI (`memorycloud`) as far as the daemon is concerned: it starts the daemon and runs on.
TUI_LIKE = """
import sys, time
from daemon.process import start_detached
from state.config import load_settings
from state.paths import resolve_paths
import os
paths = resolve_paths(os.environ)
settings = load_settings(paths.config_file).model_copy(update={"port": int(sys.argv[1])})
print(start_detached(paths, settings).pid, flush=True)
time.sleep(120)
"""


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        return None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_a_daemon_started_by_a_process_that_runs_on_is_stopped_from_another_terminal(isolated_home):
    """`daemon stop` in another terminal while the TUI that started the daemon runs on: the
    daemon stops at once, and is not left a zombie of the TUI, which the stop took for a
    daemon still running ("did not stop within 15 s", exit code 1)."""
    parent = subprocess.Popen(
        [sys.executable, "-c", TUI_LIKE, str(free_port())], stdout=subprocess.PIPE, text=True
    )
    try:
        pid = int(parent.stdout.readline())
        started = time.monotonic()
        stopped = json.loads(cli("daemon", "stop", "--json").stdout)
        assert stopped == {"status": "stopped", "pid": pid}
        assert time.monotonic() - started < 10
        deadline = time.monotonic() + 5
        while _state(pid) is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _state(pid) is None  # collected by the process that started it
    finally:
        parent.kill()
        parent.wait()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_a_zombie_is_not_a_running_daemon():
    """A daemon that exited but that its parent has not collected yet is not alive."""
    from daemon.process import _pid_alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while _state(child.pid) != "Z" and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        assert _state(child.pid) == "Z"
        assert not _pid_alive(child.pid)
    finally:
        child.wait()
    assert not _pid_alive(child.pid)
    assert _pid_alive(os.getpid())
