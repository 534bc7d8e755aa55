"""`memorycloud mcp install|uninstall` for each runtime, in real files with the user's own
content; uninstall gives the files back byte for byte. Each registration, started exactly as
written in its file the way its runtime starts it (a minimal environment without
MEMORYCLOUD_HOME, the runtime's working directory), answers a search with a stored memory."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import tomlkit
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from startup_items.runtimes import GITIGNORE
from tests.e2e.conftest import DaemonProcess, cli, free_port

USER_FILES = {
    "claude_code": (".mcp.json", '{\n  "mcpServers": {\n    "github": {"command": "gh-mcp"}\n  }\n}\n'),
    "gemini_cli": (".gemini/settings.json", '{\n    "theme": "Dracula"\n}\n'),
    "cursor": (".cursor/mcp.json", None),
}
VENV_BIN = str(Path(sys.executable).parent)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def env_with_path(path: str) -> dict[str, str]:
    return {**os.environ, "PATH": path}


@pytest.mark.parametrize("runtime", sorted(USER_FILES))
def test_json_runtimes(isolated_home, tmp_path, runtime):
    repo = tmp_path / "repo"
    repo.mkdir()
    relative, original = USER_FILES[runtime]
    target = repo / relative
    if original is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(original)
    env = env_with_path(f"{VENV_BIN}:/usr/bin:/bin")
    installed = json.loads(
        cli("mcp", "install", "--runtime", runtime, "--repo", str(repo), "--json", env=env).stdout
    )
    assert installed["written"] is True and installed["warnings"] == []
    data = json.loads(target.read_text())
    entry = data["mcpServers"]["memorycloud"]
    assert entry["command"] == "memorycloud"
    assert entry["args"][:3] == ["mcp", "--credential-ref", f"mcp_{runtime}"]
    # A shared file: nothing of this machine in it (no path, no home, no key).
    text = target.read_text()
    assert "mca_" not in text and str(tmp_path) not in text and VENV_BIN not in text
    assert not any(os.path.isabs(s) for s in strings(entry)), entry
    # This machine's home goes to the git-ignored local file instead.
    assert json.loads((repo / ".amp/local.json").read_text())["memorycloud_home"] == str(isolated_home)
    assert (repo / ".amp/.gitignore").read_text() == GITIGNORE and "local.json" in GITIGNORE
    if original is not None:
        assert {k: v for k, v in data.items() if k != "mcpServers"} == {
            k: v for k, v in json.loads(original).items() if k != "mcpServers"
        }
    again = json.loads(
        cli("mcp", "install", "--runtime", runtime, "--repo", str(repo), "--json", env=env).stdout
    )
    assert again["written"] is False and again["files_written"] == []
    cli("mcp", "uninstall", "--runtime", runtime, "--repo", str(repo), env=env)
    if original is None:
        assert not target.exists() and not target.parent.exists()
    else:
        assert target.read_text() == original
    assert not (repo / ".amp").exists()  # nothing else needs the local file


def test_without_memorycloud_on_path_install_warns_and_still_writes_the_portable_command(
    isolated_home, tmp_path
):
    repo = tmp_path / "repo"
    repo.mkdir()
    result = cli(
        "mcp",
        "install",
        "--runtime",
        "cursor",
        "--repo",
        str(repo),
        "--json",
        env=env_with_path("/usr/bin:/bin"),
    )
    assert "not on PATH" in result.stderr and "pipx install memorycloud-companion" in result.stderr
    assert json.loads(result.stdout)["warnings"]
    assert (
        json.loads((repo / ".cursor/mcp.json").read_text())["mcpServers"]["memorycloud"]["command"]
        == "memorycloud"
    )


def test_codex_toml_keeps_comments(isolated_home, tmp_path):
    config = tmp_path / "codex" / "config.toml"
    config.parent.mkdir()
    original = '# my codex settings\nmodel = "o4"  # keep this\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    config.write_text(original)
    cli("mcp", "install", "--runtime", "codex", "--config", str(config))
    text = config.read_text()
    assert "# my codex settings" in text and "# keep this" in text
    assert re.search(r"^env = \{ ?MEMORYCLOUD_HOME = ", text, re.M), text  # an inline table
    parsed = tomlkit.parse(text).unwrap()
    assert parsed["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    ours = parsed["mcp_servers"]["memorycloud"]
    assert ours["args"][-1] == "mcp_codex" and os.path.isabs(ours["command"])
    assert ours["env"] == {"MEMORYCLOUD_HOME": str(isolated_home)}
    assert ours["required"] is True and ours["startup_timeout_sec"] == 30
    assert not (tmp_path / "codex" / ".amp").exists()  # user-level: no local file
    config.write_text(text.replace('model = "o4"', 'model = "o5"'))  # the user edits elsewhere
    cli("mcp", "uninstall", "--runtime", "codex", "--config", str(config))
    after = tomlkit.parse(config.read_text()).unwrap()
    assert "memorycloud" not in after["mcp_servers"] and after["model"] == "o5"
    assert "# my codex settings" in config.read_text()


def test_a_hand_edited_entry_is_not_removed(isolated_home, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    cli("mcp", "install", "--runtime", "cursor", "--repo", str(repo))
    target = repo / ".cursor/mcp.json"
    data = json.loads(target.read_text())
    data["mcpServers"]["memorycloud"]["env"] = {"DEBUG": "1"}
    target.write_text(json.dumps(data))
    refused = cli("mcp", "uninstall", "--runtime", "cursor", "--repo", str(repo), check=False)
    assert refused.returncode == 1 and "edited by hand" in refused.stderr
    assert json.loads(target.read_text())["mcpServers"]["memorycloud"]["env"] == {"DEBUG": "1"}


# -- each registration started as its runtime starts it --------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[DaemonProcess, dict[str, str], Path]]:
    """A daemon in a non-default home, the environment naming it, and a scratch directory."""
    base = tmp_path_factory.mktemp("mcp-install")
    home = base / "mchome"
    home.mkdir()
    env = {
        **os.environ,
        "MEMORYCLOUD_HOME": str(home),
        "MEMORYCLOUD_SECRETS": "file",
        "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
    }
    daemon = DaemonProcess(free_port(), home, env=env)
    daemon.start()
    try:
        yield daemon, env, base
    finally:
        daemon.stop()


def expand(value: str, variables: dict[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}`, the forms Claude Code and Cursor expand (an unset
    variable without a default stays as written, as Claude Code leaves it)."""

    def one(match: re.Match) -> str:
        name, default = match.group(1), match.group(3)
        return variables.get(name) or (default if default is not None else match.group(0))

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}", one, value)


def store_memory(daemon: DaemonProcess, home: Path, runtime: str, text: str) -> str:
    """A memory written with the registration's own key (so its search finds it)."""
    key = json.loads((home / "config" / "credentials.json").read_text())[f"mcp_{runtime}"]
    auth = {"Authorization": f"Bearer {key}"}
    pack = httpx.post(
        f"{daemon.url}/api/agent/bootstrap/context", json={"runtime": "mcp"}, headers=auth
    ).json()
    delta = httpx.post(
        f"{daemon.url}/api/agent/memory-delta",
        json={"summary": text, "delta_type": "decision"},
        headers={**auth, "X-AMP-Context-Receipt": pack["receipt_id"]},
    )
    assert delta.status_code == 200, delta.text
    return delta.json()["delta"]["memory_id"]


async def search_through(command: str, args: list[str], env: dict[str, str], cwd: Path, query: str) -> Any:
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd))
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            return await session.call_tool("search", {"query": query})


# The runtime's environment for its MCP servers (none passes MEMORYCLOUD_HOME here), its
# working directory, and the variables it expands in the entry. Claude Code: its own env plus
# CLAUDE_PROJECT_DIR, cwd the session's; Cursor: ${workspaceFolder}, cwd not the project's;
# Gemini CLI: cwd where it runs (a subdirectory here); Codex: a short list plus the entry's env.
RUNTIME_START = {
    "claude_code": lambda repo, base: ({"CLAUDE_PROJECT_DIR": str(repo)}, repo),
    "cursor": lambda repo, base: ({"workspaceFolder": str(repo)}, base),
    "gemini_cli": lambda repo, base: ({}, repo / "src"),
}


@pytest.mark.parametrize("runtime", sorted(RUNTIME_START))
async def test_a_project_registration_starts_without_memorycloud_home(served, runtime):
    daemon, env, base = served
    repo = base / f"repo-{runtime}"
    (repo / "src").mkdir(parents=True)
    cli("mcp", "install", "--runtime", runtime, "--repo", str(repo), env=env)
    memory_id = store_memory(daemon, daemon.home, runtime, f"found through {runtime} 注册")
    entry = json.loads((repo / USER_FILES[runtime][0]).read_text())["mcpServers"]["memorycloud"]
    variables, cwd = RUNTIME_START[runtime](repo, base)
    minimal = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(base / "nobody"), **variables}
    found = await search_through(
        expand(entry["command"], variables),
        [expand(a, variables) for a in entry["args"]],
        {**minimal, **entry.get("env", {})},
        cwd,
        f"found through {runtime}",
    )
    assert not found.is_error, found.content[0].text
    assert memory_id in [item["id"] for item in found.structured_content["items"]]


async def test_the_codex_registration_starts_with_codex_s_short_environment(served):
    daemon, env, base = served
    config = base / "codex-home" / "config.toml"
    config.parent.mkdir()
    cli("mcp", "install", "--runtime", "codex", "--config", str(config), env=env)
    memory_id = store_memory(daemon, daemon.home, "codex", "found through codex 注册")
    entry = tomlkit.parse(config.read_text()).unwrap()["mcp_servers"]["memorycloud"]
    # What Codex passes (HOME, PATH, USER, ...; no MEMORYCLOUD_*), then the entry's own env;
    # no virtualenv on PATH: the command is absolute.
    short = {"PATH": "/usr/bin:/bin", "HOME": str(base / "nobody"), "USER": "nobody", **entry.get("env", {})}
    found = await search_through(entry["command"], entry["args"], short, base, "found through codex")
    assert not found.is_error, found.content[0].text
    assert memory_id in [item["id"] for item in found.structured_content["items"]]
