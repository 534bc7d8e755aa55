"""The official MCP SDK's own client against the daemon: streamable HTTP on /mcp and stdio
through `memorycloud mcp`."""

from __future__ import annotations

import json
import os
import sys

import httpx2
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

EXPECTED_TOOLS = {"search", "get_memory", "remember", "context_pack"}


async def exercise(session: ClientSession) -> None:
    """List the tools and call each one; read the context-pack resources."""
    await session.initialize()
    tools = await session.list_tools()
    assert {t.name for t in tools.tools} == EXPECTED_TOOLS
    pack = await session.call_tool("context_pack", {"project_key": "mcp-demo"})
    assert not pack.is_error
    assert json.loads(pack.content[0].text)["summary_markdown"].startswith("# MemoryCloud Runtime Context Pack")
    remembered = await session.call_tool("remember", {"summary": "MCP 写入的决定: use SQLite",
                                                      "delta_type": "decision", "importance": 4,
                                                      "project_key": "mcp-demo"})
    assert not remembered.is_error, remembered.content[0].text
    memory_id = json.loads(remembered.content[0].text)["memory_id"]
    found = await session.call_tool("search", {"query": "MCP 写入的决定"})
    items = json.loads(found.content[0].text)["items"]
    assert items and items[0]["id"] == memory_id
    memory = await session.call_tool("get_memory", {"memory_id": memory_id})
    assert json.loads(memory.content[0].text)["content"].startswith("MCP 写入的决定")
    missing = await session.call_tool("get_memory", {"memory_id": "mem_nope"})
    assert missing.is_error and "404" in missing.content[0].text
    resources = await session.list_resources()
    uris = {str(r.uri) for r in resources.resources}
    assert "memorycloud://context-pack/current" in uris
    current = await session.read_resource("memorycloud://context-pack/current")
    assert "MCP 写入的决定" in current.contents[0].text


async def test_streamable_http_with_the_sdk_client(daemon, agent_key):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {agent_key}"}, timeout=30)
    async with http, streamable_http_client(f"{daemon.url}/mcp", http_client=http) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            await exercise(session)


async def test_stdio_with_the_sdk_client(daemon, agent_key):
    params = StdioServerParameters(command=sys.executable, args=["-m", "daemon", "mcp"],
                                   env={**os.environ, "MEMORYCLOUD_API_KEY": agent_key})
    async with stdio_client(params) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            await exercise(session)


async def test_http_needs_a_key(daemon):
    response = httpx2.post(f"{daemon.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401
