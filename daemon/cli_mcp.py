"""``memorycloud mcp install|uninstall --runtime R``: register the MCP server in an agent
runtime's own config file, and remove exactly that again.

| runtime | file | entry |
| --- | --- | --- |
| claude_code | <repo>/.mcp.json | mcpServers.memorycloud |
| codex | $CODEX_HOME/config.toml (~/.codex) | [mcp_servers.memorycloud] (tomlkit) |
| gemini_cli | <repo>/.gemini/settings.json | mcpServers.memorycloud |
| cursor | <repo>/.cursor/mcp.json | mcpServers.memorycloud |

JSON files are merged key by key; what the daemon wrote is remembered (like startup items),
so uninstall restores an untouched file byte for byte and otherwise removes only our entry.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable

from startup_items.credentials import read_credentials, store_credential
from startup_items.installer import FileRecord, PlannedFile, apply_plan, remove_regions
from startup_items.regions import JsonEntries, TomlTable
from startup_items.runtimes import resolve_runtime
from state.errors import MemoryCloudError
from state.paths import Paths

Emit = Callable[[argparse.Namespace, Any, str], None]
SERVER = "memorycloud"


def _target(runtime: str, repo: Path, config: str | None) -> tuple[Path, str, Any]:
    """(root, relative file, region) for a runtime's MCP configuration."""
    if runtime == "codex":
        path = Path(config) if config else Path(os.environ.get("CODEX_HOME", "~/.codex")).expanduser() / "config.toml"
        return path.parent, path.name, TomlTable(f"mcp_servers.{SERVER}")
    files = {"claude_code": ".mcp.json", "gemini_cli": ".gemini/settings.json", "cursor": ".cursor/mcp.json"}
    if runtime not in files:
        raise MemoryCloudError(f"MCP install supports claude_code, codex, gemini_cli and cursor; not {runtime}")
    if config:
        path = Path(config)
        return path.parent, path.name, JsonEntries(key_paths=(f"mcpServers.{SERVER}",))
    return repo, files[runtime], JsonEntries(key_paths=(f"mcpServers.{SERVER}",))


def _records_path(paths: Paths) -> Path:
    return paths.config_dir / "mcp-installs.json"


def _load_records(paths: Paths) -> dict[str, dict[str, Any]]:
    try:
        return json.loads(_records_path(paths).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def _save_records(paths: Paths, records: dict[str, dict[str, Any]]) -> None:
    _records_path(paths).parent.mkdir(parents=True, exist_ok=True)
    _records_path(paths).write_text(json.dumps(records, indent=2), encoding="utf-8")


def _ensure_key(paths: Paths, runtime: str) -> str:
    """A key for this runtime's MCP server (memory scopes only), kept under mcp_<runtime>."""
    from daemon.cli import _open_store

    ref = f"mcp_{runtime}"
    store = _open_store(paths)
    try:
        key = read_credentials(paths).get(ref)
        if key and store.identities.identity_for_key(key) is not None:
            return ref
        name = f"mcp:{runtime}"
        with store.transaction():
            existing = [a for a in store.identities.agents() if a["name"] == name and not a["disabled_at"]]
            if existing:
                key = store.identities.issue_key(existing[0]["id"], prefix="mca_")
            else:
                _, key = store.identities.create_agent(name, runtime, scopes=["memory:read", "memory:write"])
        store_credential(paths, ref, key)
    finally:
        store.close()
    return ref


def _server_entry(credential_ref: str) -> dict[str, Any]:
    executable = shutil.which("memorycloud")
    if executable:
        return {"command": executable, "args": ["mcp", "--credential-ref", credential_ref]}
    return {"command": sys.executable, "args": ["-m", "daemon", "mcp", "--credential-ref", credential_ref]}


def cmd_install(args: argparse.Namespace, paths: Paths, emit: Emit) -> int:
    runtime = resolve_runtime(args.runtime).name
    root, relative, region = _target(runtime, Path(args.repo or ".").resolve(), args.config)
    entry = _server_entry(_ensure_key(paths, runtime))
    desired = entry if isinstance(region, TomlTable) else {"keys": {f"mcpServers.{SERVER}": entry}}
    planned = PlannedFile(relative, f"mcp:{runtime}", region, desired, "MCP server registration")
    key = str(root / relative)
    stored = _load_records(paths)
    records = {planned.key: FileRecord(**stored[key])} if key in stored else {}
    outcome = apply_plan(root, [planned], records)
    if outcome.conflicts:
        raise MemoryCloudError(f"{key}: {outcome.conflicts[0].reason}; nothing was written")
    stored[key] = outcome.records[planned.key].to_dict()
    _save_records(paths, stored)
    emit(args, {"runtime": runtime, "file": key, "entry": entry, "written": bool(outcome.written)},
         f"{'registered' if outcome.written else 'already registered'}: MemoryCloud MCP server in {key}")
    return 0


def cmd_uninstall(args: argparse.Namespace, paths: Paths, emit: Emit) -> int:
    runtime = resolve_runtime(args.runtime).name
    root, relative, region = _target(runtime, Path(args.repo or ".").resolve(), args.config)
    key = str(root / relative)
    stored = _load_records(paths)
    if key not in stored:
        raise MemoryCloudError(f"the MemoryCloud MCP server was not installed in {key} by this machine")
    planned = PlannedFile(relative, f"mcp:{runtime}", region, {}, "MCP server registration")
    outcome = remove_regions(root, [planned], {planned.key: FileRecord(**stored[key])})
    if outcome.conflicts:
        raise MemoryCloudError(f"{key}: {outcome.conflicts[0].reason}; nothing was removed")
    del stored[key]
    _save_records(paths, stored)
    emit(args, {"runtime": runtime, "file": key, "removed": True}, f"removed the MCP server from {key}")
    return 0


def add_commands(parser: argparse.ArgumentParser, add: Callable[..., argparse.ArgumentParser]) -> None:
    sub = parser.add_subparsers(title="mcp actions", metavar="ACTION")
    for name, func, text in (("install", cmd_install, "register the MCP server in a runtime's config"),
                             ("uninstall", cmd_uninstall, "remove exactly that registration")):
        p = add(sub, name, func, text)
        p.add_argument("--runtime", required=True, help="claude_code, codex, gemini_cli, cursor")
        p.add_argument("--repo", help="repository for project-level configs (default: current directory)")
        p.add_argument("--config", help="the config file to edit instead of the runtime's default")
