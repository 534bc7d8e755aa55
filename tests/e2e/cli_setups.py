"""Per CLI: what a person has set up before running it headless, its environment and argv.

Everything a person would have done by hand once (log in, trust the folder, approve the
project's hooks and MCP server) is written into the CLI's own settings files under the temp
$HOME / $CODEX_HOME, in the form the CLI itself writes when the person clicks "trust".
The model provider settings point each CLI at the fake model server.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.e2e.agent_scenario import Scenario

LAUNCHER = ".amp/launcher.py"
QUIET_ENV = {
    # Claude Code: no telemetry, error reports, update checks or other non-model traffic.
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    # Gemini CLI: no telemetry (also off in settings.json).
    "GEMINI_TELEMETRY_ENABLED": "false",
}
# MC_E2E_EXTRA_ENV=A=1,B=2: extra variables for the CLIs (to try a setting by hand).
EXTRA = dict(
    item.split("=", 1)
    for item in filter(None, __import__("os").environ.get("MC_E2E_EXTRA_ENV", "").split(","))
)


def codex_home(s: Scenario) -> Path:
    return s.work / "codex home"


def extra_env(s: Scenario) -> dict[str, str]:
    """Variables the person's shell has for this CLI (also seen by `memorycloud mcp install`)."""
    return {"CODEX_HOME": str(codex_home(s))} if s.cli == "codex" else {}


# -- Codex ---------------------------------------------------------------------------------


def codex_config(s: Scenario) -> str:
    """$CODEX_HOME/config.toml: the fake provider, no update check or analytics, the repo trusted
    (what the TUI's "trust this folder?" answer writes)."""
    return "\n".join(
        [
            'model = "gpt-5.1-codex"',
            'model_provider = "mcfake"',
            "check_for_update_on_startup = false",
            "",
            "[model_providers.mcfake]",
            'name = "MemoryCloud fake model"',
            f'base_url = "{s.model.url}/v1"',
            'wire_api = "responses"',
            'env_key = "MC_FAKE_OPENAI_KEY"',
            "requires_openai_auth = false",
            "",
            "[analytics]",
            "enabled = false",
            "",
            f"[projects.{json.dumps(str(s.repo))}]",
            'trust_level = "trusted"',
            "",
        ]
    )


def codex_hook_hash(event_key: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """The trusted_hash Codex's /hooks writes when a person approves a hook: sha256 of the
    canonical JSON of the normalised handler (codex-rs hooks/src/engine/discovery.rs)."""
    normalised: dict[str, Any] = {
        "type": "command",
        "command": handler["command"],
        "timeout": max(1, int(handler.get("timeout") or 600)),
        "async": bool(handler.get("async", False)),
    }
    if "statusMessage" in handler:
        normalised["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_key, "hooks": [normalised]}
    if matcher is not None:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def codex_hook_trust(s: Scenario) -> str:
    """[hooks.state."<hooks.json>:session_start:<group>:<handler>"] for our hook: the person
    approved it in /hooks after `memorycloud connect` (headless exec never asks)."""
    hooks_json = s.repo / ".codex/hooks.json"
    data = json.loads(hooks_json.read_text())
    lines: list[str] = []
    for group_index, group in enumerate(data.get("hooks", {}).get("SessionStart", [])):
        for handler_index, handler in enumerate(group.get("hooks", [])):
            if LAUNCHER not in handler.get("command", ""):
                continue
            key = f"{hooks_json}:session_start:{group_index}:{handler_index}"
            lines += [
                f"[hooks.state.{json.dumps(key)}]",
                f'trusted_hash = "{codex_hook_hash("session_start", group.get("matcher"), handler)}"',
                "",
            ]
    return "\n".join(lines)


# -- Gemini CLI ----------------------------------------------------------------------------


def gemini_user_settings() -> dict[str, Any]:
    return {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }


# -- Claude Code ---------------------------------------------------------------------------


def claude_state(s: Scenario) -> dict[str, Any]:
    """~/.claude.json after onboarding, with the project's trust dialog accepted and the
    repository's .mcp.json server approved (what the "use this MCP server?" prompt stores)."""
    return {
        "hasCompletedOnboarding": True,
        "numStartups": 1,
        "projects": {
            str(s.repo): {
                "hasTrustDialogAccepted": True,
                "enabledMcpjsonServers": ["memorycloud"],
                "disabledMcpjsonServers": [],
                "allowedTools": [],
            }
        },
    }


# -- the steps the scenario calls ----------------------------------------------------------


def before_connect(s: Scenario) -> None:
    if s.cli == "codex":
        codex_home(s).mkdir(parents=True, exist_ok=True)
        (codex_home(s) / "config.toml").write_text(codex_config(s))
    elif s.cli == "gemini":
        settings = s.home / ".gemini"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "settings.json").write_text(json.dumps(gemini_user_settings(), indent=2))
        # The answer to "Do you trust this folder?" (headless -p refuses untrusted folders).
        (settings / "trustedFolders.json").write_text(json.dumps({str(s.repo): "TRUST_FOLDER"}, indent=2))
    elif s.cli == "claude":
        (s.home / ".claude.json").write_text(json.dumps(claude_state(s), indent=2))


def after_connect(s: Scenario) -> None:
    if s.cli == "codex":
        config = codex_home(s) / "config.toml"
        config.write_text(config.read_text() + "\n" + codex_hook_trust(s))


def extra_files(s: Scenario) -> dict[str, str]:
    if s.cli == "codex":
        return {"$CODEX_HOME/config.toml": (codex_home(s) / "config.toml").read_text()}
    return {}


def cli_env(s: Scenario) -> dict[str, str]:
    env = {**s.base_env(), **QUIET_ENV, **EXTRA}
    if s.cli == "codex":
        env["MC_FAKE_OPENAI_KEY"] = "dummy-key"
    elif s.cli == "gemini":
        env.update(GOOGLE_GEMINI_BASE_URL=s.model.url, GEMINI_API_KEY="dummy-key")
    else:
        env.update(ANTHROPIC_BASE_URL=s.model.url, ANTHROPIC_API_KEY="dummy-key")
    return env


def argv(s: Scenario, prompt: str, *extra: str) -> list[str]:
    if s.cli == "codex":
        return ["codex", "exec", *extra, prompt]
    if s.cli == "gemini":
        # yolo: headless -p denies every tool that would ask (our MCP tool included).
        return ["gemini", "--approval-mode", "yolo", *extra, "-p", prompt]
    return [
        "claude",
        "-p",
        prompt,
        "--output-format",
        "json",
        "--debug-file",
        str(s.work / f"claude-debug-{len(s.report['sessions'])}.txt"),
        "--allowedTools",
        "mcp__memorycloud__search",
        *extra,
    ]


def more_sessions(s: Scenario, env: dict[str, str]) -> None:
    """Claude Code: compact the first session (/compact on --resume), which runs PreCompact."""
    if s.cli != "claude":
        return
    try:
        session_id = json.loads(s.report["sessions"]["up"]["stdout"])["session_id"]
    except (ValueError, KeyError) as exc:
        s.report["compact_error"] = f"no session id from the first run: {exc}"
        return
    # /compact refuses a session of one exchange ("Not enough messages to compact").
    s.session("second", argv(s, "MC-SESSION-second say more", "--resume", session_id), env)
    s.session(
        "compact",
        [
            "claude",
            "-p",
            "/compact",
            "--resume",
            session_id,
            "--output-format",
            "json",
            "--debug-file",
            str(s.work / "claude-debug-compact.txt"),
        ],
        env,
    )
    s.report["checkpoint_search"] = s.search("compacted")


def collect_logs(s: Scenario) -> dict[str, str]:
    """The CLIs' own logs (MCP server stderr, hook failures) for the assertions and for people."""
    logs: dict[str, str] = {}
    for path in sorted(s.work.glob("claude-debug-*.txt")):
        logs[path.name] = path.read_text(errors="replace")[-20000:]
    for path in sorted((codex_home(s) / "log").glob("*")) if s.cli == "codex" else []:
        logs[path.name] = path.read_text(errors="replace")[-20000:]
    return logs
