"""The real agent CLIs from npm, pinned, installed once into a cache (tests/e2e/test_agent_clis.py).

``MC_AGENT_CLIS=1`` opts in: the CLIs are installed with ``npm install --prefix <cache>``
into ``~/.cache/memorycloud-tests/agent-clis/<hash of the versions>`` (``MC_AGENT_CLIS_DIR``
moves it) and reused from there. ``MC_AGENT_CLI_VERSIONS`` overrides the pins, e.g.
``codex=0.172.0,gemini=0.62.0``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

# The versions this harness was written against (observed behaviour in the findings file).
PINNED: dict[str, tuple[str, str]] = {
    "codex": ("@openai/codex", "0.171.0"),
    "gemini": ("@google/gemini-cli", "0.61.0"),
    "claude": ("@anthropic-ai/claude-code", "2.1.197"),
}
OPT_IN = "MC_AGENT_CLIS"
RUN_REASON = (
    "set MC_AGENT_CLIS=1 to install Codex, Gemini CLI and Claude Code from npm and run"
    " them offline against a fake model server"
)


def versions() -> dict[str, tuple[str, str]]:
    """The pinned packages, with ``MC_AGENT_CLI_VERSIONS`` (name=version,...) applied."""
    pins = dict(PINNED)
    for item in filter(None, os.environ.get("MC_AGENT_CLI_VERSIONS", "").split(",")):
        name, _, version = item.partition("=")
        if name.strip() in pins and version.strip():
            pins[name.strip()] = (pins[name.strip()][0], version.strip())
    return pins


def cache_dir() -> Path:
    if os.environ.get("MC_AGENT_CLIS_DIR"):
        return Path(os.environ["MC_AGENT_CLIS_DIR"]).expanduser()
    specs = ",".join(f"{pkg}@{ver}" for pkg, ver in sorted(versions().values()))
    digest = hashlib.sha256(specs.encode()).hexdigest()[:12]
    return Path("~/.cache/memorycloud-tests/agent-clis").expanduser() / digest


def bin_dir() -> Path:
    return cache_dir() / "node_modules" / ".bin"


def _installed(directory: Path) -> bool:
    """Every pinned package is there at its pinned version."""
    for package, version in versions().values():
        manifest = directory / "node_modules" / package / "package.json"
        try:
            if json.loads(manifest.read_text())["version"] != version:
                return False
        except (OSError, ValueError, KeyError):
            return False
    return True


def skip_reason() -> str | None:
    """Why the real-CLI tests cannot run here (None: they can, once ``ensure_installed``)."""
    if os.environ.get(OPT_IN) != "1":
        return RUN_REASON
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "needs unshare and ip (util-linux, iproute2) to run the CLIs without a network"
    probe = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare -n is not permitted here: {probe.stderr.strip()}"
    if shutil.which("python3") is None:
        return "needs python3 on PATH (the startup hooks run `python3 -S .amp/launcher.py`)"
    if not _installed(cache_dir()) and shutil.which("npm") is None:
        return "needs npm to install the agent CLIs"
    return None


def ensure_installed() -> Path:
    """Install the pinned CLIs into the cache unless they are there; returns the bin dir."""
    directory = cache_dir()
    if not _installed(directory):
        directory.mkdir(parents=True, exist_ok=True)
        specs = [f"{pkg}@{ver}" for pkg, ver in versions().values()]
        result = subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(directory),
                "--no-audit",
                "--no-fund",
                "--no-save",
                "--loglevel=error",
                *specs,
            ],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if result.returncode != 0 or not _installed(directory):
            raise RuntimeError(f"npm install {' '.join(specs)} failed: {result.stderr[-2000:]}")
    return bin_dir()
