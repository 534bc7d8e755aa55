"""MCP's streamable HTTP transport on the daemon (``/mcp``): the official SDK's
``StreamableHTTPSessionManager`` (JSON-response mode) serving the same protocol core as stdio
(daemon.mcp.server), called from the daemon's own aiohttp endpoints, so auth (agent key,
``memory:read``), the Host/Origin guard and the endpoint registry stay the daemon's.

The SDK does the transport: sessions (``Mcp-Session-Id``, bound to the identity that opened
them, 404 once ended, closed after 30 idle minutes, 503 past ``MAX_SESSIONS``), the
``MCP-Protocol-Version`` header (absent: 2025-03-26 as the specification says; unsupported:
400), 202 with no body for notifications, the 2026-07-28 per-request envelope, DELETE.

In front of it, this module answers what the SDK would answer with parser text:
unparsable JSON and malformed messages get a generic JSON-RPC error, and batches are
refused, except in sessions negotiated at 2025-03-26, the one revision whose transport
says servers MUST accept them (added there, removed in 2025-06-18); such a batch is served
message by message. ``GET /mcp`` is 405: this server sends nothing unprompted (no list
changes, no subscriptions), and a standing stream would hold a connection and keep its
session from ever idling out.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from daemon import keys
from daemon.endpoints import Call, Endpoint
from daemon.mcp.asgi import call_asgi
from daemon.mcp.tools import DaemonApi, ToolContext, ToolSession
from state.identities import IdentityRecord

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

# JSON-RPC 2.0's codes, named here so that this module needs the SDK only once /mcp is used.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_SESSIONS = 500
IDLE_SECONDS = 30 * 60
SESSION_HEADER = "Mcp-Session-Id"
BATCH_REVISION = "2025-03-26"


@dataclass
class SessionState:
    """What this daemon keeps for one SDK session: its revision and the tools' state."""

    protocol_version: str
    owner: str  # the identity that opened it: only its 404 means the SDK has ended it
    tools: ToolSession = field(default_factory=ToolSession)


class McpHttp:
    """The session manager, the protocol core it serves, and the per-session tool state.

    Sessions hold no connection of their own: every tool call goes through one shared
    ``DaemonApi`` with the caller's key, so a session that ends leaves nothing open; its
    small state is dropped when the client ends it, when the SDK no longer knows it, or
    past ``MAX_SESSIONS`` (oldest first)."""

    def __init__(self, api: DaemonApi | None = None) -> None:
        self.api = api or DaemonApi()
        self.states: OrderedDict[str, SessionState] = OrderedDict()
        self._manager: StreamableHTTPSessionManager | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._starting = asyncio.Lock()

    async def manager(self) -> StreamableHTTPSessionManager:
        """The SDK's session manager, started at the first /mcp request. Importing the SDK
        costs about 1.2 s of CPU (its pydantic models; 2.2 s against 1.0 s for importing
        daemon.app), which every daemon start paid although most runtimes use stdio."""
        async with self._starting:
            if self._manager is None:
                from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

                from daemon.mcp.server import build_server

                manager = StreamableHTTPSessionManager(
                    build_server(self._context),
                    json_response=True,
                    max_sessions=MAX_SESSIONS,
                    session_idle_timeout=IDLE_SECONDS,
                )
                self._task = await _run_in_own_task(manager, self._stopping)
                self._manager = manager
        return self._manager

    async def close(self) -> None:
        if self._task is not None:
            self._stopping.set()
            await self._task
        await self.api.aclose()

    def _context(self, ctx: ServerRequestContext[Any]) -> ToolContext:
        request = ctx.request
        if request is None:  # the SDK attaches the HTTP request to every message it routes
            raise RuntimeError("MCP request without its HTTP request")
        _, _, key = request.headers.get("authorization", "").partition(" ")
        session_id = request.headers.get(SESSION_HEADER)
        state = self.states.get(session_id) if session_id else None
        # 2026-07-28 requests carry no session: their tool state lives for the one request.
        tools = state.tools if state is not None else ToolSession()
        return ToolContext(self.api, f"http://{request.headers.get('host', '127.0.0.1')}", key.strip(), tools)

    def remember(self, session_id: str, protocol_version: str, owner: str) -> None:
        self.states[session_id] = SessionState(protocol_version, owner)
        while len(self.states) > MAX_SESSIONS:
            self.states.popitem(last=False)

    def forget(self, session_id: str | None, identity: IdentityRecord) -> None:
        """Drop a session's state once its owner learns it is over (another caller's 404
        says nothing about the session)."""
        state = self.states.get(session_id) if session_id else None
        if session_id and state is not None and state.owner == identity["id"]:
            del self.states[session_id]

    async def forward(self, request: web.Request, identity: IdentityRecord, body: bytes) -> web.Response:
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        manager = await self.manager()
        # The SDK binds each session to the principal that opened it (same identity or 404).
        user = AuthenticatedUser(AccessToken(token="", client_id=identity["id"], scopes=identity["scopes"]))
        return await call_asgi(manager.handle_request, request, body, extra_scope={"user": user})


async def _run_in_own_task(
    manager: StreamableHTTPSessionManager, stopping: asyncio.Event
) -> asyncio.Task[None]:
    """Run the session manager until ``stopping`` is set. Its task group lives in one task of
    its own: anyio requires a task group to be entered and left by the same task."""
    started = asyncio.Event()

    async def run() -> None:
        async with manager.run():
            started.set()
            await stopping.wait()

    task = asyncio.create_task(run())
    waiter = asyncio.ensure_future(started.wait())
    await asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED)
    if not waiter.done():
        waiter.cancel()
        task.result()  # start-up failed: raise why
    return task


async def mcp_context(app: web.Application) -> AsyncIterator[None]:
    """The MCP transport for the app's lifetime (its SDK part starts at the first request)."""
    mcp = McpHttp()
    app[keys.MCP_HTTP] = mcp
    try:
        yield
    finally:
        await mcp.close()


def _error(status: int, code: int, message: str) -> web.Response:
    return web.json_response(
        {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}, status=status
    )


def _valid_message(message: Any) -> bool:
    from mcp_types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        return False
    return True


async def _batch(
    mcp: McpHttp, request: web.Request, identity: IdentityRecord, batch: list[Any]
) -> web.Response:
    """A 2025-03-26 batch, one message at a time through the SDK; answers in order."""
    answers: list[Any] = []
    for message in batch:
        if not _valid_message(message) or (
            isinstance(message, dict) and message.get("method") == "initialize"
        ):
            # 2025-03-26: initialize MUST NOT be part of a batch.
            answers.append(
                {
                    "jsonrpc": "2.0",
                    "id": message.get("id") if isinstance(message, dict) else None,
                    "error": {"code": INVALID_REQUEST, "message": "invalid request"},
                }
            )
            continue
        answer = await mcp.forward(request, identity, json.dumps(message).encode("utf-8"))
        if answer.text:
            answers.append(json.loads(answer.text))
    if not answers:
        return web.Response(status=202)
    return web.json_response(answers, headers={SESSION_HEADER: request.headers[SESSION_HEADER]})


async def post(request: web.Request, call: Call) -> web.StreamResponse:
    identity = call.require_identity()
    mcp: McpHttp = request.app[keys.MCP_HTTP]
    body = await request.read()
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return _error(400, PARSE_ERROR, "parse error")
    session_id = request.headers.get(SESSION_HEADER)
    if isinstance(payload, list):
        state = mcp.states.get(session_id) if session_id else None
        if payload and state is not None and state.protocol_version == BATCH_REVISION:
            return await _batch(mcp, request, identity, payload)
        return _error(
            400,
            INVALID_REQUEST,
            "invalid request: JSON-RPC batches are not accepted (MCP removed them in 2025-06-18)",
        )
    if not _valid_message(payload):
        return _error(400, INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 message")
    answer = await mcp.forward(request, identity, body)
    opened = answer.headers.get(SESSION_HEADER)
    if payload.get("method") == "initialize" and answer.status == 200 and opened and not session_id:
        result = json.loads(answer.text or "{}").get("result") or {}
        mcp.remember(opened, str(result.get("protocolVersion", "")), identity["id"])
    elif answer.status == 404:
        mcp.forget(session_id, identity)
    return answer


async def delete(request: web.Request, call: Call) -> web.StreamResponse:
    identity = call.require_identity()
    mcp: McpHttp = request.app[keys.MCP_HTTP]
    answer = await mcp.forward(request, identity, b"")
    if answer.status < 300 or answer.status == 404:
        mcp.forget(request.headers.get(SESSION_HEADER), identity)
    return answer


async def get(request: web.Request, call: Call) -> web.StreamResponse:
    """405 in the daemon's error envelope, with ``Allow``: the transport's answer for a
    server that sends nothing unprompted."""
    call.require_identity()
    refusal = web.HTTPMethodNotAllowed("GET", ["POST", "DELETE"])
    refusal.headers["Allow"] = "POST, DELETE"  # as it always was (aiohttp's: "DELETE,POST")
    raise refusal


ENDPOINTS = [
    Endpoint("POST", "/mcp", post, "MCP over streamable HTTP (JSON-RPC in, JSON out).", scope="memory:read"),
    Endpoint("DELETE", "/mcp", delete, "End an MCP session (Mcp-Session-Id).", scope="memory:read"),
    Endpoint("GET", "/mcp", get, "No server-to-client stream (405).", scope="memory:read"),
]
