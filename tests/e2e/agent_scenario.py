"""One real agent CLI against a real daemon, offline: the driver that test_agent_clis.py runs
inside ``unshare -n`` (a network namespace of its own, loopback only).

``python -m tests.e2e.agent_scenario --cli codex --work DIR --bin NODE_BIN --out REPORT.json``

It plays the person and the machine: starts the daemon with a non-default MEMORYCLOUD_HOME,
connects a git repository whose path has a space and ``@ : , = ( )`` in it, registers the MCP
server, writes a memory, then runs the CLI headless against the fake model server:

1. ``up``: daemon running; the prompt asks for the memorycloud ``search`` MCP tool;
2. ``compact`` (Claude Code): ``/compact`` on the resumed session (PreCompact hook);
3. ``down``: daemon stopped; the startup hook must fall back to the cached context.

The CLI's environment has no MEMORYCLOUD_HOME (the person set it for the daemon and
``memorycloud`` only; the repository's ``.amp/local.json`` names it). The report holds every
run's output and the model requests it caused; the test asserts on it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import httpx

from tests.e2e import cli_setups
from tests.e2e.fake_model_server import ModelServer

REPO_NAME = "my repo @a:b,c=d(e)"
MEMORY_WORD = "zebrafinch"
MEMORY_TEXT = f"Team rule {MEMORY_WORD}: run the quokka migration before every deploy"
RUNTIME = {"codex": "codex", "gemini": "gemini_cli", "claude": "claude_code"}
VENV_BIN = Path(sys.executable).parent


class Scenario:
    def __init__(self, cli: str, work: Path, node_bin: Path) -> None:
        self.cli, self.runtime = cli, RUNTIME[cli]
        self.work = work
        self.node_bin = node_bin
        self.home = work / "home"  # the person's $HOME
        self.mc_home = work / "memory cloud home"  # non-default MEMORYCLOUD_HOME
        self.repo = work / REPO_NAME
        self.model = ModelServer(work / "model-requests.jsonl")
        self.port = 0
        self.report: dict[str, Any] = {
            "cli": cli,
            "runtime": self.runtime,
            "repo": str(self.repo),
            "memory_text": MEMORY_TEXT,
            "memory_word": MEMORY_WORD,
            "steps": [],
            "sessions": {},
        }

    # -- environments ------------------------------------------------------------------------

    def base_env(self) -> dict[str, str]:
        """What a login shell of this person has: memorycloud and the CLIs on PATH, no MC vars."""
        path = os.pathsep.join([str(VENV_BIN), str(self.node_bin), "/usr/local/bin", "/usr/bin", "/bin"])
        return {
            "PATH": path,
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "SHELL": "/bin/bash",
            "TERM": "dumb",
            "USER": "root",
            "LOGNAME": "root",
            "TMPDIR": str(self.work / "tmp"),
            **cli_setups.extra_env(self),
        }

    def person_env(self) -> dict[str, str]:
        """The person's shell when running ``memorycloud``: MEMORYCLOUD_HOME set for it."""
        return {**self.base_env(), "MEMORYCLOUD_HOME": str(self.mc_home), "MEMORYCLOUD_SECRETS": "file"}

    # -- steps -------------------------------------------------------------------------------

    def run(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str],
        *,
        cwd: Path | None = None,
        timeout: float = 120,
        check: bool = True,
    ) -> subprocess.CompletedProcess:
        start = time.monotonic()
        result = subprocess.run(
            argv,
            cwd=cwd or self.repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        self.report["steps"].append(
            {
                "name": name,
                "argv": argv,
                "returncode": result.returncode,
                "stdout": result.stdout[-4000:],
                "stderr": result.stderr[-4000:],
                "seconds": round(time.monotonic() - start, 2),
            }
        )
        if check and result.returncode != 0:
            raise RuntimeError(f"{name} failed ({result.returncode}): {result.stderr[-2000:]}")
        return result

    def memorycloud(self, name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return self.run(name, ["memorycloud", *args], self.person_env(), check=check)

    def prepare(self) -> None:
        for directory in (self.home, self.mc_home, self.work / "tmp"):
            directory.mkdir(parents=True, exist_ok=True)
        self.repo.mkdir()
        subprocess.run(["git", "init", "-q", str(self.repo)], check=True)
        (self.repo / "README.md").write_text("# A project\n")
        self.model.start()
        self.port = free_port()
        self.report["model_url"] = self.model.url
        cli_setups.before_connect(self)
        self.memorycloud("daemon start", "daemon", "start", "--port", str(self.port))
        self.memorycloud(
            "connect", "connect", "--runtime", self.runtime, "--repo", str(self.repo), "--yes", "--json"
        )
        self.memorycloud(
            "mcp install", "mcp", "install", "--runtime", self.runtime, "--repo", str(self.repo), "--json"
        )
        self.write_memory()
        cli_setups.after_connect(self)
        self.report["files"] = {
            rel: read(self.repo / rel)
            for rel in (
                ".amp/local.json",
                ".amp/memory-config.json",
                ".codex/hooks.json",
                ".gemini/settings.json",
                ".claude/settings.json",
                ".mcp.json",
                "AGENTS.md",
            )
        }
        self.report["files"].update(cli_setups.extra_files(self))

    def key(self) -> str:
        return json.loads((self.mc_home / "config/credentials.json").read_text())["memorycloud_default"]

    def daemon_url(self) -> str:
        return json.loads((self.repo / ".amp/memory-config.json").read_text())["daemon_url"]

    def write_memory(self) -> None:
        """A decision in this project's memory, as an agent would write it (receipt + delta)."""
        config = json.loads((self.repo / ".amp/memory-config.json").read_text())
        auth = {"Authorization": f"Bearer {self.key()}"}
        pack = httpx.post(
            f"{self.daemon_url()}/api/agent/bootstrap/context",
            headers=auth,
            timeout=10,
            json={"project_binding_id": config["project_binding_id"], "runtime": self.runtime},
        ).json()
        written = httpx.post(
            f"{self.daemon_url()}/api/agent/memory-delta",
            timeout=10,
            json={"delta_type": "decision", "summary": MEMORY_TEXT, "importance": 5},
            headers={**auth, "X-AMP-Context-Receipt": pack["receipt_id"]},
        )
        written.raise_for_status()
        cache = self.repo / f".amp/cache/{self.runtime}.json"
        deadline = time.monotonic() + 15
        while MEMORY_TEXT not in read(cache):  # the daemon refreshes the fallback cache itself
            if time.monotonic() > deadline:
                raise RuntimeError(f"the fallback cache never got the memory: {read(cache)[:500]}")
            time.sleep(0.1)

    def search(self, query: str) -> dict[str, Any]:
        response = httpx.get(
            f"{self.daemon_url()}/api/agent/search",
            params={"q": query, "limit": 20},
            headers={"Authorization": f"Bearer {self.key()}"},
            timeout=10,
        )
        return response.json()

    def session(
        self, name: str, argv: list[str], env: dict[str, str], timeout: float = 150
    ) -> subprocess.CompletedProcess:
        """One CLI run; its model requests are kept with it."""
        mark = self.model.mark()
        result = self.run(f"session {name}", argv, env, timeout=timeout, check=False)
        self.report["sessions"][name] = {**self.report["steps"][-1], "requests": self.model.requests[mark:]}
        return result

    def launcher_fallback(self) -> str:
        """What the hook prints with the daemon down (run exactly like the installed hook)."""
        result = subprocess.run(
            [
                "python3",
                "-S",
                str(self.repo / ".amp/launcher.py"),
                "--runtime",
                self.runtime,
                "--format",
                "hook_json",
            ],
            cwd=self.repo,
            env=self.base_env(),
            input="{}",
            capture_output=True,
            text=True,
            timeout=20,
        )
        try:
            return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError):
            return result.stdout + result.stderr

    def scenario(self) -> None:
        self.prepare()
        env = cli_setups.cli_env(self)
        self.report["cli_env"] = {k: v for k, v in env.items() if "KEY" not in k}
        self.session("up", cli_setups.argv(self, f"MC-SESSION-up MC-TOOL-SEARCH {MEMORY_WORD}"), env)
        cli_setups.more_sessions(self, env)
        self.memorycloud("daemon stop", "daemon", "stop")
        self.report["launcher_fallback"] = self.launcher_fallback()
        self.session("down", cli_setups.argv(self, "MC-SESSION-down say hello"), env)

    def cleanup(self) -> None:
        self.memorycloud("daemon stop (cleanup)", "daemon", "stop", check=False)
        self.model.stop()
        self.report["mcp_server_logs"] = cli_setups.collect_logs(self)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", choices=sorted(RUNTIME), required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    scenario = Scenario(args.cli, Path(args.work), Path(args.bin))
    try:
        scenario.scenario()
    except Exception:
        scenario.report["error"] = traceback.format_exc()
    finally:
        try:
            scenario.cleanup()
        except Exception:
            scenario.report.setdefault("error", traceback.format_exc())
        Path(args.out).write_text(json.dumps(scenario.report, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
