"""A real daemon process on a free loopback port, in the test's MEMORYCLOUD_HOME."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest


@pytest.fixture(autouse=True)
def checked_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every daemon process these tests start (and the CLI's `daemon start`) holds its answers
    to the OpenAPI document's schemas, like the in-process apps (tests/conftest.CHECKED)."""
    monkeypatch.setenv("MEMORYCLOUD_CHECK_RESPONSES", "true")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cli(
    *args: str, check: bool = True, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess:
    """Run ``memorycloud ARGS`` as a subprocess with the test's environment (or ``env``)."""
    result = subprocess.run(
        [sys.executable, "-m", "daemon", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env or os.environ.copy(),
        input=stdin,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"memorycloud {' '.join(args)} failed: {result.stderr}")
    return result


@dataclass
class DaemonProcess:
    port: int
    home: Path
    process: subprocess.Popen | None = None
    extra_args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=lambda: os.environ.copy())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = open(self.home / "foreground.log", "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "daemon", "daemon", "run", "--port", str(self.port), *self.extra_args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            assert self.process.poll() is None, (self.home / "foreground.log").read_text()
            try:
                if httpx.get(f"{self.url}/healthz", timeout=0.5).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
        raise AssertionError("daemon did not come up")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.process is not None
        self.process.send_signal(sig)
        code = self.process.wait(timeout=20)
        self.process = None
        return code


@pytest.fixture
def daemon(isolated_home: Path) -> Iterator[DaemonProcess]:
    isolated_home.mkdir(parents=True, exist_ok=True)
    proc = DaemonProcess(free_port(), isolated_home)
    proc.start()
    yield proc
    if proc.process is not None:
        proc.stop()


@pytest.fixture
def agent_key(daemon: DaemonProcess) -> str:
    return json.loads(cli("agent", "add", "e2e-agent", "--runtime", "codex", "--json").stdout)["api_key"]
