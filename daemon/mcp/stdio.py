"""``memorycloud mcp``: the MCP server on stdio (newline-delimited JSON-RPC), for runtimes that
start their MCP servers as processes. It talks to the running daemon over HTTP, as an agent:
the key comes from ``MEMORYCLOUD_API_KEY`` or the credentials file (``--credential-ref``).
Nothing but JSON-RPC is written to stdout; diagnostics go to stderr."""

from __future__ import annotations

import asyncio
import json
import os
import sys

from daemon.mcp.protocol import McpEndpoint
from daemon.mcp.tools import DaemonApi
from daemon.process import find_running
from startup_items.credentials import read_credentials
from state.config import load_settings
from state.errors import MemoryCloudError
from state.paths import Paths


def resolve(paths: Paths, credential_ref: str) -> tuple[str, str]:
    """The daemon URL and the key to use, or a clear error."""
    key = os.environ.get("MEMORYCLOUD_API_KEY") or read_credentials(paths).get(credential_ref)
    if not key:
        raise MemoryCloudError(
            f"no API key: set MEMORYCLOUD_API_KEY or run `memorycloud mcp install` (credential_ref"
            f" {credential_ref!r} is not in {paths.config_dir / 'credentials.json'})")
    running = find_running(paths)
    if running is not None:
        return running.url, key
    settings = load_settings(paths.config_file)
    return f"http://{settings.host}:{settings.port}", key


async def serve(url: str, key: str) -> None:
    endpoint = McpEndpoint(DaemonApi(url, key))
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=16 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    out = sys.stdout.buffer
    try:
        while line := await reader.readline():
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                answers = [{"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}]
            else:
                batch = message if isinstance(message, list) else [message]
                answers = [a for m in batch if (a := await endpoint.handle(m)) is not None]
            for answer in answers:
                out.write(json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n")
            out.flush()
    finally:
        await endpoint.api.aclose()


def run(paths: Paths, credential_ref: str) -> int:
    url, key = resolve(paths, credential_ref)
    print(f"memorycloud mcp: serving MCP on stdio for {url}", file=sys.stderr)
    asyncio.run(serve(url, key))
    return 0
