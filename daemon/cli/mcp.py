"""``memorycloud mcp`` (serve MCP on stdio) and ``memorycloud mcp install|uninstall --runtime R``:
register the MCP server in an agent runtime's own config file, and remove exactly that again.
``register`` and ``unregister`` are the functions other commands (``memorycloud connect``,
``setup remove``) call; ``cmd_install`` and ``cmd_uninstall`` are their CLI.

| runtime | file | entry |
| --- | --- | --- |
| claude_code | <repo>/.mcp.json | mcpServers.memorycloud |
| codex | $CODEX_HOME/config.toml (~/.codex) | [mcp_servers.memorycloud] (tomlkit) |
| gemini_cli | <repo>/.gemini/settings.json | mcpServers.memorycloud |
| cursor | <repo>/.cursor/mcp.json | mcpServers.memorycloud |

Project files are shared through git, so their entry is the same on every machine:
``"command": "memorycloud"`` and the runtime's own project variable where it expands one
(Claude Code ``${CLAUDE_PROJECT_DIR:-.}``, Cursor ``${workspaceFolder}``; Gemini CLI starts
servers in the project). What is machine-specific, which MemoryCloud home holds the key, goes
to the git-ignored ``.amp/local.json`` (startup_items.local_config), where ``memorycloud mcp``
looks for it. Codex's config is the user's own and Codex passes servers only a few
variables, so its entry is absolute: this installation's command and ``MEMORYCLOUD_HOME``.

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
from typing import Any

import tomlkit

from daemon.cli.context import add_command, emit, open_store
from daemon.service_units import default_command
from startup_items.credentials import read_credentials, store_credential
from startup_items.installer import FileRecord, PlannedFile, apply_plan, remove_regions
from startup_items.local_config import local_config_text
from startup_items.regions import JsonEntries, TomlTable
from startup_items.runtimes import LAUNCHER_PATH, machine_local_files, resolve_runtime
from state.atomic import write_atomic
from state.errors import MemoryCloudError
from state.paths import Paths

SERVER = "memorycloud"
PROJECT_FILES = {
    "claude_code": ".mcp.json",
    "gemini_cli": ".gemini/settings.json",
    "cursor": ".cursor/mcp.json",
}
# The runtime's own variable for its project directory, where it expands one in MCP entries.
PROJECT_ARG = {"claude_code": "${CLAUDE_PROJECT_DIR:-.}", "cursor": "${workspaceFolder}"}
INSTALL_HINT = (
    "install it with `pipx install memorycloud-companion` (or `uv tool install memorycloud-companion`)"
)


def _target(runtime: str, repo: Path, config: str | None) -> tuple[Path, str, Any]:
    """(root, relative file, region) for a runtime's MCP configuration."""
    if runtime == "codex":
        path = (
            Path(config)
            if config
            else Path(os.environ.get("CODEX_HOME", "~/.codex")).expanduser() / "config.toml"
        )
        return path.parent, path.name, TomlTable(f"mcp_servers.{SERVER}")
    if runtime not in PROJECT_FILES:
        raise MemoryCloudError(
            f"MCP install supports claude_code, codex, gemini_cli and cursor; not {runtime}"
        )
    if config:
        path = Path(config)
        return path.parent, path.name, JsonEntries(key_paths=(f"mcpServers.{SERVER}",))
    return repo, PROJECT_FILES[runtime], JsonEntries(key_paths=(f"mcpServers.{SERVER}",))


def _records_path(paths: Paths) -> Path:
    return paths.config_dir / "mcp-installs.json"


def _load_records(paths: Paths) -> dict[str, dict[str, Any]]:
    try:
        return json.loads(_records_path(paths).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def _save_records(paths: Paths, records: dict[str, dict[str, Any]]) -> None:
    write_atomic(_records_path(paths), json.dumps(records, indent=2))


def _ensure_key(paths: Paths, runtime: str) -> str:
    """A key for this runtime's MCP server (memory scopes only), kept under mcp_<runtime>."""
    ref = f"mcp_{runtime}"
    store = open_store(paths)
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


def server_entry(runtime: str, credential_ref: str) -> dict[str, Any]:
    """The registration entry for ``runtime`` (see the module docstring)."""
    args = ["mcp", "--credential-ref", credential_ref]
    if runtime == "codex":
        # This installation's own command, absolute: the user-level config is this machine's.
        command, *prefix = default_command()
        entry: dict[str, Any] = {
            "command": command,
            "args": [*prefix, *args],
            # Importing the SDK takes longer than Codex's 1 s grace for
            # optional servers: without these it drops our tools.
            "required": True,
            "startup_timeout_sec": 30,
        }
        home = os.environ.get("MEMORYCLOUD_HOME")
        if home:  # Codex passes servers only a few variables: name the home here
            env = tomlkit.inline_table()
            env["MEMORYCLOUD_HOME"] = str(Path(home).expanduser().resolve())
            entry["env"] = env
        return entry
    if runtime in PROJECT_ARG:
        args += ["--project", PROJECT_ARG[runtime]]
    entry = {"command": "memorycloud", "args": args}
    if runtime == "claude_code":
        # Connected before the first turn (Claude Code connects servers in the background
        # otherwise, and a headless turn starts without our tools).
        entry["alwaysLoad"] = True
    return entry


def _path_warning() -> str | None:
    """Shared project files name ``memorycloud``: say so when this machine cannot run it."""
    if shutil.which("memorycloud"):
        return None
    script = Path(sys.executable).parent / "memorycloud"
    where = f", or add {script.parent} to PATH" if script.is_file() else ""
    return (
        f"`memorycloud` is not on PATH, so the runtime cannot start the MCP server the"
        f" project file names: {INSTALL_HINT}{where}"
    )


def _local_files(paths: Paths) -> list[PlannedFile]:
    """``.amp/local.json`` and the ``.amp/.gitignore`` that keeps it out of git, as the
    startup-item plan writes them."""
    return machine_local_files(local_config_text(paths))


def _apply(root: Path, planned: list[PlannedFile], stored: dict[str, dict[str, Any]]) -> list[str]:
    """Write ``planned`` under ``root`` (all or nothing) and record it; the paths written."""
    records = {
        p.key: FileRecord(**stored[str(root / p.path)]) for p in planned if str(root / p.path) in stored
    }
    outcome = apply_plan(root, planned, records)
    if outcome.conflicts:
        conflict = outcome.conflicts[0]
        raise MemoryCloudError(f"{root / conflict.path}: {conflict.reason}; nothing was written")
    for p in planned:
        stored[str(root / p.path)] = outcome.records[p.key].to_dict()
    return [str(root / path) for path in outcome.written]


def register(paths: Paths, runtime: str, repo: Path, config: str | None = None) -> dict[str, Any]:
    """Register the MemoryCloud MCP server for ``runtime`` (project-level ones in ``repo``):
    ``{"runtime", "file", "entry", "written", "files_written", "warnings"}``; ``written`` is
    False when the registration was already there as it should be."""
    runtime = resolve_runtime(runtime).name
    root, relative, region = _target(runtime, repo.resolve(), config)
    entry = server_entry(runtime, _ensure_key(paths, runtime))
    desired = entry if isinstance(region, TomlTable) else {"keys": {f"mcpServers.{SERVER}": entry}}
    stored = _load_records(paths)
    key = str(root / relative)
    # Local files first: if the registration itself conflicts, they are harmless alone.
    written = _apply(repo.resolve(), _local_files(paths), stored) if runtime in PROJECT_FILES else []
    written += _apply(
        root, [PlannedFile(relative, f"mcp:{runtime}", region, desired, "MCP server registration")], stored
    )
    _save_records(paths, stored)
    warnings = [w for w in [_path_warning()] if w] if runtime in PROJECT_FILES else []
    return {
        "runtime": runtime,
        "file": key,
        "entry": json.loads(json.dumps(entry)),
        "written": key in written,
        "files_written": written,
        "warnings": warnings,
    }


def cmd_mcp(args: argparse.Namespace, paths: Paths) -> int:
    """Serve MCP on stdio for an agent runtime."""
    # The server finds its own home (--home, MEMORYCLOUD_HOME, .amp/local.json, default):
    # a runtime may start it without the environment this process was given.
    from daemon.mcp.stdio import run

    return run(args.home, args.project, args.credential_ref, args.verbose)


def cmd_install(args: argparse.Namespace, paths: Paths) -> int:
    result = register(paths, args.runtime, Path(args.repo or "."), args.config)
    for warning in result["warnings"]:
        print(f"memorycloud: warning: {warning}", file=sys.stderr)
    emit(
        args,
        result,
        f"{'registered' if result['written'] else 'already registered'}: MemoryCloud MCP"
        f" server in {result['file']}",
    )
    return 0


def _uninstall_local_files(paths: Paths, repo: Path, stored: dict[str, dict[str, Any]]) -> None:
    """Take back ``.amp/local.json`` and its .gitignore once no registration of ours and no
    startup item (its launcher) in ``repo`` needs them."""
    mine = [str(repo / p) for p in PROJECT_FILES.values()]
    if any(path in stored for path in mine) or (repo / LAUNCHER_PATH).exists():
        return
    local = [p for p in _local_files(paths) if str(repo / p.path) in stored]
    outcome = remove_regions(repo, local, {p.key: FileRecord(**stored[str(repo / p.path)]) for p in local})
    if not outcome.conflicts:  # edited by hand: left alone (they are git-ignored and local)
        for p in local:
            del stored[str(repo / p.path)]


def unregister(paths: Paths, runtime: str, repo: Path, config: str | None = None) -> dict[str, Any]:
    """Remove the registration ``register`` wrote for ``runtime`` (and, for project-level ones,
    the local files once nothing needs them): ``{"runtime", "file", "removed": True}``.
    MemoryCloudError when this machine did not install it there or it was edited by hand."""
    runtime = resolve_runtime(runtime).name
    repo = repo.resolve()
    root, relative, region = _target(runtime, repo, config)
    key = str(root / relative)
    stored = _load_records(paths)
    if key not in stored:
        raise MemoryCloudError(f"the MemoryCloud MCP server was not installed in {key} by this machine")
    planned = PlannedFile(relative, f"mcp:{runtime}", region, {}, "MCP server registration")
    outcome = remove_regions(root, [planned], {planned.key: FileRecord(**stored[key])})
    if outcome.conflicts:
        raise MemoryCloudError(f"{key}: {outcome.conflicts[0].reason}; nothing was removed")
    del stored[key]
    if runtime in PROJECT_FILES:
        _uninstall_local_files(paths, repo, stored)
    _save_records(paths, stored)
    return {"runtime": runtime, "file": key, "removed": True}


def uninstall_text(result: dict[str, Any]) -> str:
    """What ``mcp uninstall`` prints for ``unregister``'s result."""
    return f"removed the MCP server from {result['file']}"


def cmd_uninstall(args: argparse.Namespace, paths: Paths) -> int:
    result = unregister(paths, args.runtime, Path(args.repo or "."), args.config)
    emit(args, result, uninstall_text(result))
    return 0


def add_commands(sub: Any) -> None:
    """Register ``mcp`` (serve on stdio) and its actions ``install|uninstall``."""
    p = sub.add_parser(
        "mcp",
        help="serve MCP on stdio (and install it into agent runtimes)",
        description="With no action: serve MCP on stdio for an agent runtime.",
    )
    p.set_defaults(func=cmd_mcp)
    p.add_argument(
        "--credential-ref",
        default="memorycloud_default",
        help="key name in the credentials file (or set MEMORYCLOUD_API_KEY)",
    )
    p.add_argument(
        "--home",
        help="the MemoryCloud home to use (default: MEMORYCLOUD_HOME, then"
        " the project's .amp/local.json, then the platform's directories)",
    )
    p.add_argument(
        "--project",
        help="the runtime's project directory, where .amp/local.json is"
        " looked for (default: the working directory)",
    )
    p.add_argument("--verbose", action="store_true", help="log start-up and progress on stderr")
    actions = p.add_subparsers(title="mcp actions", metavar="ACTION")
    for name, func, text in (
        ("install", cmd_install, "register the MCP server in a runtime's config"),
        ("uninstall", cmd_uninstall, "remove exactly that registration"),
    ):
        action = add_command(actions, name, func, text)
        action.add_argument("--runtime", required=True, help="claude_code, codex, gemini_cli, cursor")
        action.add_argument(
            "--repo", help="repository for project-level configs (default: current directory)"
        )
        action.add_argument("--config", help="the config file to edit instead of the runtime's default")
