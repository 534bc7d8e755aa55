"""What a person still has to do, per runtime, before sessions really start with their memory.

Writing the files is not the end: each runtime has its own gate (Codex runs project hooks only
in a trusted project and after the person reviewed them in ``/hooks``; Gemini CLI runs
workspace settings only in a trusted folder; Claude Code asks to trust the workspace on the
first interactive start). ``memorycloud connect`` prints these steps, and ``setup list`` /
``doctor`` repeat them while the hook has not run yet. One table, so the CLI, the API and the
README say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NextSteps:
    todo: str  # what the person must still do (one or two sentences)
    memory_arrives: str  # how a session gets its memory once that is done


NEXT_STEPS: dict[str, NextSteps] = {
    "claude_code": NextSteps(
        todo="start `claude` once in this repository and accept the trust prompt for the"
        " workspace; hooks in .claude/settings.json run only in a trusted workspace",
        memory_arrives="the SessionStart hook injects the context pack (PreCompact saves a"
        " checkpoint before compaction)",
    ),
    "codex": NextSteps(
        todo="start `codex` in this repository, trust the project when asked, then open `/hooks`"
        " and approve the MemoryCloud SessionStart hook; Codex runs project hooks only after"
        " both, and asks again whenever the hook entry changes (the hook runs at the first"
        " turn)",
        memory_arrives="the SessionStart hook injects the context pack; inside Codex's sandbox the"
        " agent uses the memorycloud MCP server (registered in Codex's config.toml)",
    ),
    "gemini_cli": NextSteps(
        todo="start `gemini` in this repository and trust the folder when asked (or `/permissions`);"
        " Gemini CLI ignores .gemini/settings.json hooks in an untrusted folder",
        memory_arrives="the SessionStart hook injects the context pack",
    ),
    "cursor": NextSteps(
        todo="open the repository in Cursor and enable the `memorycloud` server under Settings >"
        " MCP (Cursor asks before it starts a project's MCP server)",
        memory_arrives="the always-applied rule tells the agent to call the memorycloud MCP"
        " server's tools; Cursor has no session hook",
    ),
    "openclaw": NextSteps(
        todo="nothing: OpenClaw reads MEMORY.md, which the daemon keeps fresh",
        memory_arrives="the MemoryCloud block in MEMORY.md, rewritten when the memory changes",
    ),
    "generic": NextSteps(
        todo="nothing: the AGENTS.md block tells the agent to run the launcher",
        memory_arrives="the agent runs .amp/launcher.py as AGENTS.md says",
    ),
}


def next_steps(runtime: str) -> NextSteps:
    return NEXT_STEPS.get(runtime, NEXT_STEPS["generic"])
