"""The launcher on its own: where it finds its key, and what it says when a sandbox refuses its
connection (a real seccomp filter, as Codex's Linux sandbox installs) versus a daemon that is
down."""

from __future__ import annotations

import ctypes
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from startup_items import launcher
from startup_items.runtimes import launcher_source

CACHE = {
    "schema": "memorycloud.fallback-cache.v1",
    "runtime": "codex",
    "generated_at": "2026-05-18T08:00:00.000Z",
    "workspace_id": "wsp_x",
    "project_key": "proj",
    "summary_markdown": "# MemoryCloud Runtime Context Pack\n\ncached.",
}


# -- the key ------------------------------------------------------------------------------


def _credentials(path: Path, key: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"memorycloud_default": key}))
    return path


@pytest.fixture
def places(tmp_path, monkeypatch):
    """Each place a key can come from, with a different key in each."""
    monkeypatch.delenv("MEMORYCLOUD_API_KEY", raising=False)
    monkeypatch.delenv("MEMORYCLOUD_HOME", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    _credentials(tmp_path / "xdg/memorycloud/credentials.json", "mca_default")
    named = _credentials(tmp_path / "other-home/config/credentials.json", "mca_local_json")
    local = tmp_path / "repo/.amp/local.json"
    local.parent.mkdir(parents=True)
    local.write_text(
        json.dumps(
            {
                "schema": "memorycloud.local-config.v1",
                "memorycloud_home": str(tmp_path / "other-home"),
                "credentials_file": str(named),
            }
        )
    )
    monkeypatch.setattr(launcher, "LOCAL_CONFIG", str(local))
    _credentials(tmp_path / "env-home/config/credentials.json", "mca_env_home")
    return tmp_path


def test_key_order_environment_home_local_json_default(places, monkeypatch):
    monkeypatch.setenv("MEMORYCLOUD_API_KEY", "mca_env")
    assert launcher.find_key("memorycloud_default") == "mca_env"
    monkeypatch.delenv("MEMORYCLOUD_API_KEY")
    monkeypatch.setenv("MEMORYCLOUD_HOME", str(places / "env-home"))
    assert launcher.find_key("memorycloud_default") == "mca_env_home"
    monkeypatch.delenv("MEMORYCLOUD_HOME")  # as a hook starts it: no MEMORYCLOUD_HOME
    assert launcher.find_key("memorycloud_default") == "mca_local_json"
    (places / "repo/.amp/local.json").unlink()
    assert launcher.find_key("memorycloud_default") == "mca_default"


def test_a_home_without_the_key_falls_through_to_local_json(places, monkeypatch):
    monkeypatch.setenv("MEMORYCLOUD_HOME", str(places / "empty-home"))
    assert launcher.find_key("memorycloud_default") == "mca_local_json"
    with pytest.raises(LookupError, match="credential_ref 'other'"):
        launcher.find_key("other")


# -- a sandbox that refuses the connection ---------------------------------------------------

SECCOMP_ARCH = {"x86_64": (0xC000003E, 42), "aarch64": (0xC00000B7, 203)}  # (AUDIT_ARCH, connect)


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _deny_connect() -> None:
    """preexec_fn: a seccomp filter answering connect(2) with EPERM, as Codex's Linux sandbox
    (and macOS seatbelt) refuse network access in workspace-write mode."""
    arch, connect_nr = SECCOMP_ARCH[platform.machine()]
    allow, eperm = 0x7FFF0000, 0x00050000 | 1
    program = [
        (0x20, 0, 0, 4),
        (0x15, 1, 0, arch),
        (0x06, 0, 0, allow),  # other arch: allow
        (0x20, 0, 0, 0),
        (0x15, 0, 1, connect_nr),
        (0x06, 0, 0, eperm),
        (0x06, 0, 0, allow),
    ]
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    prog = _SockFprog(len(program), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS")
    if libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "PR_SET_SECCOMP")


needs_seccomp = pytest.mark.skipif(
    sys.platform != "linux" or platform.machine() not in SECCOMP_ARCH, reason="Linux seccomp"
)


@pytest.fixture
def repo(tmp_path) -> Path:
    """A repository with the launcher, a config naming a daemon, its key, and a cache."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    amp = tmp_path / "repo/.amp"
    (amp / "cache").mkdir(parents=True)
    (amp / "launcher.py").write_text(launcher_source())
    (amp / "memory-config.json").write_text(
        json.dumps(
            {
                "daemon_url": f"http://127.0.0.1:{port}",
                "project_binding_id": "pbind_x",
                "runtimes": {"codex": {"credential_ref": "memorycloud_default", "output": "hook_json"}},
            }
        )
    )
    (amp / "cache/codex.json").write_text(json.dumps(CACHE))
    return tmp_path / "repo"


def _launch(repo: Path, **kwargs) -> tuple[str, str]:
    env = {**os.environ, "MEMORYCLOUD_API_KEY": "mca_test"}
    result = subprocess.run(
        [
            shutil.which("python3") or sys.executable,
            "-S",
            str(repo / ".amp/launcher.py"),
            "--runtime",
            "codex",
            "--format",
            "hook_json",
        ],
        input=json.dumps({"hook_event_name": "SessionStart", "source": "startup"}),
        capture_output=True,
        text=True,
        timeout=20,
        env=env,
        **kwargs,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"], result.stderr


@needs_seccomp
def test_a_sandbox_refusal_is_not_reported_as_a_daemon_that_is_down(repo):
    text, stderr = _launch(repo, preexec_fn=_deny_connect)
    banner = text.split("\n", 1)[0]
    assert banner.startswith("MemoryCloud: CACHED context from 2026-05-18T08:00:00.000Z")
    assert "sandbox does not allow connecting" in banner and "could not be reached" not in banner
    assert "context_pack" in banner and "<" not in banner and ">" not in banner
    (line,) = stderr.strip().splitlines()
    assert "sandbox" in line and "Operation not permitted" in line and "MCP" in line
    assert "cached." in text


def test_a_daemon_that_is_down_is_said_so(repo):
    text, stderr = _launch(repo)
    banner = text.split("\n", 1)[0]
    assert "the daemon could not be reached" in banner and "sandbox" not in banner
    assert "<" not in banner and ">" not in banner  # Gemini shows the model &gt; otherwise
    assert len(stderr.strip().splitlines()) == 1 and "sandbox" not in stderr


@needs_seccomp
def test_no_cache_in_a_sandbox_points_to_the_mcp_tools(repo):
    (repo / ".amp/cache/codex.json").unlink()
    text, _ = _launch(repo, preexec_fn=_deny_connect)
    assert text.startswith("# MemoryCloud memory unavailable here")
    assert "memorycloud MCP server" in text and "memorycloud daemon start" not in text
