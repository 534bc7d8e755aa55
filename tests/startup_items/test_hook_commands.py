"""The exact hook commands we install, run the way each runtime runs them (runtime_shells.py),
in repositories whose path needs quoting: the launcher must start and answer in its format."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from pathlib import Path

import pytest

from startup_items.installer import apply_plan
from startup_items.runtimes import RUNTIMES, InstallTarget, planned_files
from tests.startup_items.runtime_shells import gemini_expand, run_hook, shell_quote

HOOK_FILES = {
    "claude_code": ".claude/settings.json",
    "codex": ".codex/hooks.json",
    "gemini_cli": ".gemini/settings.json",
}
# A space, and each character shell-quote backslash-escapes (Gemini's quoting).
AWKWARD = ["my repo", "at@sign", "co:lon", "com,ma", "eq=uals", "pa(ren)s", "all of @:,=()"]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens there once closed


def install(root: Path, runtime: str) -> str:
    """Write the runtime's real plan files into ``root``; return its SessionStart command."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    target = InstallTarget(
        root, f"http://127.0.0.1:{_closed_port()}", "wsp_x", "proj", "pbind_x", "memorycloud_default"
    )
    files = planned_files(target, RUNTIMES[runtime], lambda spec: "summary")
    assert not apply_plan(root, files, {}).conflicts
    data = json.loads((root / HOOK_FILES[runtime]).read_text())
    (command,) = [
        h["command"]
        for e in data["hooks"]["SessionStart"]
        for h in e["hooks"]
        if ".amp/launcher.py" in h["command"]
    ]
    return command


def assert_launcher_answered(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 0, (result.returncode, result.stderr)
    output = json.loads(result.stdout)
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "MemoryCloud memory unavailable" in output["hookSpecificOutput"]["additionalContext"]
    assert "memorycloud launcher:" in result.stderr  # the daemon is down: said in one line


@pytest.mark.parametrize("runtime", list(HOOK_FILES))
@pytest.mark.parametrize("name", AWKWARD)
def test_the_hook_command_starts_the_launcher_in_an_awkward_path(runtime, name, tmp_path):
    root = (tmp_path / name).resolve()
    command = install(root, runtime)
    assert_launcher_answered(run_hook(runtime, command, root))


def test_codex_finds_the_repository_from_a_subdirectory(tmp_path):
    root = (tmp_path / "my repo@x").resolve()
    command = install(root, "codex")
    (root / "src").mkdir()
    assert_launcher_answered(run_hook("codex", command, root, cwd=root / "src"))


def test_gemini_rewrites_the_bare_variable_as_its_source_does(tmp_path):
    """The re-implementation itself, against the values Gemini's own tests and our findings
    show, so a test above cannot pass through a wrong model of Gemini."""
    assert shell_quote("/a b") == "'/a b'"
    assert shell_quote("/x@y:z") == "/x\\@y\\:z"
    assert shell_quote("/plain/path") == "/plain/path"
    old = 'python3 -S "$GEMINI_PROJECT_DIR/.amp/launcher.py"'
    assert gemini_expand(old, "/a b") == "python3 -S \"'/a b'/.amp/launcher.py\""
    assert gemini_expand('"${GEMINI_PROJECT_DIR}/x"', "/a b") == '"${GEMINI_PROJECT_DIR}/x"'
    # ... and the command we wrote before this fix fails through it, as it did in Gemini.
    root = (tmp_path / "my repo").resolve()
    install(root, "gemini_cli")
    broken = run_hook("gemini_cli", old + " --runtime gemini_cli --format hook_json", root)
    assert broken.returncode == 2 and "No such file" in broken.stderr


CODEX_SOURCES = ("startup", "resume", "clear", "compact", "fork")  # SessionStartSource (0.155+)


def test_the_codex_matcher_takes_every_session_start_source(tmp_path):
    root = tmp_path / "repo"
    install(root, "codex")
    (entry,) = json.loads((root / ".codex/hooks.json").read_text())["hooks"]["SessionStart"]
    for source in CODEX_SOURCES:
        assert re.fullmatch(entry["matcher"], source), source  # Codex: a regex over source
