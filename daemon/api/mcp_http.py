"""MCP's streamable HTTP transport on the daemon (``/mcp``), in a small aiohttp handler.

POST carries JSON-RPC messages and is answered with JSON (a client must accept
application/json and text/event-stream; we always answer JSON, which the specification
allows). ``initialize`` opens a session named by the ``Mcp-Session-Id`` header; DELETE ends
it. GET would open a server-to-client stream, which this server does not offer (405).
"""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from typing import Any

from aiohttp import web

from daemon import keys
from daemon.endpoints import Call, Endpoint, bearer_key
from daemon.mcp.protocol import McpEndpoint
from daemon.mcp.tools import DaemonApi
from state.errors import InvalidRequest, NotFound

MAX_SESSIONS = 500
SESSION_HEADER = "Mcp-Session-Id"


class McpSessions:
    """Open MCP sessions, each bound to the key that opened it (oldest dropped past the cap)."""

    def __init__(self) -> None:
        self.sessions: OrderedDict[str, tuple[str, McpEndpoint]] = OrderedDict()

    def open(self, key: str, endpoint: McpEndpoint) -> str:
        session_id = secrets.token_hex(16)
        self.sessions[session_id] = (key, endpoint)
        while len(self.sessions) > MAX_SESSIONS:
            self.sessions.popitem(last=False)  # its client re-initializes on the 404
        return session_id

    def get(self, session_id: str | None, key: str) -> McpEndpoint:
        if not session_id:
            raise InvalidRequest(f"missing {SESSION_HEADER} header: send initialize first")
        found = self.sessions.get(session_id)
        if found is None or found[0] != key:
            raise NotFound("unknown MCP session: initialize again")
        self.sessions.move_to_end(session_id)
        return found[1]

    async def close(self, session_id: str, key: str) -> None:
        endpoint = self.get(session_id, key)
        del self.sessions[session_id]
        await endpoint.api.aclose()

    async def close_all(self) -> None:
        for _, endpoint in self.sessions.values():
            await endpoint.api.aclose()
        self.sessions.clear()


def _sessions(request: web.Request) -> McpSessions:
    return request.app[keys.MCP_SESSIONS]


async def post(request: web.Request, call: Call) -> web.StreamResponse:
    call.require_identity()
    key = bearer_key(request) or ""
    try:
        payload = json.loads(await request.read() or b"null")
    except (ValueError, RecursionError):
        return web.json_response({"jsonrpc": "2.0", "id": None,
                                  "error": {"code": -32700, "message": "parse error"}}, status=400)
    if isinstance(payload, list) and not payload:  # JSON-RPC 2.0: an empty batch is invalid
        return web.json_response({"jsonrpc": "2.0", "id": None,
                                  "error": {"code": -32600, "message": "invalid request: empty batch"}})
    messages = payload if isinstance(payload, list) else [payload]
    sessions = _sessions(request)
    headers: dict[str, str] = {}
    if any(isinstance(m, dict) and m.get("method") == "initialize" for m in messages):
        base = f"http://{request.host}"
        endpoint = McpEndpoint(DaemonApi(base, key))
        headers[SESSION_HEADER] = sessions.open(key, endpoint)
    else:
        endpoint = sessions.get(request.headers.get(SESSION_HEADER), key)
    answers = [a for m in messages if (a := await endpoint.handle(m)) is not None]
    if not answers:
        return web.Response(status=202, headers=headers)
    body: Any = answers if isinstance(payload, list) else answers[0]
    return web.json_response(body, headers=headers, dumps=lambda v: json.dumps(v, ensure_ascii=False))


async def delete(request: web.Request, call: Call) -> web.StreamResponse:
    call.require_identity()
    await _sessions(request).close(request.headers.get(SESSION_HEADER, ""), bearer_key(request) or "")
    return web.Response(status=204)


async def get(request: web.Request, call: Call) -> web.StreamResponse:
    call.require_identity()
    return web.Response(status=405, headers={"Allow": "POST, DELETE"},
                        text="this MCP server offers no server-to-client stream")


ENDPOINTS = [
    Endpoint("POST", "/mcp", post, "MCP over streamable HTTP (JSON-RPC in, JSON out).",
             scope="memory:read"),
    Endpoint("DELETE", "/mcp", delete, "End an MCP session (Mcp-Session-Id).", scope="memory:read"),
    Endpoint("GET", "/mcp", get, "No server-to-client stream (405).", scope="memory:read"),
]
