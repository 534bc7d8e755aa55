"""The real agent CLIs (Codex, Gemini CLI, Claude Code from npm) start with their memory, offline.

Opt in with ``MC_AGENT_CLIS=1`` (installs the pinned CLIs once into a cache, see
tests/e2e/agent_clis.py). Per CLI, one driver (tests/e2e/agent_scenario.py) runs inside
``unshare -n`` with loopback only, so nothing can leave the machine: a real daemon with a
non-default MEMORYCLOUD_HOME, real ``memorycloud connect --yes`` and ``memorycloud mcp
install`` into a git repository named ``my repo @a:b,c=d(e)``, a memory written before, and
the CLI run headless against our fake model server (tests/e2e/fake_model_server.py), which
records every request. The tests below assert on those requests and on the CLIs' output.

What a person did by hand once is in tests/e2e/cli_setups.py, in the CLIs' own files: Codex
trusts the project (``[projects."<repo>"] trust_level = "trusted"``) and the hook (the
``[hooks.state."<hooks.json>:session_start:0:0"] trusted_hash`` that ``/hooks`` writes; headless
``codex exec`` never asks and silently skips an unapproved project hook); Gemini trusts the
folder (``~/.gemini/trustedFolders.json``; ``gemini -p`` refuses an untrusted one) and runs
with ``--approval-mode yolo`` (``-p`` denies tools that would ask); Claude Code has the
repository's ``.mcp.json`` server approved in ``~/.claude.json`` and the tool allowed with
``--allowedTools``. The CLIs are started WITHOUT MEMORYCLOUD_HOME: the person set it only for
the daemon and ``memorycloud`` (``.amp/local.json`` names it).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import agent_clis
from tests.e2e.fake_model_server import memorycloud_search_tool, request_text, tool_names

CLIS = ("codex", "gemini", "claude")
PACK_TITLE = "MemoryCloud Runtime Context Pack"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
VENDOR = {"codex": "openai", "gemini": "gemini", "claude": "anthropic"}
_REASON = agent_clis.skip_reason()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")


@pytest.fixture(scope="module")
def node_bin() -> Path:
    return agent_clis.ensure_installed()


@pytest.fixture(scope="module")
def reports(node_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Any]]]:
    """One driver run per CLI, on first use (each shares one daemon and model server)."""
    cache: dict[str, dict[str, Any]] = {}

    class Lazy(dict):
        def __missing__(self, cli: str) -> dict[str, Any]:
            cache[cli] = run_scenario(cli, node_bin, tmp_path_factory.mktemp(f"agent-{cli}"))
            self[cli] = cache[cli]
            return cache[cli]

    yield Lazy()


def run_scenario(cli: str, node_bin: Path, work: Path) -> dict[str, Any]:
    out = work / "report.json"
    # The driver's own environment: none of the test's MEMORYCLOUD_* (it builds every child's).
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYCLOUD_")}
    script = (
        f"ip link set lo up && exec {sys.executable} -m tests.e2e.agent_scenario"
        ' --cli "$0" --work "$1" --bin "$2" --out "$3"'
    )
    result = subprocess.run(
        ["unshare", "-n", "sh", "-c", script, cli, str(work / "w"), str(node_bin), str(out)],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if not out.exists():
        pytest.fail(f"the {cli} driver wrote no report ({result.returncode}): {result.stderr[-3000:]}")
    report = json.loads(out.read_text())
    if report.get("error"):
        pytest.fail(f"the {cli} scenario broke: {report['error']}\nsteps: {steps_summary(report)}")
    return report


def steps_summary(report: dict[str, Any]) -> str:
    return "\n".join(
        f"- {s['name']}: {s['returncode']} ({s['seconds']} s) {s['stderr'][-600:]}" for s in report["steps"]
    )


def session(report: dict[str, Any], name: str) -> dict[str, Any]:
    data = report["sessions"][name]
    assert data["returncode"] == 0, (
        f"{report['cli']} {name} exited {data['returncode']}:\n{data['stderr'][-3000:]}"
    )
    return data


def side_question(body: Any) -> bool:
    """Gemini asks its router classifier (JSON mode, no tools) before the turn itself."""
    config = body.get("generationConfig") if isinstance(body, dict) else None
    return isinstance(config, dict) and config.get("responseMimeType") == "application/json"


def prompt_request(report: dict[str, Any], name: str) -> dict[str, Any]:
    """The first turn request carrying this session's prompt (when the model first reads it)."""
    marker = f"MC-SESSION-{name}"
    for request in session(report, name)["requests"]:
        if marker in request_text(request["body"]) and not side_question(request["body"]):
            return request
    raise AssertionError(
        f"no model request carried {marker}; got {[r['path'] for r in report['sessions'][name]['requests']]}"
    )


def normalise(text: str) -> str:
    """Ages and times differ between two launcher runs; digits do not matter here."""
    return re.sub(r"\d+", "N", text)


def tool_results(vendor: str, body: dict[str, Any]) -> list[str]:
    """The texts of the tool results a request carries back to the model."""
    if vendor == "openai":
        return [
            request_text(i.get("output"))
            for i in body.get("input") or []
            if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
    if vendor == "gemini":
        return [
            request_text(p["functionResponse"])
            for c in body.get("contents") or []
            for p in c.get("parts") or []
            if isinstance(p, dict) and "functionResponse" in p
        ]
    return [
        request_text(b.get("content"))
        for m in body.get("messages") or []
        if isinstance(m.get("content"), list)
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


# -- (a) (b) (c): the repository with an awkward path, MEMORYCLOUD_HOME only in local.json ------


@pytest.mark.parametrize("cli", CLIS)
def test_setup_is_what_a_person_has(reports, cli: str) -> None:
    report = reports[cli]
    assert " " in report["repo"] and all(c in report["repo"] for c in "@:,=()")
    assert "MEMORYCLOUD_HOME" not in report["cli_env"]
    local = json.loads(report["files"][".amp/local.json"])
    assert local["memorycloud_home"].endswith("memory cloud home")  # the daemon's non-default home


@pytest.mark.parametrize("cli", CLIS)
def test_daemon_up_first_request_has_the_context_pack(reports, cli: str) -> None:
    report = reports[cli]
    text = request_text(prompt_request(report, "up")["body"])
    assert PACK_TITLE in text, f"{cli}: no context pack in the first request:\n{text[-3000:]}"
    assert report["memory_text"] in text
    assert "CACHED" not in text


# -- (d): daemon down, the cached context arrives readable ---------------------------------


@pytest.mark.parametrize("cli", CLIS)
def test_daemon_down_request_has_the_cached_context_unescaped(reports, cli: str) -> None:
    report = reports[cli]
    text = request_text(prompt_request(report, "down")["body"])
    fallback = report["launcher_fallback"]
    assert "CACHED" in fallback and report["memory_text"] in fallback, fallback
    banner = fallback.strip().splitlines()[0]
    assert "CACHED" in text, f"{cli}: no cached context in the request:\n{text[-3000:]}"
    # Exactly as the launcher printed it: Gemini HTML-escapes < and > in hook context.
    assert normalise(banner) in normalise(text), (
        f"{cli}: banner changed on the way:\n{banner}\n---\n{text[-3000:]}"
    )
    assert report["memory_text"] in text


# -- (e): the MCP server answers a tool call inside the session -----------------------------


@pytest.mark.parametrize("cli", CLIS)
def test_mcp_search_tool_answers_inside_the_session(reports, cli: str) -> None:
    report = reports[cli]
    first = prompt_request(report, "up")["body"]
    offered = memorycloud_search_tool(first)
    names = [(namespace or "") + name for namespace, name in tool_names(first)]
    assert offered is not None, (
        f"{cli} offered the model no memorycloud search tool in its first request; tools: {names}"
    )
    later = [tool_results(VENDOR[cli], r["body"]) for r in session(report, "up")["requests"]]
    results = [text for texts in later for text in texts]
    assert any(report["memory_text"] in text for text in results), f"{cli}: tool results: {results}"


# -- hook outcomes as each CLI reports them -------------------------------------------------


@pytest.mark.parametrize("cli", CLIS)
def test_hooks_report_no_failure(reports, cli: str) -> None:
    report = reports[cli]
    for name in ("up", "down"):
        stderr = session(report, name)["stderr"]
        if cli == "codex":
            assert "hook: SessionStart Completed" in stderr, stderr[-2000:]
            assert "hook: SessionStart Failed" not in stderr
        elif cli == "gemini":
            assert not re.search(r"\b\d+ failed\b|Hook\(s\) \[.*\] failed", stderr), stderr[-2000:]
    if cli == "claude":
        for log_name, log in report["mcp_server_logs"].items():
            errors = [line for line in log.splitlines() if '[ERROR] MCP server "memorycloud"' in line]
            assert not errors, f"{log_name}: Claude Code shows our MCP server as failing:\n" + "\n".join(
                errors[:5]
            )
            assert "SessionStart" not in log or "Hook SessionStart:startup (SessionStart) error" not in log


# -- (f): Claude Code's PreCompact hook saves a checkpoint --------------------------------------


def test_claude_precompact_saves_a_checkpoint(reports) -> None:
    report = reports["claude"]
    assert "compact_error" not in report, report.get("compact_error")
    session(report, "compact")
    items = report["checkpoint_search"].get("items", [])
    checkpoints = [i for i in items if i.get("memory_type") == "checkpoint"]
    assert checkpoints, f"no checkpoint delta after /compact: {report['checkpoint_search']}"
    assert "compacted (manual)" in checkpoints[0]["content"]
    assert "MC-SESSION-" in checkpoints[0]["content"]  # the last request of the session
