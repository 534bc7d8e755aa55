"""How each agent runtime turns a hook's ``command`` string into a process, re-implemented
faithfully (small enough to read against the runtime's source), so tests run our exact hook
commands the way the real CLIs do.

* Gemini CLI 0.61 (packages/core/src/hooks/hookRunner.ts, ``expandCommand`` and
  ``executeCommandHook``): the bare ``$GEMINI_PROJECT_DIR``, ``$GEMINI_CWD``,
  ``$GEMINI_PLANS_DIR``, ``$GEMINI_SESSION_ID`` and ``$CLAUDE_PROJECT_DIR`` are replaced in the
  text by ``escapeShellArg(cwd, "bash")``, i.e. shell-quote's ``quote([cwd])``; then ``bash -c
  <command>`` runs in ``cwd`` with GEMINI_PROJECT_DIR, GEMINI_CWD and CLAUDE_PROJECT_DIR set.
* Claude Code: ``/bin/sh -c <command>`` with CLAUDE_PROJECT_DIR in the environment; no
  textual substitution (it documents quoting ``"$CLAUDE_PROJECT_DIR"`` yourself).
* Codex (codex-rs/hooks/src/engine/command_runner.rs, ``default_shell_command``):
  ``$SHELL -lc <command>`` in the session's working directory; no substitution.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path


def shell_quote(value: str) -> str:
    """shell-quote's ``quote([value])`` (index.js of shell-quote 1.8), as Gemini calls it."""
    if value == "":
        return "''"
    if re.search(r'["\s\\]', value) and "'" not in value:
        return "'" + value.replace("'", "\\'") + "'"
    if re.search(r"[\"'\s]", value):
        return '"' + re.sub(r'(["\\$`!])', r"\\\1", value) + '"'
    return re.sub(r"([A-Za-z]:)?([#!\"$&'()*,:;<=>?@\[\\\]^`{|}])", r"\1\\\2", value)


GEMINI_PLACEHOLDERS = (
    "GEMINI_PROJECT_DIR",
    "GEMINI_CWD",
    "GEMINI_PLANS_DIR",
    "GEMINI_SESSION_ID",
    "CLAUDE_PROJECT_DIR",
)


def gemini_expand(command: str, cwd: str) -> str:
    """Gemini's ``expandCommand`` for a POSIX shell (only the bare ``$NAME`` form matches)."""
    quoted = shell_quote(cwd)
    for name in GEMINI_PLACEHOLDERS:
        command = re.sub(r"\$" + name, lambda _m: quoted, command)
    return command


def run_hook(
    runtime: str,
    command: str,
    project: Path,
    *,
    cwd: Path | None = None,
    hook_input: dict | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Run a hook command as ``runtime`` would, in ``project`` (the session's directory)."""
    base = dict(env if env is not None else os.environ)
    where = str(cwd or project)
    if runtime == "gemini_cli":
        argv = ["bash", "-c", gemini_expand(command, str(project))]
        base.update(GEMINI_PROJECT_DIR=str(project), GEMINI_CWD=str(project), CLAUDE_PROJECT_DIR=str(project))
        where = str(project)
    elif runtime == "claude_code":
        argv = ["/bin/sh", "-c", command]
        base["CLAUDE_PROJECT_DIR"] = str(project)
    elif runtime == "codex":
        argv = [base.get("SHELL") or "/bin/sh", "-lc", command]
    else:
        raise ValueError(f"{runtime} has no hooks")
    payload = hook_input or {
        "session_id": "s1",
        "hook_event_name": "SessionStart",
        "source": "startup",
        "cwd": where,
    }
    return subprocess.run(
        argv, input=json.dumps(payload), capture_output=True, text=True, cwd=where, env=base, timeout=30
    )
