"""`memorycloud mcp install|uninstall` for each runtime, in real files with the user's own
content; uninstall gives the files back byte for byte."""

from __future__ import annotations

import json

import pytest
import tomlkit

from tests.e2e.conftest import cli

USER_FILES = {
    "claude_code": (".mcp.json", '{\n  "mcpServers": {\n    "github": {"command": "gh-mcp"}\n  }\n}\n'),
    "gemini_cli": (".gemini/settings.json", '{\n    "theme": "Dracula"\n}\n'),
    "cursor": (".cursor/mcp.json", None),
}


@pytest.mark.parametrize("runtime", sorted(USER_FILES))
def test_json_runtimes(isolated_home, tmp_path, runtime):
    repo = tmp_path / "repo"
    repo.mkdir()
    relative, original = USER_FILES[runtime]
    target = repo / relative
    if original is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(original)
    installed = json.loads(cli("mcp", "install", "--runtime", runtime, "--repo", str(repo), "--json").stdout)
    assert installed["written"] is True
    data = json.loads(target.read_text())
    entry = data["mcpServers"]["memorycloud"]
    assert entry["args"][-2:] == ["--credential-ref", f"mcp_{runtime}"]
    assert "mca_" not in target.read_text()  # the key stays in the credentials file
    if original is not None:
        assert {k: v for k, v in data.items() if k != "mcpServers"} == {
            k: v for k, v in json.loads(original).items() if k != "mcpServers"}
    again = json.loads(cli("mcp", "install", "--runtime", runtime, "--repo", str(repo), "--json").stdout)
    assert again["written"] is False
    cli("mcp", "uninstall", "--runtime", runtime, "--repo", str(repo))
    if original is None:
        assert not target.exists() and not target.parent.exists()
    else:
        assert target.read_text() == original


def test_codex_toml_keeps_comments(isolated_home, tmp_path):
    config = tmp_path / "codex" / "config.toml"
    config.parent.mkdir()
    original = '# my codex settings\nmodel = "o4"  # keep this\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    config.write_text(original)
    cli("mcp", "install", "--runtime", "codex", "--config", str(config))
    text = config.read_text()
    assert "# my codex settings" in text and "# keep this" in text
    parsed = tomlkit.parse(text).unwrap()
    assert parsed["mcp_servers"]["docs"] == {"command": "docs-mcp"}
    assert parsed["mcp_servers"]["memorycloud"]["args"][-1] == "mcp_codex"
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
