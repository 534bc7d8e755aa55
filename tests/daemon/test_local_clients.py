"""The clients of the local daemon against the real app on a loopback port: the CLI's owner
client and health probe (standard library HTTP, daemon/http_clients.py), the TUI's client and
the MCP tools' (httpx). None of them goes through a proxy that the environment names: it
would not reach 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from daemon.mcp.tools import DaemonApi
from daemon.owner_client import DaemonAnswered, OwnerClient
from daemon.process import _healthy
from state.errors import MemoryCloudError
from state.paths import Paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from tests.reliability.test_api_fuzz import ThreadedDaemon
from tui.client import DaemonClient


@pytest.fixture
def daemon(paths: Paths) -> Iterator[ThreadedDaemon]:
    running = ThreadedDaemon(paths).start()
    yield running
    running.stop()


@pytest.fixture
def owner(daemon: ThreadedDaemon, paths: Paths) -> OwnerClient:
    return OwnerClient.for_installation(paths, daemon.url)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_reads_writes_and_deletes_with_the_owner_key(owner):
    assert owner.get("/api/local/status")["schema"] == "memorycloud.daemon-status.v1"
    created = owner.post("/api/local/agents", {"name": "cli-made", "runtime": "codex"})
    assert created["api_key"] and created["name"] == "cli-made"
    listed = owner.get("/api/local/agents")["agents"]
    assert "cli-made" in [a["name"] for a in listed]
    # a parameter given as None is left out, as if not given
    assert owner.get("/api/local/sync-intents", status=None)["sync_intents"] == []


def test_a_refusal_carries_the_daemons_status_and_message(owner):
    with pytest.raises(DaemonAnswered) as refused:
        owner.get("/api/local/startup/plans/splan_nope")
    assert refused.value.status == 404 and "splan_nope" in str(refused.value)
    with pytest.raises(DaemonAnswered) as bad:
        owner.get("/api/local/sync-intents", status="nonsense")
    assert bad.value.status == 422 and "status" in str(bad.value)
    with pytest.raises(DaemonAnswered) as wrong_key:
        OwnerClient(owner.url, "mca_not-a-key").get("/api/local/status")
    assert wrong_key.value.status == 401


def test_no_daemon_is_a_clear_error(paths):
    url = closed_port_url()
    with pytest.raises(MemoryCloudError, match=f"cannot reach the daemon at {url}"):
        OwnerClient(url, "key").get("/api/local/status")


@pytest.fixture
def dead_proxy(monkeypatch) -> str:
    """Every proxy variable names a port where nothing listens, and nothing is exempt."""
    proxy = closed_port_url()
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    return proxy


def test_the_cli_reaches_the_daemon_past_a_proxy_in_the_environment(owner, daemon, dead_proxy):
    assert owner.get("/api/local/status")["schema"] == "memorycloud.daemon-status.v1"
    assert _healthy(daemon.url)


async def test_the_tui_and_mcp_clients_reach_the_daemon_past_a_proxy(daemon, paths, dead_proxy):
    key = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
    tui = DaemonClient(daemon.url, key)
    try:
        assert (await tui.request("GET", "/api/local/status"))["schema"] == "memorycloud.daemon-status.v1"
    finally:
        await tui.aclose()
    mcp = DaemonApi()
    try:
        status, body = await mcp.call(f"{daemon.url}/api/me", key, "GET")
    finally:
        await mcp.aclose()
    assert status == 200 and body["schema"] == "amp.identity.v1"


def test_the_health_probe_tells_our_daemon_from_nothing(daemon):
    assert _healthy(daemon.url)
    assert not _healthy(closed_port_url())
