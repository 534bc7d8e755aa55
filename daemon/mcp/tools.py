"""The MCP tools and resources, carried out through the daemon's own HTTP API with the
caller's key, so MCP clients get exactly the same auth, gates and results as AMP agents.

``remember`` handles the bootstrap receipt for the agent: it fetches a context pack when it
has no receipt, and again when the daemon answers 428.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

TOOLS: list[dict[str, Any]] = [
    {"name": "search", "description": "Search memory (hybrid BM25 + vectors; Chinese and English)."
     " Defaults to your workspace; namespace may name a Memory Store (memstore_...) or an"
     " agent-memory1.0 user (mem1:<user>:<scope>).",
     "inputSchema": {"type": "object", "required": ["query"], "properties": {
         "query": {"type": "string"}, "namespace": {"type": "string"},
         "limit": {"type": "integer", "minimum": 1, "maximum": 50}}}},
    {"name": "get_memory", "description": "One memory by id, with provenance.",
     "inputSchema": {"type": "object", "required": ["memory_id"],
                     "properties": {"memory_id": {"type": "string"}}}},
    {"name": "remember", "description": "Write a small change back (a memory delta); the receipt"
     " is handled for you.",
     "inputSchema": {"type": "object", "required": ["summary"], "properties": {
         "summary": {"type": "string"}, "why_it_matters": {"type": "string"},
         "delta_type": {"type": "string", "description": "decision, failure, task_event, ..."},
         "importance": {"type": "integer", "minimum": 1, "maximum": 5},
         "retrieval_triggers": {"type": "array", "items": {"type": "string"}},
         "project_key": {"type": "string"}}}},
    {"name": "context_pack", "description": "The Runtime Context Pack for a project: the summary"
     " to keep in mind, with retrieval handles.",
     "inputSchema": {"type": "object", "properties": {
         "project_key": {"type": "string"}, "project_binding_id": {"type": "string"},
         "runtime": {"type": "string"}}}},
]
CURRENT_PACK_URI = "memorycloud://context-pack/current"


class ToolError(Exception):
    """A tool call that failed in a way the model should see (isError: true)."""


@dataclass
class ToolSession:
    """Per MCP session: the receipt to write with and the packs fetched so far."""

    receipt_id: str | None = None
    project_key: str | None = None
    packs: dict[str, dict[str, Any]] = field(default_factory=dict)
    last_pack_id: str | None = None


class DaemonApi:
    """The daemon's HTTP API with one key."""

    def __init__(self, base_url: str, key: str, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.client = httpx.AsyncClient(base_url=base_url, headers={"Authorization": f"Bearer {key}"},
                                        timeout=30, transport=transport)

    async def call(self, method: str, path: str, body: dict[str, Any] | None = None,
                   headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        response = await self.client.request(method, path, json=body, headers=headers)
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, {"error": {"message": response.text}}

    async def aclose(self) -> None:
        await self.client.aclose()


def _fail(status: int, data: dict[str, Any]) -> ToolError:
    message = (data.get("error") or {}).get("message") if isinstance(data.get("error"), dict) else None
    return ToolError(f"daemon answered {status}: {message or data}")


async def _pack(api: DaemonApi, session: ToolSession, args: dict[str, Any]) -> dict[str, Any]:
    body = {k: args[k] for k in ("project_key", "project_binding_id", "runtime") if args.get(k)}
    body.setdefault("runtime", "mcp")
    status, pack = await api.call("POST", "/api/agent/bootstrap/context", body)
    if status != 200:
        raise _fail(status, pack)
    session.receipt_id = pack["receipt_id"]
    session.project_key = pack.get("project_key")
    session.packs[pack["context_pack_id"]] = pack
    session.last_pack_id = pack["context_pack_id"]
    return pack


async def call_tool(api: DaemonApi, session: ToolSession, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Run one tool; returns structured content (raises ToolError for the model to see)."""
    if name == "search":
        if not isinstance(args.get("query"), str) or not args["query"].strip():
            raise ToolError("query is required")
        path = f"/api/agent/search?q={quote(args['query'])}&limit={int(args.get('limit') or 10)}"
        if args.get("namespace"):
            path += f"&namespace={quote(str(args['namespace']), safe='')}"
        status, data = await api.call("GET", path)
        if status != 200:
            raise _fail(status, data)
        return {"items": [{k: item[k] for k in ("id", "namespace", "dialect", "memory_type", "title",
                                                 "content", "score", "path")} for item in data["items"]]}
    if name == "get_memory":
        if not args.get("memory_id"):
            raise ToolError("memory_id is required")
        status, data = await api.call("GET", f"/api/agent/memories/{quote(str(args['memory_id']), safe='')}")
        if status != 200:
            raise _fail(status, data)
        return data["memory"]
    if name == "context_pack":
        pack = await _pack(api, session, args)
        return {"context_pack_id": pack["context_pack_id"], "summary_markdown": pack["summary_markdown"],
                "retrieval_handles": pack["retrieval_handles"], "receipt_id": pack["receipt_id"]}
    if name == "remember":
        if not isinstance(args.get("summary"), str) or not args["summary"].strip():
            raise ToolError("summary is required")
        body = {k: args[k] for k in ("summary", "why_it_matters", "delta_type", "importance",
                                     "retrieval_triggers", "project_key") if args.get(k) is not None}
        for attempt in range(2):
            if session.receipt_id is None or (args.get("project_key") and args["project_key"] != session.project_key):
                await _pack(api, session, {"project_key": args.get("project_key")})
            status, data = await api.call("POST", "/api/agent/memory-delta", body,
                                          headers={"X-AMP-Context-Receipt": session.receipt_id or ""})
            if status == 428 and attempt == 0:  # receipt expired or unknown: bootstrap again
                session.receipt_id = None
                continue
            if status != 200:
                raise _fail(status, data)
            return {"memory_id": data["delta"]["memory_id"], "delta_id": data["delta"]["id"],
                    "receipt_id": session.receipt_id}
    raise ToolError(f"unknown tool {name!r}")


def list_resources(session: ToolSession) -> list[dict[str, Any]]:
    resources = [{"uri": CURRENT_PACK_URI, "name": "Current context pack", "mimeType": "text/markdown",
                  "description": "A fresh Runtime Context Pack for your workspace (summary only)."}]
    resources += [{"uri": f"memorycloud://context-packs/{pack_id}", "name": f"Context pack {pack_id}",
                   "mimeType": "text/markdown"} for pack_id in session.packs]
    return resources


async def read_resource(api: DaemonApi, session: ToolSession, uri: str) -> dict[str, Any]:
    if uri == CURRENT_PACK_URI:
        pack = await _pack(api, session, {"project_key": session.project_key})
    elif uri.startswith("memorycloud://context-packs/"):
        pack_id = uri.rsplit("/", 1)[1]
        status, pack = await api.call("GET", f"/api/agent/context-packs/{quote(pack_id, safe='')}")
        if status != 200:
            raise _fail(status, pack)
    else:
        raise ToolError(f"unknown resource {uri}")
    return {"contents": [{"uri": uri, "mimeType": "text/markdown", "text": pack["summary_markdown"]}]}


def text_result(value: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(value, ensure_ascii=False, indent=2)}],
            "structuredContent": value, "isError": False}
