"""The MCP tools and resources, carried out through the daemon's own HTTP API with the
caller's key, so MCP clients get exactly the same auth, gates and results as AMP agents.

``remember`` handles the bootstrap receipt for the agent: it fetches a context pack when it
has no receipt, and again when the daemon answers 428.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from startup_items.launcher import error_message

if TYPE_CHECKING:
    import httpx
    from jsonschema import Draft202012Validator

_STR = {"type": "string"}
_MEMORY_ITEM = {
    "type": "object",
    "required": ["id", "namespace", "content"],
    "properties": {
        "id": _STR,
        "namespace": _STR,
        "dialect": _STR,
        "memory_type": _STR,
        "title": {"type": ["string", "null"]},
        "content": _STR,
        "score": {"type": "number"},
        "path": {"type": ["string", "null"]},
    },
}


def _hints(title: str, *, read_only: bool, idempotent: bool) -> dict[str, Any]:
    # Every tool acts on this machine's memory only (openWorldHint false); none deletes or
    # overwrites (remember appends a new memory), so none is destructive.
    return {
        "title": title,
        "readOnlyHint": read_only,
        "destructiveHint": False,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }


TOOLS: list[dict[str, Any]] = [
    {
        "name": "search",
        "title": "Search memory",
        "description": "Search memory (hybrid BM25 + vectors; Chinese and English)."
        " Defaults to your workspace; namespace may name a Memory Store (memstore_...) or an"
        " agent-memory1.0 user (mem1:<user>:<scope>).",
        "inputSchema": {
            "type": "object",
            "required": ["query"],
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "namespace": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            },
        },
        "outputSchema": {
            "type": "object",
            "required": ["items"],
            "properties": {"items": {"type": "array", "items": _MEMORY_ITEM}},
        },
        "annotations": _hints("Search memory", read_only=True, idempotent=True),
    },
    {
        "name": "get_memory",
        "title": "Get one memory",
        "description": "One memory by id, with provenance.",
        "inputSchema": {
            "type": "object",
            "required": ["memory_id"],
            "properties": {"memory_id": {"type": "string", "minLength": 1}},
        },
        "outputSchema": {
            "type": "object",
            "required": ["id", "namespace", "content", "version"],
            "properties": {
                "id": _STR,
                "namespace": _STR,
                "content": _STR,
                "version": {"type": "integer"},
                "memory_type": _STR,
                "provenance": {},
            },
        },
        "annotations": _hints("Get one memory", read_only=True, idempotent=True),
    },
    {
        "name": "remember",
        "title": "Remember a change",
        "description": "Write a small change back (a memory delta); the receipt is handled for you.",
        "inputSchema": {
            "type": "object",
            "required": ["summary"],
            "properties": {
                "summary": {"type": "string", "minLength": 1},
                "why_it_matters": {"type": "string"},
                "delta_type": {"type": "string", "description": "decision, failure, task_event, ..."},
                "importance": {"type": "integer", "minimum": 1, "maximum": 5},
                "retrieval_triggers": {"type": "array", "items": {"type": "string"}},
                "project_key": {"type": "string"},
            },
        },
        "outputSchema": {
            "type": "object",
            "required": ["memory_id", "delta_id", "receipt_id"],
            "properties": {"memory_id": _STR, "delta_id": _STR, "receipt_id": _STR},
        },
        # Each call writes one more memory: not idempotent.
        "annotations": _hints("Remember a change", read_only=False, idempotent=False),
    },
    {
        "name": "context_pack",
        "title": "Get the context pack",
        "description": "The Runtime Context Pack for a project: the summary to keep in mind, with"
        " retrieval handles.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "project_key": {"type": "string"},
                "project_binding_id": {"type": "string"},
                "runtime": {"type": "string"},
            },
        },
        "outputSchema": {
            "type": "object",
            "required": ["context_pack_id", "summary_markdown", "retrieval_handles", "receipt_id"],
            "properties": {
                "context_pack_id": _STR,
                "summary_markdown": _STR,
                "retrieval_handles": {"type": "array"},
                "receipt_id": _STR,
            },
        },
        # It records a receipt for later writes but changes no memory.
        "annotations": _hints("Get the context pack", read_only=True, idempotent=True),
    },
]
TOOLS_BY_NAME = {tool["name"]: tool for tool in TOOLS}
CURRENT_PACK_URI = "memorycloud://context-pack/current"
PACK_URI_PREFIX = "memorycloud://context-packs/"
RESOURCE_TEMPLATES = [
    {
        "uriTemplate": PACK_URI_PREFIX + "{context_pack_id}",
        "name": "Context pack",
        "mimeType": "text/markdown",
    }
]


class ToolError(Exception):
    """A tool call that failed in a way the model should see (isError: true)."""


class UnknownResource(Exception):
    """A resources/read of a URI this server does not serve."""


@dataclass
class ToolSession:
    """Per MCP session: the receipt to write with and the packs fetched so far."""

    receipt_id: str | None = None
    project_key: str | None = None
    packs: dict[str, dict[str, Any]] = field(default_factory=dict)


class DaemonApi:
    """The daemon's HTTP API: one connection pool, the caller's key on each call."""

    def __init__(self, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        # Made at the first call: a new client loads the CA bundle (~40 ms, measured), which
        # every daemon start paid for although most never serve MCP over HTTP.
        if self._client is None:
            import httpx  # imported with the first client, like jsonschema (_validator)

            # Only this daemon's own URL is called: never through a proxy that the agent's
            # environment names (HTTP_PROXY), which would not reach 127.0.0.1.
            self._client = httpx.AsyncClient(timeout=30, transport=self._transport, trust_env=False)
        return self._client

    async def call(
        self,
        url: str,
        key: str,
        method: str,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, Any]]:
        import httpx

        try:
            response = await self.client.request(
                method, url, json=body, headers={"Authorization": f"Bearer {key}", **(headers or {})}
            )
        except httpx.HTTPError:
            raise ToolError(
                f"the MemoryCloud daemon is not reachable at {httpx.URL(url).host}:"
                f"{httpx.URL(url).port}; start it with `memorycloud daemon start`"
            ) from None
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, {}

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


@dataclass
class ToolContext:
    """What one tool call acts through: the daemon, the caller's key, the session state."""

    api: DaemonApi
    base_url: str
    key: str
    session: ToolSession
    # Why this server cannot reach the daemon (no key, ...): every call answers with it, so
    # the runtime still gets a working server whose tools name the fix.
    problem: str | None = None

    async def call(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, Any]]:
        if self.problem is not None:
            raise ToolError(self.problem)
        return await self.api.call(self.base_url + path, self.key, method, body, headers)


@cache
def _validator(name: str) -> Draft202012Validator:
    # jsonschema is imported at the first tool call, not with the daemon: it took 137 ms of the
    # daemon's 1.3 s import (python -X importtime, 2026-12-03), and most daemons never serve MCP.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(TOOLS_BY_NAME[name]["inputSchema"])


def invalid_arguments(name: str, args: dict[str, Any]) -> str | None:
    """Why ``args`` do not fit the tool's inputSchema (None when they do), for the model."""
    errors = sorted(_validator(name).iter_errors(args), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    parts = [f"{'/'.join(map(str, e.absolute_path)) or 'arguments'}: {e.message}" for e in errors[:5]]
    return f"invalid arguments for {name}: " + "; ".join(parts)


def _fail(status: int, data: dict[str, Any]) -> ToolError:
    return ToolError(f"daemon answered {status}: {error_message(data, 'request failed')}")


async def _pack(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    body = {k: args[k] for k in ("project_key", "project_binding_id", "runtime") if args.get(k)}
    body.setdefault("runtime", "mcp")
    status, pack = await ctx.call("POST", "/api/agent/bootstrap/context", body)
    if status != 200:
        raise _fail(status, pack)
    session = ctx.session
    session.receipt_id = pack["receipt_id"]
    session.project_key = pack.get("project_key")
    session.packs[pack["context_pack_id"]] = pack
    return pack


async def call_tool(ctx: ToolContext, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Run one tool with valid arguments; returns its structured content (ToolError: the
    model sees the message)."""
    if name == "search":
        path = f"/api/agent/search?q={quote(args['query'])}&limit={int(args.get('limit') or 10)}"
        if args.get("namespace"):
            path += f"&namespace={quote(str(args['namespace']), safe='')}"
        status, data = await ctx.call("GET", path)
        if status != 200:
            raise _fail(status, data)
        return {
            "items": [
                {
                    k: item[k]
                    for k in (
                        "id",
                        "namespace",
                        "dialect",
                        "memory_type",
                        "title",
                        "content",
                        "score",
                        "path",
                    )
                }
                for item in data["items"]
            ]
        }
    if name == "get_memory":
        status, data = await ctx.call("GET", f"/api/agent/memories/{quote(str(args['memory_id']), safe='')}")
        if status != 200:
            raise _fail(status, data)
        return data["memory"]
    if name == "context_pack":
        pack = await _pack(ctx, args)
        return {
            "context_pack_id": pack["context_pack_id"],
            "summary_markdown": pack["summary_markdown"],
            "retrieval_handles": pack["retrieval_handles"],
            "receipt_id": pack["receipt_id"],
        }
    if name == "remember":
        return await _remember(ctx, args)
    raise KeyError(name)  # callers check TOOLS_BY_NAME first


async def _remember(ctx: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    body = {
        k: args[k]
        for k in (
            "summary",
            "why_it_matters",
            "delta_type",
            "importance",
            "retrieval_triggers",
            "project_key",
        )
        if args.get(k) is not None
    }
    session = ctx.session
    for attempt in range(2):
        if session.receipt_id is None or (
            args.get("project_key") and args["project_key"] != session.project_key
        ):
            await _pack(ctx, {"project_key": args.get("project_key")})
        status, data = await ctx.call(
            "POST",
            "/api/agent/memory-delta",
            body,
            headers={"X-AMP-Context-Receipt": session.receipt_id or ""},
        )
        if status == 428 and attempt == 0:  # receipt expired or unknown: bootstrap again
            session.receipt_id = None
            continue
        if status != 200:
            raise _fail(status, data)
        return {
            "memory_id": data["delta"]["memory_id"],
            "delta_id": data["delta"]["id"],
            "receipt_id": session.receipt_id,
        }
    raise ToolError("the daemon kept refusing the receipt; call context_pack and try again")


def list_resources(session: ToolSession) -> list[dict[str, Any]]:
    resources = [
        {
            "uri": CURRENT_PACK_URI,
            "name": "Current context pack",
            "mimeType": "text/markdown",
            "description": "A fresh Runtime Context Pack for your workspace (summary only).",
        }
    ]
    resources += [
        {"uri": PACK_URI_PREFIX + pack_id, "name": f"Context pack {pack_id}", "mimeType": "text/markdown"}
        for pack_id in session.packs
    ]
    return resources


async def read_resource(ctx: ToolContext, uri: str) -> dict[str, Any]:
    if uri == CURRENT_PACK_URI:
        pack = await _pack(ctx, {"project_key": ctx.session.project_key})
    elif uri.startswith(PACK_URI_PREFIX):
        pack_id = uri.removeprefix(PACK_URI_PREFIX)
        status, pack = await ctx.call("GET", f"/api/agent/context-packs/{quote(pack_id, safe='')}")
        if status == 404:
            raise UnknownResource(uri)
        if status != 200:
            raise _fail(status, pack)
    else:
        raise UnknownResource(uri)
    return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": pack["summary_markdown"]}]}


def tool_result(value: dict[str, Any]) -> dict[str, Any]:
    """Structured content, and the same JSON as text for clients older than 2025-06-18."""
    return {
        "content": [{"type": "text", "text": json.dumps(value, ensure_ascii=False, indent=2)}],
        "structuredContent": value,
        "isError": False,
    }


def tool_error(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}
