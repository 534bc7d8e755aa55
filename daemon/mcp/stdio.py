"""``memorycloud mcp``: the MCP server on stdio, for runtimes that start their MCP servers as
processes, served by the official SDK (``mcp.server.stdio``). It talks to the running daemon
over HTTP, as an agent: the key comes from ``MEMORYCLOUD_API_KEY`` or the credentials file
(``--credential-ref``) of the MemoryCloud home it finds.

A runtime starts the server with whatever environment and directory it chooses (Codex passes
only a few variables), so the home is found the same way whatever it is given: ``--home``,
then ``MEMORYCLOUD_HOME``, then the ``.amp/local.json`` of the project (``--project`` or the
working directory, searched upward), then the platform's default.

Nothing but JSON-RPC goes to stdout. Runtimes log a server's stderr as errors (Claude Code
shows every line as [ERROR]), so stderr carries only what is wrong unless ``--verbose``.

The server always starts, initializes and lists its tools, whatever is wrong (no key, an
unknown home): a runtime that waits for it (Codex with ``required = true``) must not fail
its session, and a model that calls a tool reads what to fix (one line on stderr too).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path

import anyio
from mcp.server.stdio import stdio_server

from daemon.mcp.server import build_server
from daemon.mcp.tools import DaemonApi, ToolContext, ToolSession
from daemon.process import find_running
from startup_items.credentials import read_credentials
from startup_items.local_config import local_home
from state.config import load_settings
from state.errors import MemoryCloudError
from state.paths import Paths, resolve_paths


def _project_dir(project: str | None) -> Path | None:
    """The project directory a runtime passed, or None when it passed none or left its
    variable unexpanded (a runtime that does not expand ``${...}``)."""
    if not project or "$" in project:
        return None
    path = Path(project).expanduser()
    return path.resolve() if path.is_dir() else None


def server_paths(
    home: str | None, project: str | None, environ: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Paths:
    """The MemoryCloud home this server uses (see the module docstring for the order)."""
    environ = os.environ if environ is None else environ
    if home:
        return resolve_paths({"MEMORYCLOUD_HOME": home})
    if environ.get("MEMORYCLOUD_HOME"):
        return resolve_paths(environ)
    found = local_home(_project_dir(project) or (cwd or Path.cwd()).resolve())
    if found is not None:
        return resolve_paths({"MEMORYCLOUD_HOME": str(found)})
    return resolve_paths({})


def resolve(paths: Paths, credential_ref: str) -> tuple[str, str]:
    """The daemon URL and the key to use, or a clear error."""
    key = os.environ.get("MEMORYCLOUD_API_KEY") or read_credentials(paths).get(credential_ref)
    if not key:
        raise MemoryCloudError(
            f"no API key: set MEMORYCLOUD_API_KEY or run `memorycloud mcp install` (credential_ref"
            f" {credential_ref!r} is not in {paths.config_dir / 'credentials.json'})"
        )
    running = find_running(paths)
    if running is not None:
        return running.url, key
    settings = load_settings(paths.config_file)
    return f"http://{settings.host}:{settings.port}", key


async def serve(url: str, key: str, problem: str | None = None) -> None:
    """Serve one client on stdin/stdout until it closes them."""
    api = DaemonApi()
    context = ToolContext(api, url, key, ToolSession(), problem)  # one process, one client
    server = build_server(lambda _ctx: context)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await api.aclose()


def run(home: str | None, project: str | None, credential_ref: str, verbose: bool = False) -> int:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        stream=sys.stderr,
        format="memorycloud mcp: %(levelname)s %(name)s: %(message)s",
    )
    paths = server_paths(home, project)
    problem = None
    try:
        url, key = resolve(paths, credential_ref)
    except MemoryCloudError as exc:
        url, key, problem = "", "", f"MemoryCloud MCP server: {exc.message}"
        print(f"memorycloud mcp: {exc.message}", file=sys.stderr)
    if verbose:
        print(
            f"memorycloud mcp: serving MCP on stdio for {url or '(no daemon)'} (config {paths.config_dir})",
            file=sys.stderr,
        )
    anyio.run(serve, url, key, problem)
    return 0
