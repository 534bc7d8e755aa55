"""Where each agent runtime's startup item lives: the surface the runtime reads at session
start, the file our install plan writes it into, and how (the reference's install_mode).

One table for the runtime profile's recommendation and the install plan's startup_item, so
the two never disagree; tests check it against the files ``startup_items.runtimes`` plans.
"""

from __future__ import annotations

from dataclasses import dataclass

from startup_items.runtimes import RUNTIMES, RuntimeSpec, resolve_runtime
from state.identities import normalize_runtime


@dataclass(frozen=True)
class StartupSurface:
    surface: str  # what the runtime reads
    install_path: str  # the planned file holding the startup item
    install_mode: str  # how it is written
    why: str


SURFACES: dict[str, StartupSurface] = {
    "claude_code": StartupSurface(
        "Claude Code SessionStart hook",
        ".claude/settings.json",
        "merge_hook_entries",
        "Claude Code runs SessionStart hooks at start, resume, clear and compaction and puts"
        " their output into the context",
    ),
    "codex": StartupSurface(
        "AGENTS.md",
        "AGENTS.md",
        "append_managed_block",
        "Codex reads AGENTS.md in every session; a SessionStart hook in .codex/hooks.json"
        " injects the context once the project is trusted",
    ),
    "gemini_cli": StartupSurface(
        "Gemini CLI SessionStart hook",
        ".gemini/settings.json",
        "merge_hook_entries",
        "Gemini CLI runs SessionStart hooks and adds their JSON output to the context",
    ),
    "cursor": StartupSurface(
        ".cursor/rules/memorycloud.mdc",
        ".cursor/rules/memorycloud.mdc",
        "create_always_apply_rule",
        "Cursor applies an alwaysApply rule to every chat; the daemon keeps it fresh",
    ),
    "openclaw": StartupSurface(
        "AGENTS.md and MEMORY.md",
        "AGENTS.md",
        "append_managed_block",
        "OpenClaw loads AGENTS.md and MEMORY.md at start; the context block in MEMORY.md is"
        " kept fresh by the daemon",
    ),
    "generic": StartupSurface(
        "AGENTS.md",
        "AGENTS.md",
        "append_managed_block",
        "most coding agents read AGENTS.md; it tells them to run the launcher first",
    ),
}
assert set(SURFACES) == set(RUNTIMES), "every runtime needs a startup surface"


def runtime_for(name: str | None) -> tuple[RuntimeSpec, StartupSurface, bool]:
    """The runtime spec and surface for a runtime name (normalized: 'Claude Code',
    'claude' -> claude_code); an unknown runtime gets the generic ones. The bool says
    whether the runtime was known."""
    try:
        spec = resolve_runtime(normalize_runtime(name or "generic"))
    except KeyError:
        spec = RUNTIMES["generic"]
        return spec, SURFACES[spec.name], False
    return spec, SURFACES[spec.name], True
