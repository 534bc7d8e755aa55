"""The daemon listens on loopback only unless configured otherwise, and warns when it is."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import DaemonProcess, free_port


def listening_addresses(port: int) -> set[str]:
    """Local addresses of the TCP sockets listening on ``port`` (Linux /proc/net/tcp{,6})."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) == port and fields[3] == "0A":  # LISTEN
                found.add(address)
    return found


def test_default_listens_on_loopback_only(isolated_home):
    if not Path("/proc/net/tcp").exists():
        pytest.skip("no /proc/net/tcp to read the listening address from (not Linux)")
    isolated_home.mkdir(parents=True, exist_ok=True)
    daemon = DaemonProcess(free_port(), isolated_home)
    daemon.start()
    try:
        assert listening_addresses(daemon.port) == {"0100007F"}  # 127.0.0.1, nothing else
        assert "reachable beyond this machine" not in (isolated_home / "foreground.log").read_text()
    finally:
        daemon.stop()


def test_listening_beyond_loopback_warns_and_still_guards_the_host(isolated_home):
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "config").mkdir(exist_ok=True)
    (isolated_home / "config" / "config.toml").write_text('[daemon]\nhost = "0.0.0.0"\n')
    daemon = DaemonProcess(free_port(), isolated_home)
    daemon.start()
    try:
        log = (isolated_home / "foreground.log").read_text()
        assert "listening on 0.0.0.0: the daemon is reachable beyond this machine" in log, log
        if Path("/proc/net/tcp").exists():
            assert listening_addresses(daemon.port) == {"00000000"}
        # Reached over loopback but named by another host (DNS rebinding): still refused.
        answer = httpx.get(f"{daemon.url}/api/protocol/schema", headers={"Host": "attacker.example"})
        assert answer.status_code == 403 and "attacker.example" in answer.json()["error"]["message"]
    finally:
        daemon.stop(signal.SIGTERM)
