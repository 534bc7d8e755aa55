"""The official MCP SDK's own client against the daemon, at every protocol revision the SDK
offers: streamable HTTP on /mcp of the real daemon and stdio through a real `memorycloud mcp`
process talking to it. One daemon serves the whole module."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS, is_version_at_least

from tests.e2e.conftest import DaemonProcess, cli, free_port

EXPECTED_TOOLS = {"search", "get_memory", "remember", "context_pack"}
REVISIONS = [*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS]
STRUCTURED_SINCE = "2025-06-18"  # structuredContent and outputSchema exist from this revision on


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[DaemonProcess, str, dict[str, str]]]:
    """(daemon, agent key, environment naming the daemon's home) for the module."""
    home = tmp_path_factory.mktemp("mcp") / "mchome"
    home.mkdir()
    env = {**os.environ, "MEMORYCLOUD_HOME": str(home), "MEMORYCLOUD_SECRETS": "file"}
    daemon = DaemonProcess(free_port(), home, env=env)
    daemon.start()
    key = json.loads(cli("agent", "add", "mcp-agent", "--runtime", "codex", "--json", env=env).stdout)[
        "api_key"
    ]
    try:
        yield daemon, key, env
    finally:
        daemon.stop()


async def open_at(session: ClientSession, revision: str) -> None:
    """Open the session at exactly ``revision``: the handshake, or the 2026-07-28 discover."""
    if revision in MODERN_PROTOCOL_VERSIONS:
        result = await session.discover()
        assert session.protocol_version == revision and revision in result.supported_versions
        return
    result = await session.send_request(
        types.InitializeRequest(
            params=types.InitializeRequestParams(
                protocol_version=revision,
                capabilities=types.ClientCapabilities(),
                client_info=types.Implementation(name="e2e", version="1"),
            )
        ),
        types.InitializeResult,
    )
    assert result.protocol_version == revision
    session.adopt(result)
    await session.send_notification(types.InitializedNotification())


def data_of(result: types.CallToolResult, revision: str) -> dict[str, Any]:
    """The tool's data: structuredContent from 2025-06-18 on (equal to the JSON text, kept for
    older clients), the JSON text before."""
    assert not result.is_error, result.content
    text = json.loads(result.content[0].text)
    if is_version_at_least(revision, STRUCTURED_SINCE):
        assert result.structured_content == text
    else:
        assert result.structured_content is None
    return text


async def exercise(session: ClientSession, revision: str, transport: str) -> None:
    """Every tool, the resources, and the error answers, at ``revision``."""
    await open_at(session, revision)
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == EXPECTED_TOOLS
    search = tools["search"]
    assert search.input_schema["required"] == ["query"]
    if is_version_at_least(revision, STRUCTURED_SINCE):
        assert search.title == "Search memory" and search.output_schema["required"] == ["items"]
    if is_version_at_least(revision, "2025-03-26"):  # annotations came with 2025-03-26
        assert search.annotations.read_only_hint is True and search.annotations.open_world_hint is False
        assert tools["remember"].annotations.read_only_hint is False
        assert tools["remember"].annotations.idempotent_hint is False
        assert tools["remember"].annotations.destructive_hint is False
    marker = f"MCP 写入的决定 {transport} {revision}: use SQLite"
    pack = data_of(await session.call_tool("context_pack", {"project_key": "mcp-demo"}), revision)
    assert pack["summary_markdown"].startswith("# MemoryCloud Runtime Context Pack")
    remembered = data_of(
        await session.call_tool(
            "remember",
            {"summary": marker, "delta_type": "decision", "importance": 4, "project_key": "mcp-demo"},
        ),
        revision,
    )
    found = data_of(await session.call_tool("search", {"query": marker}), revision)
    assert found["items"] and found["items"][0]["id"] == remembered["memory_id"]
    memory = data_of(await session.call_tool("get_memory", {"memory_id": remembered["memory_id"]}), revision)
    assert memory["content"].startswith(marker)
    missing = await session.call_tool("get_memory", {"memory_id": "mem_nope"})
    assert missing.is_error and "404" in missing.content[0].text
    # Arguments that do not fit the schema: a tool result the model can correct itself from.
    invalid = await session.call_tool("search", {"query": "x", "limit": 500})
    assert invalid.is_error and "limit" in invalid.content[0].text and "500" in invalid.content[0].text
    no_query = await session.call_tool("search", {})
    assert no_query.is_error and "'query' is a required property" in no_query.content[0].text
    with pytest.raises(MCPError) as unknown:  # an unknown tool is a protocol error
        await session.call_tool("drop_everything", {})
    assert unknown.value.code == types.INVALID_PARAMS
    uris = {str(r.uri) for r in (await session.list_resources()).resources}
    assert "memorycloud://context-pack/current" in uris
    current = (await session.read_resource("memorycloud://context-pack/current")).contents[0].text
    if revision in MODERN_PROTOCOL_VERSIONS:  # no session: the pack of the workspace, not mcp-demo
        assert current.startswith("# MemoryCloud Runtime Context Pack")
    else:  # the session remembers the project of its last pack
        assert marker in current


@pytest.mark.parametrize("revision", REVISIONS)
async def test_streamable_http_at_each_revision(served, revision):
    daemon, key, _ = served
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30)
    async with http, streamable_http_client(f"{daemon.url}/mcp", http_client=http) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await exercise(session, revision, "http")


@pytest.mark.parametrize("revision", REVISIONS)
async def test_stdio_at_each_revision(served, revision):
    _, key, env = served
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "daemon", "mcp"], env={**env, "MEMORYCLOUD_API_KEY": key}
    )
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(params, errlog=errlog) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await exercise(session, revision, "stdio")
        errlog.seek(0)
        # Runtimes show a server's stderr as errors: a normal session writes nothing there.
        assert errlog.read() == ""


async def test_stdio_without_a_key_still_serves_and_says_what_to_fix(tmp_path):
    """No key and a home that holds nothing: the server still initializes and lists its
    tools (a runtime that waits for it must not fail), a tool call names the fix, and stderr
    has that one line."""
    env = {"PATH": os.environ.get("PATH", ""), "MEMORYCLOUD_HOME": str(tmp_path / "nothing-here")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "daemon", "mcp"], env=env, cwd=str(tmp_path)
    )
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(params, errlog=errlog) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                assert {t.name for t in (await session.list_tools()).tools} == EXPECTED_TOOLS
                answer = await session.call_tool("search", {"query": "anything"})
                assert answer.is_error and "no API key" in answer.content[0].text
                assert "memorycloud mcp install" in answer.content[0].text
        errlog.seek(0)
        lines = errlog.read().splitlines()
    assert len(lines) == 1 and "no API key" in lines[0]


# -- the HTTP transport's rules, on the wire ----------------------------------------------


def post(
    daemon: DaemonProcess,
    key: str,
    body: Any,
    session: str | None = None,
    version: str | None = None,
    raw: bytes | None = None,
) -> httpx.Response:
    headers = {
        "Authorization": f"Bearer {key}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    if session:
        headers["Mcp-Session-Id"] = session
    if version:
        headers["MCP-Protocol-Version"] = version
    return httpx.post(
        f"{daemon.url}/mcp", content=raw if raw is not None else json.dumps(body), headers=headers, timeout=30
    )


def initialize(daemon: DaemonProcess, key: str, revision: str) -> str:
    answer = post(
        daemon,
        key,
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": revision,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
    )
    assert answer.status_code == 200 and answer.json()["result"]["protocolVersion"] == revision
    session = answer.headers["Mcp-Session-Id"]
    assert (
        post(
            daemon, key, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session, revision
        ).status_code
        == 202
    )
    return session


PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
LIST = {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}


@pytest.mark.parametrize("revision", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_batches_are_refused_where_the_revision_has_none(served, revision):
    daemon, key, _ = served
    session = initialize(daemon, key, revision)
    answer = post(daemon, key, [PING, LIST], session, revision)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == -32600
    assert "batch" in answer.json()["error"]["message"]


def test_a_2025_03_26_session_takes_batches(served):
    daemon, key, _ = served
    session = initialize(daemon, key, "2025-03-26")
    answer = post(
        daemon,
        key,
        [PING, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}, LIST],
        session,
        "2025-03-26",
    )
    assert answer.status_code == 200
    assert [a["id"] for a in answer.json()] == [7, 8]  # the notification is not answered
    assert {t["name"] for t in answer.json()[1]["result"]["tools"]} == EXPECTED_TOOLS
    only_notes = post(
        daemon,
        key,
        [{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}],
        session,
        "2025-03-26",
    )
    assert (only_notes.status_code, only_notes.content) == (202, b"")


def test_protocol_version_header(served):
    daemon, key, _ = served
    session = initialize(daemon, key, "2025-11-25")
    # Missing: the server assumes 2025-03-26 (the specification's rule) and answers.
    assert post(daemon, key, PING, session).json()["result"] == {}
    refused = post(daemon, key, PING, session, "1999-01-01")
    assert refused.status_code == 400


def test_notifications_get_202_and_no_body(served):
    daemon, key, _ = served
    session = initialize(daemon, key, "2025-11-25")
    answer = post(
        daemon,
        key,
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}},
        session,
        "2025-11-25",
    )
    assert (answer.status_code, answer.content) == (202, b"")
    assert "Content-Type" not in answer.headers


@pytest.mark.parametrize(
    "raw",
    [b'{"jsonrpc": "2.0", ', b'{"jsonrpc": "2.0", "id": 1}', b'"ping"'],
    ids=["truncated", "no-method", "a-string"],
)
def test_malformed_messages_get_a_generic_error(served, raw):
    daemon, key, _ = served
    answer = post(daemon, key, None, raw=raw)
    error = answer.json()["error"]
    assert answer.status_code == 400 and error["code"] in (-32700, -32600)
    assert "pydantic" not in answer.text and "Traceback" not in answer.text and "line" not in error["message"]


def test_a_deleted_session_is_gone(served):
    daemon, key, _ = served
    session = initialize(daemon, key, "2025-11-25")
    headers = {
        "Authorization": f"Bearer {key}",
        "Mcp-Session-Id": session,
        "MCP-Protocol-Version": "2025-11-25",
    }
    assert httpx.delete(f"{daemon.url}/mcp", headers=headers).status_code == 200
    assert post(daemon, key, PING, session, "2025-11-25").status_code == 404


def test_http_needs_a_key(served):
    daemon, _, _ = served
    response = httpx2.post(f"{daemon.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401


def test_another_agents_key_cannot_use_a_session(served):
    daemon, key, env = served
    other = json.loads(cli("agent", "add", "other-agent", "--runtime", "codex", "--json", env=env).stdout)[
        "api_key"
    ]
    session = initialize(daemon, key, "2025-11-25")
    assert post(daemon, other, PING, session, "2025-11-25").status_code == 404
    assert post(daemon, key, PING, session, "2025-11-25").status_code == 200
