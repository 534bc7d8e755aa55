"""/mcp in the real app (aiohttp test server, the SDK's own client): list pagination, a tool
that fails inside answers without its exception text, and sessions that end (deleted, idle,
over the cap) leave nothing behind in the daemon."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from daemon import keys
from daemon.api import mcp_http
from daemon.mcp import server as mcp_server
from daemon.mcp.tools import DaemonApi

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


async def with_session(api, body: Any) -> Any:
    """``body`` through the SDK client's session on the test server."""
    http = httpx2.AsyncClient(headers=api.auth(), timeout=30)
    async with http, streamable_http_client(str(api.client.make_url("/mcp")), http_client=http) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return await body(session)


async def test_tools_and_resources_come_in_pages(api, monkeypatch):
    monkeypatch.setitem(mcp_server.PAGE_SIZE, "tools", 3)
    monkeypatch.setitem(mcp_server.PAGE_SIZE, "resources", 1)

    async def body(session: ClientSession) -> None:
        first = await session.list_tools()
        assert len(first.tools) == 3 and first.next_cursor
        rest = await session.list_tools(params=types.PaginatedRequestParams(cursor=first.next_cursor))
        assert len(rest.tools) == 1 and rest.next_cursor is None
        assert {t.name for t in first.tools + rest.tools} == {"search", "get_memory", "remember", "context_pack"}
        await session.call_tool("context_pack", {"project_key": "paged"})  # a second resource
        page = await session.list_resources()
        assert len(page.resources) == 1 and page.next_cursor
        second = await session.list_resources(params=types.PaginatedRequestParams(cursor=page.next_cursor))
        assert str(second.resources[0].uri).startswith("memorycloud://context-packs/ctxp_")
        with pytest.raises(MCPError) as bad:  # the spec: an invalid cursor is INVALID_PARAMS
            await session.list_tools(params=types.PaginatedRequestParams(cursor="not-ours"))
        assert bad.value.code == types.INVALID_PARAMS

    await with_session(api, body)


async def test_a_failure_inside_a_tool_is_logged_not_answered(api, caplog):
    def explode(request: httpx.Request) -> httpx.Response:
        raise RuntimeError("secret internal detail /etc/shadow")

    mcp = api.client.app[keys.MCP_HTTP]
    mcp.api = DaemonApi(transport=httpx.MockTransport(explode))  # the HTTP layer breaks

    async def body(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool("search", {"query": "anything"})

    result = await with_session(api, body)
    assert result.is_error and "secret" not in result.content[0].text
    assert "daemon log" in result.content[0].text
    assert "secret internal detail" in caplog.text  # the detail is in the log


async def open_session(api) -> str:
    response = await api.client.post("/mcp", json=INIT, headers={**api.auth(), **HEADERS})
    assert response.status == 200
    return response.headers["Mcp-Session-Id"]


async def ping(api, session: str) -> int:
    response = await api.client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                     headers={**api.auth(), **HEADERS, "Mcp-Session-Id": session})
    return response.status


async def test_a_deleted_session_leaves_no_state(api):
    mcp = api.client.app[keys.MCP_HTTP]
    session = await open_session(api)
    assert session in mcp.states
    response = await api.client.delete("/mcp", headers={**api.auth(), **HEADERS, "Mcp-Session-Id": session})
    assert response.status == 200 and session not in mcp.states
    assert await ping(api, session) == 404


@pytest.fixture
def short_sessions(monkeypatch):
    """Sessions that idle out after 0.3 s, at most two at a time (read when the app starts)."""
    monkeypatch.setattr(mcp_http, "IDLE_SECONDS", 0.3)
    monkeypatch.setattr(mcp_http, "MAX_SESSIONS", 2)


@pytest.fixture
async def short_api(short_sessions, api):
    return api


async def test_an_idle_session_is_closed_and_forgotten(short_api):
    api = short_api
    mcp = api.client.app[keys.MCP_HTTP]
    session = await open_session(api)
    await asyncio.sleep(0.8)
    assert await ping(api, session) == 404  # the SDK closed it
    assert session not in mcp.states  # and the daemon dropped what it kept for it


async def test_past_the_cap_a_new_session_is_refused_and_nothing_grows(short_api):
    api = short_api
    mcp = api.client.app[keys.MCP_HTTP]
    first, second = await open_session(api), await open_session(api)
    refused = await api.client.post("/mcp", json=INIT, headers={**api.auth(), **HEADERS})
    assert refused.status == 503 and "Mcp-Session-Id" not in refused.headers
    assert set(mcp.states) == {first, second}
    await api.client.delete("/mcp", headers={**api.auth(), **HEADERS, "Mcp-Session-Id": first})
    third = await open_session(api)
    assert set(mcp.states) == {second, third}
