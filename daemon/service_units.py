"""The login service's files: a systemd user unit (Linux) and a launchd agent (macOS).

Pure rendering and locations, no side effects: ``daemon/cli/service.py`` writes, enables and
removes them. Both run ``memorycloud daemon run`` in the foreground, restart it when it fails,
start it at login, and log to the daemon's log file (the one ``daemon start`` writes to and
``daemon status`` names), so there is one log whoever started the daemon.

Before starting, both ask ``memorycloud service should-start``: when a daemon of this
installation already answers (started by hand), the service does not start a second one,
which would only fail on the pidfile and be restarted again and again. systemd records
that as a skipped start condition; launchd sees a successful exit and does not restart.
"""

from __future__ import annotations

import os
import plistlib
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

UNIT_NAME = "memorycloud.service"
LAUNCHD_LABEL = "ai.memorycloud.companion"
SYSTEMD = "systemd"
LAUNCHD = "launchd"
MARKER = "Written by `memorycloud service install`"
_PLAIN = re.compile(r"[A-Za-z0-9_@+=:,./-]+")


@dataclass(frozen=True)
class ServiceSpec:
    """What the service runs: the ``memorycloud`` command, its environment and its log."""

    command: tuple[str, ...]
    log_file: Path
    environment: dict[str, str] = field(default_factory=dict)


def manager_for(platform: str) -> str | None:
    """The service manager of a ``sys.platform`` value, or None where there is none yet."""
    if platform.startswith("linux"):
        return SYSTEMD
    if platform == "darwin":
        return LAUNCHD
    return None


def unit_path(platform: str, environ: Mapping[str, str]) -> Path | None:
    """Where the unit or agent lives for this user (XDG_CONFIG_HOME honoured, as systemd does)."""
    manager = manager_for(platform)
    home = Path(environ.get("HOME") or Path.home())
    if manager == SYSTEMD:
        config = environ.get("XDG_CONFIG_HOME", "")
        # The XDG spec ignores a relative XDG_CONFIG_HOME; so does systemd.
        base = Path(config) if os.path.isabs(config) else home / ".config"
        return base / "systemd" / "user" / UNIT_NAME
    if manager == LAUNCHD:
        return home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    return None


def unit_root(platform: str, environ: Mapping[str, str]) -> Path | None:
    """The directory below which install may create directories (and uninstall remove them).

    XDG_CONFIG_HOME for systemd/user/, the home directory for Library/LaunchAgents/.
    """
    path = unit_path(platform, environ)
    return None if path is None else path.parents[2]


def default_command(executable: str | None = None) -> tuple[str, ...]:
    """The installed ``memorycloud`` beside this interpreter, or ``python -P -m daemon``.

    The interpreter path is kept as it is, not resolved: a venv's ``python`` is a symlink,
    and resolving it would leave the venv (pipx, uv tool) and lose its packages.
    """
    python = os.path.abspath(executable or sys.executable)
    script = Path(python).parent / ("memorycloud.exe" if os.name == "nt" else "memorycloud")
    if script.is_file() and os.access(script, os.X_OK):
        return (str(script),)
    # -P: the working directory is not put on sys.path, so no local "daemon" dir can shadow us.
    return (python, "-P", "-m", "daemon")


def _checked(value: str) -> str:
    if "\n" in value or "\r" in value or "\0" in value:
        raise ValueError(f"a service file cannot hold a line break: {value!r}")
    return value


def _sd_word(value: str) -> str:
    """One ExecStart word: % is a specifier and $ a variable there, so both are doubled."""
    value = _checked(value).replace("%", "%%")
    if _PLAIN.fullmatch(value):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$")
    return f'"{escaped}"'


def _sd_env(name: str, value: str) -> str:
    escaped = _checked(value).replace("%", "%%").replace("\\", "\\\\").replace('"', '\\"')
    return f'Environment="{name}={escaped}"'


def render_systemd_unit(spec: ServiceSpec) -> str:
    """The user unit: started at login, restarted on failure, giving up after 5 in a minute."""
    command = " ".join(_sd_word(word) for word in spec.command)
    log = _checked(str(spec.log_file)).replace("%", "%%")
    environment = [_sd_env(k, v) for k, v in sorted({"PYTHONUNBUFFERED": "1", **spec.environment}.items())]
    return "\n".join(
        [
            f"# {MARKER}; `memorycloud service uninstall` removes it.",
            "[Unit]",
            "Description=MemoryCloud Companion daemon (local memory for AI agents)",
            # Restart on failure, but a daemon that cannot start (port taken, broken config)
            # stops being retried after 5 failures in a minute instead of looping for ever.
            "StartLimitIntervalSec=60",
            "StartLimitBurst=5",
            "",
            "[Service]",
            "Type=exec",
            *environment,
            "# A daemon of this installation started by hand is left alone: the start is skipped.",
            f"ExecCondition={command} service should-start",
            f"ExecStart={command} daemon run",
            "Restart=on-failure",
            "RestartSec=5",
            # SIGTERM is the daemon's clean stop (exit 0): no restart after `daemon stop` either.
            "TimeoutStopSec=20",
            f"StandardOutput=append:{log}",
            f"StandardError=append:{log}",
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ]
    )


def render_launchd_plist(spec: ServiceSpec) -> bytes:
    """The launch agent: loaded at login (RunAtLoad), restarted after a non-zero exit."""
    for word in (*spec.command, str(spec.log_file), *spec.environment.values()):
        _checked(word)
    # launchd has no start condition: a successful exit when another daemon serves is one.
    script = '"$@" service should-start || exit 0; exec "$@" daemon run'
    return plistlib.dumps(
        {
            "Label": LAUNCHD_LABEL,
            "ProgramArguments": ["/bin/sh", "-c", script, "memorycloud", *spec.command],
            "EnvironmentVariables": {"PYTHONUNBUFFERED": "1", **spec.environment},
            "RunAtLoad": True,
            "KeepAlive": {"SuccessfulExit": False},
            "ThrottleInterval": 10,
            "StandardOutPath": str(spec.log_file),
            "StandardErrorPath": str(spec.log_file),
        },
        sort_keys=True,
    )


def render(platform: str, spec: ServiceSpec) -> bytes:
    """The file for ``platform``'s manager."""
    manager = manager_for(platform)
    if manager == SYSTEMD:
        return render_systemd_unit(spec).encode("utf-8")
    if manager == LAUNCHD:
        return render_launchd_plist(spec)
    raise ValueError(f"no service manager for {platform}")


_ENV_LINE = re.compile(r'^Environment="MEMORYCLOUD_HOME=((?:[^"\\]|\\.)*)"$', re.M)


def unit_home(platform: str, content: bytes) -> str | None:
    """The MEMORYCLOUD_HOME an installed unit or agent carries (None: the default paths)."""
    if manager_for(platform) == LAUNCHD:
        try:
            return plistlib.loads(content).get("EnvironmentVariables", {}).get("MEMORYCLOUD_HOME")
        except (plistlib.InvalidFileException, ValueError, AttributeError):
            return None
    match = _ENV_LINE.search(content.decode("utf-8", "replace"))
    if match is None:
        return None
    return re.sub(r"\\(.)", r"\1", match.group(1)).replace("%%", "%")
