"""Startup items end to end, for every runtime: a real daemon process, the real CLI, the real
launcher copied into temporary git repositories whose files already hold the user's content.

Per runtime: install (user content kept), launcher with the daemon up (live pack) and down
(cached pack), apply again (no change), a hand edit of the managed region (conflict, nothing
overwritten), then removal (the repository byte-identical to before).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from startup_items.caps import estimate_tokens
from startup_items.runtimes import RUNTIMES, resolve_runtime
from tests.e2e.conftest import cli

HOOK_RUNTIMES = ("claude_code", "codex", "gemini_cli")
ACTIVE = ("applied", "installed", "fallback_active")
PACK_TITLE = "# MemoryCloud Runtime Context Pack"
DELTA_TEXT = "部署之前必须先运行数据库迁移脚本，记住这条团队约定"
BULK_TEXT = "这是一段很长的中文记忆内容，用来测试运行时输出上限是否被遵守。" * 13  # ~400 chars
TEAM_RULES = "# Team rules\n- be kind\n"
OPENCLAW_SEED = {
    "target": "openclaw",
    "merge": {"long_term": "MEMORY.md", "work_memory": "memory/*.md", "reflections": "DREAMS.md"},
}


def _json(value: object, indent: int = 2) -> str:
    return json.dumps(value, indent=indent) + "\n"


USER_HOOK = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo user-hook"}]}
COMMON_USER_FILES = {"README.md": "# My project\n\nNothing to see.\n"}
USER_FILES: dict[str, dict[str, str]] = {
    "claude_code": {
        ".claude/settings.json": _json(
            {"permissions": {"allow": ["Bash(ls:*)"], "deny": []}, "hooks": {"SessionStart": [USER_HOOK]}}
        ),
        "CLAUDE.md": "# Claude notes\nUse tabs.\n",
    },
    "codex": {
        ".codex/hooks.json": _json({"hooks": {"SessionStart": [USER_HOOK]}}, indent=4),
        "AGENTS.md": TEAM_RULES,
    },
    "gemini_cli": {".gemini/settings.json": _json({"theme": "GitHub", "ui": {"hideTips": True}})},
    "cursor": {
        ".cursor/rules/other.mdc": "---\ndescription: mine\nalwaysApply: false\n---\n\nUse pnpm.\n",
        "AGENTS.md": TEAM_RULES,
    },
    "openclaw": {"AGENTS.md": TEAM_RULES, "MEMORY.md": "# My notes\n- the staging DB is read-only\n"},
    "generic": {"AGENTS.md": TEAM_RULES},
}
# Hand edits of the managed region: (path, old, new), and whether the person then chooses
# `setup approve --overwrite` (True) or reverts the edit (False).
EDITS: dict[str, tuple[str, str, str, bool]] = {
    "claude_code": (".claude/settings.json", '--format hook_json"', '--format hook_json --quiet"', True),
    "codex": ("AGENTS.md", "Write small changes back", "Write SMALL changes back", False),
    "gemini_cli": (".gemini/settings.json", '"timeout": 10000', '"timeout": 60000', False),
    "cursor": (".cursor/rules/memorycloud.mdc", "## MemoryCloud memory", "## My own rule", True),
    "openclaw": ("MEMORY.md", "## Runtime Rule", "## Runtime Rule (edited by me)", True),
    "generic": ("AGENTS.md", "Stored memory never overrides", "Stored memory NEVER overrides", False),
}
BULK = {"claude_code", "codex"}  # runtimes also checked with ~60 large Chinese deltas
# Files that hold the context itself, rewritten by the daemon when the memory changes (the
# Cursor rule no longer is one: it is static and holds no memory).
DYNAMIC = {"openclaw": "MEMORY.md"}


def _hook_entries(data: dict, event: str) -> list[dict]:
    return [h for entry in data["hooks"][event] for h in entry["hooks"]]


def _ours(handlers: list[dict]) -> list[dict]:
    return [h for h in handlers if ".amp/launcher.py" in h["command"]]


def check_claude(repo: Path) -> None:
    data = json.loads((repo / ".claude/settings.json").read_text())
    assert data["permissions"] == {"allow": ["Bash(ls:*)"], "deny": []}
    start = _hook_entries(data, "SessionStart")
    assert USER_HOOK["hooks"][0] in start
    (ours,) = _ours(start)
    assert ours["timeout"] == 10 and ours["command"].endswith("--runtime claude_code --format hook_json")
    (pre,) = _ours(_hook_entries(data, "PreCompact"))
    assert pre["timeout"] == 10 and pre["command"].endswith("--event pre-compact")


def check_codex(repo: Path) -> None:
    data = json.loads((repo / ".codex/hooks.json").read_text())
    start = _hook_entries(data, "SessionStart")
    assert USER_HOOK["hooks"][0] in start
    (ours,) = _ours(start)
    assert ours["timeout"] == 10 and "--runtime codex" in ours["command"]
    agents = (repo / "AGENTS.md").read_text()
    assert agents.startswith(TEAM_RULES) and "memorycloud:begin startup-item:codex" in agents


def check_gemini(repo: Path) -> None:
    data = json.loads((repo / ".gemini/settings.json").read_text())
    assert data["theme"] == "GitHub" and data["ui"] == {"hideTips": True}
    (ours,) = _ours(_hook_entries(data, "SessionStart"))
    assert ours["timeout"] == 10_000 and ours["name"] == "memorycloud-context"  # milliseconds


def check_cursor(repo: Path) -> None:
    rule = (repo / ".cursor/rules/memorycloud.mdc").read_text()
    assert rule.startswith("---\n") and "\nalwaysApply: true\n" in rule and PACK_TITLE not in rule
    mcp = json.loads((repo / ".cursor/mcp.json").read_text())
    assert "memorycloud" in mcp["mcpServers"]


def check_openclaw(repo: Path) -> None:
    assert json.loads((repo / ".amp/install/openclaw.json").read_text()) == OPENCLAW_SEED
    memory = (repo / "MEMORY.md").read_text()
    assert memory.startswith(USER_FILES["openclaw"]["MEMORY.md"])
    assert "memorycloud:begin context:openclaw" in memory and PACK_TITLE in memory
    assert "memorycloud:begin startup-item:openclaw" in (repo / "AGENTS.md").read_text()


def check_generic(repo: Path) -> None:
    agents = (repo / "AGENTS.md").read_text()
    assert agents.startswith(TEAM_RULES) and "memorycloud:begin startup-item:generic" in agents
    assert "python3 .amp/launcher.py --runtime generic" in agents


SHAPES: dict[str, Callable[[Path], None]] = {
    "claude_code": check_claude,
    "codex": check_codex,
    "gemini_cli": check_gemini,
    "cursor": check_cursor,
    "openclaw": check_openclaw,
    "generic": check_generic,
}


# -- helpers -------------------------------------------------------------------------------


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for rel, text in {**COMMON_USER_FILES, **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode())
    return root.resolve()


def snapshot(repo: Path, *, skip_local_state: bool = False) -> dict[str, bytes | None]:
    """Every file's bytes and every directory (None) under repo, except .git."""
    out: dict[str, bytes | None] = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        if skip_local_state and (rel.startswith(".amp/cache") or rel == ".amp/receipt.json"):
            continue  # git-ignored local state the daemon refreshes on purpose
        out[rel] = None if path.is_dir() else path.read_bytes()
    return out


def connect(repo: Path, runtime: str, check: bool = True) -> tuple[int, dict]:
    result = cli("connect", "--runtime", runtime, "--repo", str(repo), "--yes", "--json", check=check)
    return result.returncode, json.loads(result.stdout)


def setup(*args: str) -> dict | list:
    return json.loads(cli("setup", *args, "--json").stdout)


def launch(repo: Path, runtime: str, *extra: str, stdin: dict | None = None) -> subprocess.CompletedProcess:
    hook_input = (
        stdin
        if stdin is not None
        else {
            "session_id": "sess-1",
            "hook_event_name": "SessionStart",
            "source": "startup",
            "cwd": str(repo),
        }
    )
    env = os.environ.copy()
    env.pop("MEMORYCLOUD_API_KEY", None)
    # -S and --format like the installed hook commands (runtimes.launcher_command).
    command = [sys.executable, "-S", str(repo / ".amp/launcher.py"), "--runtime", runtime, *extra]
    if "--event" not in extra:
        command += ["--format", resolve_runtime(runtime).output]
    return subprocess.run(
        command, input=json.dumps(hook_input), capture_output=True, text=True, timeout=20, env=env
    )


def context_of(runtime: str, result: subprocess.CompletedProcess) -> str:
    """The launcher's output in its runtime's format; returns the context text."""
    assert result.returncode == 0, result.stderr
    out = result.stdout
    spec = RUNTIMES[runtime]
    if spec.max_chars:
        assert len(out.rstrip("\n")) <= spec.max_chars
    if spec.max_tokens:
        assert estimate_tokens(out.rstrip("\n")) <= spec.max_tokens
    if runtime in HOOK_RUNTIMES:
        assert out.endswith("\n") and out.count("\n") == 1  # exactly one JSON object, nothing else
        data = json.loads(out)
        assert list(data) == ["hookSpecificOutput"]
        assert set(data["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
        assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        return data["hookSpecificOutput"]["additionalContext"]
    assert not out.lstrip().startswith("{")
    return out


def credentials(home: Path) -> dict[str, str]:
    return json.loads((home / "config/credentials.json").read_text())


def write_delta(url: str, repo: Path, home: Path, summary: str, importance: int = 3) -> None:
    receipt = json.loads((repo / ".amp/receipt.json").read_text())
    response = httpx.post(
        receipt["memory_delta"],
        json={"summary": summary, "delta_type": "decision", "importance": importance},
        headers={
            "Authorization": f"Bearer {credentials(home)['memorycloud_default']}",
            "X-AMP-Context-Receipt": receipt["receipt_id"],
        },
        timeout=10,
    )
    assert response.status_code == 200, response.text
    assert receipt["memory_delta"].startswith(url)


def wait_for(predicate: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def cache_has(repo: Path, runtime: str, text: str) -> bool:
    try:
        return text in json.loads((repo / f".amp/cache/{runtime}.json").read_text())["summary_markdown"]
    except (OSError, ValueError):
        return False


# -- the lifecycle, per runtime --------------------------------------------------------------


def install_and_use(repo: Path, runtime: str, daemon, *, bulk: bool = False) -> dict:
    """Steps 2-3: connect, check the files, run the launcher with the daemon up."""
    before = snapshot(repo)
    code, installed = connect(repo, runtime)
    assert code == 0
    assert installed["status"] == ("installed" if runtime in HOOK_RUNTIMES else "fallback_active")
    SHAPES[runtime](repo)
    for rel in ("README.md", ".cursor/rules/other.mdc", "CLAUDE.md"):
        if rel in before:
            assert (repo / rel).read_bytes() == before[rel]
    config = json.loads((repo / ".amp/memory-config.json").read_text())
    assert config["daemon_url"] == daemon.url
    assert config["runtimes"][runtime]["credential_ref"] == "memorycloud_default"
    ignored = (repo / ".amp/.gitignore").read_text().splitlines()
    assert "cache/" in ignored and "receipt.json" in ignored
    assert (repo / ".amp/launcher.py").read_text().startswith("#!/usr/bin/env python3")

    first = context_of(runtime, launch(repo, runtime))
    assert first.startswith(PACK_TITLE)
    assert (repo / ".amp/receipt.json").exists()
    if bulk:
        for i in range(60):
            write_delta(daemon.url, repo, daemon.home, f"第{i}条：{BULK_TEXT}")
    write_delta(daemon.url, repo, daemon.home, DELTA_TEXT, importance=5)
    live = launch(repo, runtime)
    text = context_of(runtime, live)
    assert text.startswith(PACK_TITLE) and DELTA_TEXT in text and "CACHED" not in text
    assert live.stderr == ""
    if bulk:
        assert text.count(BULK_TEXT[:20]) >= 2
    if bulk and runtime == "codex":
        assert "left out to stay within" in text  # the token cap cut the Chinese memories
    wait_for(lambda: cache_has(repo, runtime, DELTA_TEXT))  # the daemon refreshed the cache
    if runtime in DYNAMIC:  # ... and the rule / MEMORY.md block
        wait_for(lambda: DELTA_TEXT in (repo / DYNAMIC[runtime]).read_text())
    return installed


def hand_edit(repo: Path, runtime: str) -> tuple[Path, bytes, bytes]:
    rel, old, new, _ = EDITS[runtime]
    daemon_bytes = (repo / rel).read_bytes()
    assert old.encode() in daemon_bytes
    edited = daemon_bytes.replace(old.encode(), new.encode(), 1)
    (repo / rel).write_bytes(edited)
    return repo / rel, daemon_bytes, edited


@pytest.mark.parametrize("runtime", list(RUNTIMES))
def test_startup_item_lifecycle(runtime, daemon, tmp_path):
    repo = make_repo(tmp_path / "repo", USER_FILES[runtime])
    installed = install_and_use(repo, runtime, daemon, bulk=runtime in BULK)

    # 4. launcher, daemon down: the cached pack, marked with its age, one line on stderr
    daemon.stop()
    down = launch(repo, runtime)
    text = context_of(runtime, down)
    assert re.match(r"MemoryCloud: CACHED context from \S+ \(\d+ (s|min) old\)", text), text[:200]
    assert "<" not in text.split("\n", 1)[0] and ">" not in text.split("\n", 1)[0]  # Gemini escapes them
    assert PACK_TITLE in text and DELTA_TEXT in text
    assert len(down.stderr.strip().splitlines()) == 1, down.stderr

    # 5. apply again: a new plan for the same binding changes nothing
    daemon.start()
    steady = snapshot(repo, skip_local_state=True)
    code, again = connect(repo, runtime)
    assert code == 0 and again["project_binding_id"] == installed["project_binding_id"]
    assert again["plan_id"] != installed["plan_id"]
    assert again["written"] == [] and set(again["unchanged"]) == {f["path"] for f in again["files"]}
    assert snapshot(repo, skip_local_state=True) == steady

    # 6. a hand edit of the managed region: a conflict, and the edit is kept
    target, daemon_bytes, edited = hand_edit(repo, runtime)
    rel = EDITS[runtime][0]
    code, conflicted = connect(repo, runtime, check=False)
    assert code == 1 and conflicted["status"] == "conflict"
    assert rel in [c["path"] for c in conflicted["conflicts"]]
    assert rel in [c["path"] for c in setup("conflicts")]
    assert target.read_bytes() == edited
    if EDITS[runtime][3]:  # the person chooses the daemon's version
        replaced = setup("approve", conflicted["plan_id"], "--overwrite")
        assert replaced["status"] == "applied" and rel in replaced["written"]
        assert target.read_bytes() == daemon_bytes
        assert rel not in [c["path"] for c in setup("conflicts")]


@pytest.mark.parametrize("runtime", list(RUNTIMES))
def test_remove_restores_the_repository_byte_for_byte(runtime, daemon, tmp_path):
    # 7. after install, use, re-apply and a hand edit (overwritten or reverted): remove all
    repo = make_repo(tmp_path / "repo", USER_FILES[runtime])
    before = snapshot(repo)
    install_and_use(repo, runtime, daemon)
    assert connect(repo, runtime)[0] == 0
    target, daemon_bytes, _ = hand_edit(repo, runtime)
    code, conflicted = connect(repo, runtime, check=False)
    assert code == 1
    if EDITS[runtime][3]:
        assert setup("approve", conflicted["plan_id"], "--overwrite")["status"] == "applied"
    else:
        target.write_bytes(daemon_bytes)  # the person reverts the edit
    plans = [p["plan_id"] for p in setup("list") if p["status"] in ACTIVE]
    assert len(plans) == (3 if EDITS[runtime][3] else 2)
    results = [cli("setup", "remove", plan, "--json", check=False) for plan in plans]
    assert [r.returncode for r in results] == [0] * len(plans), [r.stderr for r in results]
    assert all(json.loads(r.stdout)["status"] == "removed" for r in results)
    assert not (repo / ".amp").exists()
    assert snapshot(repo) == before


# -- the launcher when something is wrong ----------------------------------------------------


@pytest.fixture
def all_installed(daemon, tmp_path) -> Path:
    """One repository with every runtime installed and a delta in every runtime's cache."""
    files: dict[str, str] = {}
    for runtime_files in USER_FILES.values():
        files.update(runtime_files)
    repo = make_repo(tmp_path / "repo", files)
    for runtime in RUNTIMES:
        assert connect(repo, runtime)[0] == 0
    context_of("generic", launch(repo, "generic"))
    write_delta(daemon.url, repo, daemon.home, DELTA_TEXT, importance=5)
    wait_for(lambda: all(cache_has(repo, r, DELTA_TEXT) for r in RUNTIMES))
    return repo


def test_launcher_with_a_corrupt_config_says_so_in_one_line(daemon, all_installed):
    """The cached pack, one line on stderr naming the file, and a hook's output still the one
    JSON object its runtime reads (context_of checks the shape)."""
    (all_installed / ".amp/memory-config.json").write_text("{ not json")
    for runtime in RUNTIMES:
        result = launch(all_installed, runtime)
        text = context_of(runtime, result)
        assert text.startswith("MemoryCloud: CACHED") and DELTA_TEXT in text
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "memory-config.json" in lines[0], result.stderr


def test_pre_compact_hook_saves_a_checkpoint(daemon, tmp_path):
    repo = make_repo(tmp_path / "repo", USER_FILES["claude_code"])
    assert connect(repo, "claude_code")[0] == 0
    context_of("claude_code", launch(repo, "claude_code"))  # saves the receipt
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(
        "\n".join(
            json.dumps(line, ensure_ascii=False)
            for line in (
                {"type": "user", "message": {"role": "user", "content": "把登录页面改成深色主题"}},
                {"type": "assistant", "message": {"role": "assistant", "content": "好的"}},
            )
        )
        + "\n",
        encoding="utf-8",
    )
    result = launch(
        repo,
        "claude_code",
        "--event",
        "pre-compact",
        stdin={"trigger": "auto", "transcript_path": str(transcript), "hook_event_name": "PreCompact"},
    )
    assert result.returncode == 0 and result.stdout == "" and result.stderr == ""
    text = context_of("claude_code", launch(repo, "claude_code"))
    assert "Session context compacted (auto)" in text and "把登录页面改成深色主题" in text


# -- no key in any written file ------------------------------------------------------------


def test_no_written_file_holds_a_key_and_without_its_key_the_launcher_uses_the_cache(daemon, all_installed):
    for runtime in RUNTIMES:
        context_of(runtime, launch(all_installed, runtime))
    launch(all_installed, "claude_code", "--event", "pre-compact", stdin={"trigger": "manual"})
    home = daemon.home
    keys = set(credentials(home).values())
    secrets = json.loads((home / "config/secrets.json").read_text())
    keys.add(secrets["owner_key"])
    assert keys and all(len(k) >= 16 for k in keys)
    skip = {home / "config/credentials.json", home / "config/secrets.json"}
    scanned = 0
    for root in (all_installed, home):
        for path in root.rglob("*"):
            if path.is_file() and path not in skip and ".git" not in path.relative_to(root).parts:
                data = path.read_bytes()
                scanned += 1
                for key in keys:
                    assert key.encode() not in data, f"an API key is in {path}"
    assert scanned > 20

    # The key gone (the daemon stays up): every launcher falls back to its cached pack and
    # says why in one line. In this test, not its own: all_installed takes ~6 s to build.
    (home / "config/credentials.json").unlink()
    for runtime in RUNTIMES:
        result = launch(all_installed, runtime)
        text = context_of(runtime, result)
        assert text.startswith("MemoryCloud: CACHED") and DELTA_TEXT in text
        assert len(result.stderr.strip().splitlines()) == 1 and "credential" in result.stderr


# -- as the real CLIs run it -------------------------------------------------------------------


def test_gemini_hook_in_an_awkward_path_runs_and_setup_says_so(daemon, tmp_path):
    """Gemini rewrites $GEMINI_PROJECT_DIR shell-quoted (tests/startup_items/runtime_shells.py);
    the hook starts without MEMORYCLOUD_HOME, so the launcher finds its key via .amp/local.json;
    the daemon records the run, and setup list and doctor say so."""
    from tests.startup_items.runtime_shells import run_hook

    repo = make_repo(tmp_path / "my repo @x=(1),y:z", USER_FILES["gemini_cli"])
    connected = cli("connect", "--runtime", "gemini_cli", "--repo", str(repo), "--yes").stdout
    assert "Still to do: start `gemini` in this repository and trust the folder" in connected
    assert "sessions now start with their memory" not in connected
    # No login service yet (the test's own XDG_CONFIG_HOME), so connect offers one.
    assert "Tip: the daemon is not started at login: `memorycloud service install`" in connected
    assert "hook has not run yet: start `gemini`" in cli("setup", "list").stdout
    (entry,) = json.loads((repo / ".gemini/settings.json").read_text())["hooks"]["SessionStart"]
    env = {k: v for k, v in os.environ.items() if k not in ("MEMORYCLOUD_HOME", "MEMORYCLOUD_API_KEY")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "empty-config")  # no key at the platform default
    ran = run_hook("gemini_cli", entry["hooks"][0]["command"], repo, env=env)
    assert context_of("gemini_cli", ran).startswith(PACK_TITLE) and ran.stderr == ""
    assert "hook last ran just now (startup)" in cli("setup", "list").stdout
    assert "hook last ran just now (startup)" in cli("doctor").stdout
