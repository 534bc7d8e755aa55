"""Call an ASGI application (the MCP SDK's streamable HTTP session manager) from an aiohttp
handler, so the daemon keeps one HTTP server, one auth layer and one endpoint registry.

The answer is buffered: the session manager runs in JSON-response mode and ``GET /mcp`` (the
only long-lived stream) is answered by the daemon itself, so every answer is one body.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

AsgiApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[MutableMapping[str, Any]]],
        Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ],
    Awaitable[None],
]
# Framing headers aiohttp sets itself for the body it sends.
_HOP_HEADERS = {"content-length", "transfer-encoding", "connection"}


async def call_asgi(
    app: AsgiApp,
    request: web.Request,
    body: bytes,
    *,
    headers: Iterable[tuple[str, str]] | None = None,
    extra_scope: dict[str, Any] | None = None,
) -> web.Response:
    """The application's answer to ``request`` with ``body`` (and ``headers`` instead of the
    request's own, when given)."""
    pairs = list(request.headers.items()) if headers is None else list(headers)
    host, _, port = (request.host or "127.0.0.1").partition(":")
    peer = request.transport.get_extra_info("peername") if request.transport else None
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode("utf-8"),
        # ASGI's query_string is the percent-encoded bytes; request.query_string is decoded
        # on some aiohttp versions (3.9: a non-Latin-1 query made this a 500).
        "query_string": request.rel_url.raw_query_string.encode("latin-1", "backslashreplace"),
        "root_path": "",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in pairs],
        "server": (host, int(port) if port.isdigit() else 80),
        "client": tuple(peer[:2]) if isinstance(peer, tuple) else None,
        **(extra_scope or {}),
    }
    answered = asyncio.Event()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client is "connected" until the answer is complete
        return {"type": "http.disconnect"}

    status, out_headers, chunks = 500, CIMultiDict[str](), []

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
            for name, value in message.get("headers", []):
                name_text = name.decode("latin-1")
                if name_text.lower() not in _HOP_HEADERS:
                    out_headers.add(name_text, value.decode("latin-1"))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                answered.set()

    try:
        await app(scope, receive, send)
    finally:
        answered.set()
    payload = b"".join(chunks)
    if not payload:
        out_headers.popall("Content-Type", None)  # 202 and 204 carry no body, so no type
    return web.Response(status=status, body=payload or None, headers=out_headers)
