"""``memorycloud service install|uninstall|status``: start the daemon at login, once per machine.

Linux: a systemd user unit (``$XDG_CONFIG_HOME/systemd/user/memorycloud.service``); macOS: a
launchd agent (``~/Library/LaunchAgents/ai.memorycloud.companion.plist``); elsewhere: not
supported yet, said plainly. The files themselves are rendered by ``daemon/service_units.py``.

Where ``systemctl --user`` / ``launchctl`` cannot reach a service manager (a container, an SSH
session without a user bus), install still writes the unit, enables what can be enabled
offline, says exactly what to run, and exits 0. Uninstall removes what install wrote and the
directories that are left empty by that, nothing else.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from daemon import service_units as units
from daemon.cli.context import add_command, emit
from daemon.process import find_running
from state.atomic import write_atomic
from state.errors import MemoryCloudError
from state.paths import Paths, resolve_paths

# Variables that change where the daemon keeps its data: the unit carries them.
CARRIED = ("MEMORYCLOUD_HOME", "MEMORYCLOUD_SECRETS")


class NotSupported(MemoryCloudError):
    code = "service_not_supported"


def _not_supported(platform: str) -> NotSupported:
    return NotSupported(
        f"a login service is not supported yet on {platform}: start the daemon with"
        " `memorycloud daemon start` (for example from a Task Scheduler task at log on)"
    )


def _manager(platform: str) -> str:
    manager = units.manager_for(platform)
    if manager is None:
        raise _not_supported(platform)
    return manager


def describe_manager(platform: str) -> str:
    if units.manager_for(platform) == units.SYSTEMD:
        return f"systemd user unit {units.UNIT_NAME}"
    return f"launchd agent {units.LAUNCHD_LABEL}"


def _run(args: list[str], environ: Mapping[str, str]) -> tuple[int, str]:
    """Run a service-manager command: (exit code, its output or error, first line)."""
    tool = shutil.which(args[0], path=environ.get("PATH", os.defpath))
    if tool is None:
        return 127, f"{args[0]} not found"
    try:
        done = subprocess.run(
            [tool, *args[1:]],
            capture_output=True,
            text=True,
            timeout=30,
            env=dict(environ),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return 124, f"{' '.join(args)} did not answer within 30 s"
    if done.returncode == 0:
        return 0, done.stdout.strip()
    # systemctl reports what it did offline ("Removed ...") before why it failed.
    lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit code {done.returncode}"]
    failed = [line for line in lines if line.startswith(("Failed", "Unit ", "Could not"))]
    return done.returncode, (failed or lines)[-1].strip()


def _home_environment(paths: Paths, environ: Mapping[str, str]) -> dict[str, str]:
    """MEMORYCLOUD_HOME (and the secrets backend) the unit must carry to serve ``paths``."""
    carried = {name: environ[name] for name in CARRIED[1:] if environ.get(name)}
    if paths == resolve_paths({}):
        return carried
    root = paths.config_dir.parent
    if paths != resolve_paths({"MEMORYCLOUD_HOME": str(root)}):
        raise MemoryCloudError(f"cannot express these directories as MEMORYCLOUD_HOME: {paths}")
    return {"MEMORYCLOUD_HOME": str(root), **carried}


def spec_for(
    paths: Paths, environ: Mapping[str, str], command: tuple[str, ...] | None = None
) -> units.ServiceSpec:
    return units.ServiceSpec(
        command or units.default_command(), paths.log_file, _home_environment(paths, environ)
    )


def _systemctl(*args: str) -> list[str]:
    return ["systemctl", "--user", *args]


def _uid() -> int:
    return os.getuid() if hasattr(os, "getuid") else 0


def _write(path: Path, content: bytes) -> bool:
    """Write atomically; True if the content changed."""
    try:
        if path.read_bytes() == content:
            return False
    except FileNotFoundError:
        pass
    write_atomic(path, content)
    return True


def install(
    paths: Paths,
    *,
    platform: str = sys.platform,
    environ: Mapping[str, str] | None = None,
    command: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Write the unit and, where the service manager answers, enable and start it."""
    environ = os.environ if environ is None else environ
    manager = _manager(platform)
    path = units.unit_path(platform, environ)
    assert path is not None
    spec = spec_for(paths, environ, command)
    # The manager opens the log before the daemon runs; its directory must exist.
    paths.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    existed = path.exists()
    changed = _write(path, units.render(platform, spec))
    by_hand = find_running(paths)
    result: dict[str, Any] = {
        "manager": manager,
        "unit": str(path),
        "changed": changed,
        "command": list(spec.command),
        "environment": spec.environment,
        "log": str(paths.log_file),
        "enabled": False,
        "started": False,
        "manual": [],
        "reason": None,
        "running_by_hand": by_hand.pid if by_hand else None,
    }
    if manager == units.SYSTEMD:
        code, text = _run(_systemctl("daemon-reload"), environ)
        if code == 0:
            code, text = _run(_systemctl("enable", "--now", units.UNIT_NAME), environ)
            result["enabled"] = result["started"] = code == 0
            if code == 0 and existed and changed:  # a running service picks up the new unit
                _run(_systemctl("try-restart", units.UNIT_NAME), environ)
        if code != 0:
            result["reason"] = text
            # Enabling is only a symlink: systemctl does it without a running manager.
            result["enabled"] = _run(_systemctl("enable", units.UNIT_NAME), environ)[0] == 0
            result["manual"] = [
                "systemctl --user daemon-reload",
                f"systemctl --user enable --now {units.UNIT_NAME}",
            ]
    else:
        domain = f"gui/{_uid()}"
        if existed:  # bootstrap refuses a loaded label: unload the old definition first
            _run(["launchctl", "bootout", f"{domain}/{units.LAUNCHD_LABEL}"], environ)
        _run(["launchctl", "enable", f"{domain}/{units.LAUNCHD_LABEL}"], environ)
        code, text = _run(["launchctl", "bootstrap", domain, str(path)], environ)
        result["enabled"] = result["started"] = code == 0
        if code != 0:
            result["reason"] = text
            result["manual"] = [f"launchctl bootstrap {domain} {path}"]
    return result


def _remove_empty_parents(path: Path, root: Path) -> None:
    """Remove the directories above ``path`` up to ``root`` (excluded) while they are empty."""
    for directory in path.parents:
        if directory == root or root not in directory.parents:
            return
        try:
            directory.rmdir()
        except OSError:  # not empty (or not ours to remove): stop here
            return


def uninstall(
    paths: Paths, *, platform: str = sys.platform, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Stop and disable the service, then remove the unit and what enabling it created."""
    environ = os.environ if environ is None else environ
    manager = _manager(platform)
    path = units.unit_path(platform, environ)
    root = units.unit_root(platform, environ)
    assert path is not None and root is not None
    result: dict[str, Any] = {
        "manager": manager,
        "unit": str(path),
        "removed": path.exists(),
        "stopped": False,
        "reason": None,
    }
    if not path.exists():
        return result
    if manager == units.SYSTEMD:
        code, text = _run(_systemctl("disable", "--now", units.UNIT_NAME), environ)
        result["stopped"] = code == 0
        if code != 0:
            result["reason"] = text
            _run(_systemctl("disable", units.UNIT_NAME), environ)
        # Whatever systemctl could do, the enablement symlink must not outlive the unit.
        link = path.parent / "default.target.wants" / units.UNIT_NAME
        if link.is_symlink():
            link.unlink()
            _remove_empty_parents(link, path.parent)
        path.unlink()
        if code == 0:
            _run(_systemctl("daemon-reload"), environ)
            _run(_systemctl("reset-failed", units.UNIT_NAME), environ)
    else:
        code, text = _run(["launchctl", "bootout", f"gui/{_uid()}/{units.LAUNCHD_LABEL}"], environ)
        result["stopped"] = code == 0
        result["reason"] = None if code == 0 else text
        path.unlink()
    _remove_empty_parents(path, root)
    return result


def status(
    paths: Paths, *, platform: str = sys.platform, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Installed, enabled, active, the unit path and the MEMORYCLOUD_HOME it serves."""
    environ = os.environ if environ is None else environ
    manager = units.manager_for(platform)
    if manager is None:
        return {"supported": False, "platform": platform, "message": _not_supported(platform).message}
    path = units.unit_path(platform, environ)
    assert path is not None
    result: dict[str, Any] = {
        "supported": True,
        "platform": platform,
        "manager": manager,
        "description": describe_manager(platform),
        "unit": str(path),
        "installed": path.exists(),
        "enabled": None,
        "active": None,
        "main_pid": None,
        "home": None,
        "this_installation": None,
        "reason": None,
    }
    if not path.exists():
        return result
    home = units.unit_home(platform, path.read_bytes())
    result["home"] = home
    result["this_installation"] = home == _home_environment(paths, environ).get("MEMORYCLOUD_HOME")
    if manager == units.SYSTEMD:
        code, text = _run(_systemctl("is-enabled", units.UNIT_NAME), environ)
        word = text.split()[0] if text else ""
        # is-enabled works without a running manager (it reads the unit directories).
        result["enabled"] = (
            True
            if word in ("enabled", "enabled-runtime")
            else False
            if word in ("disabled", "masked", "linked", "static", "indirect")
            else None
        )
        code, text = _run(_systemctl("show", units.UNIT_NAME, "-p", "ActiveState", "-p", "MainPID"), environ)
        if code == 0:
            props = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
            result["active"] = props.get("ActiveState") == "active"
            result["main_pid"] = int(props.get("MainPID") or 0) or None
        else:
            result["reason"] = text
    else:
        domain = f"gui/{_uid()}"
        code, text = _run(["launchctl", "print", f"{domain}/{units.LAUNCHD_LABEL}"], environ)
        if code == 0:
            fields = dict(line.strip().split(" = ", 1) for line in text.splitlines() if " = " in line)
            result["active"] = fields.get("state") == "running"
            result["main_pid"] = int(fields["pid"]) if fields.get("pid", "").isdigit() else None
            code, text = _run(["launchctl", "print-disabled", domain], environ)
            disabled = (
                f'"{units.LAUNCHD_LABEL}" => disabled' in text or f'"{units.LAUNCHD_LABEL}" => true' in text
            )
            result["enabled"] = not disabled if code == 0 else None
        else:
            result["reason"] = text
    return result


def _state(state: dict[str, Any]) -> str:
    def word(value: bool | None, yes: str, no: str) -> str:
        return "unknown" if value is None else (yes if value else no)

    text = word(state["enabled"], "enabled", "not enabled")
    if state["reason"]:
        return f"{text}, active unknown: the service manager did not answer ({state['reason']})"
    return f"{text}, {word(state['active'], 'active', 'inactive')}"


def describe_status(state: dict[str, Any], running_pid: int | None = None) -> str:
    """One line for `service status` and `daemon status`."""
    if not state["supported"]:
        return state["message"]
    if not state["installed"]:
        return f"not started at login: `memorycloud service install` ({state['unit']} not installed)"
    other = (
        ""
        if state["this_installation"]
        else (
            f"; it serves MEMORYCLOUD_HOME={state['home'] or '(the default directories)'}, not this installation"
        )
    )
    if running_pid is not None and state["main_pid"] == running_pid:
        return f"managed by {state['description']} ({_state(state)}; {state['unit']}){other}"
    line = f"{state['description']} installed ({_state(state)}; {state['unit']}){other}"
    if running_pid is not None:
        line += f"; this daemon (pid {running_pid}) was started by hand"
    return line


def service_hint(
    paths: Paths, *, platform: str = sys.platform, environ: Mapping[str, str] | None = None
) -> str | None:
    """A one-line suggestion when no login service serves this installation, else None."""
    state = status(paths, platform=platform, environ=environ)
    if not state["supported"]:
        return None
    if not state["installed"]:
        return "the daemon is not started at login: `memorycloud service install`"
    if not state["this_installation"]:
        return (
            "the login service serves another MEMORYCLOUD_HOME: `memorycloud service install`"
            " here replaces it"
        )
    return None


# -- commands ------------------------------------------------------------------------------


def cmd_install(args: argparse.Namespace, paths: Paths) -> int:
    result = install(paths)
    lines = [
        f"{'wrote' if result['changed'] else 'unchanged'} {result['unit']}",
        f"runs: {' '.join(result['command'])} daemon run"
        + "".join(f" ({k}={v})" for k, v in result["environment"].items()),
        f"log: {result['log']}",
    ]
    if result["started"]:
        lines.append("enabled and started: it starts at every login and restarts on failure")
    else:
        lines.append(
            f"{'enabled for the next login; ' if result['enabled'] else ''}the service"
            f" manager did not answer here ({result['reason']})."
            " In your login session, run:\n  " + " && ".join(result["manual"])
        )
    if result["running_by_hand"]:
        lines.append(
            f"a daemon started by hand is running (pid {result['running_by_hand']}): the service"
            " leaves it alone; `memorycloud daemon stop` and then start the service to hand over"
        )
    emit(args, result, "\n".join(lines))
    return 0


def cmd_uninstall(args: argparse.Namespace, paths: Paths) -> int:
    result = uninstall(paths)
    if not result["removed"]:
        text = f"not installed ({result['unit']} does not exist)"
    else:
        text = f"removed {result['unit']}" + (
            "; the service was stopped and disabled"
            if result["stopped"]
            else f"; the service manager did not answer ({result['reason']}), so nothing was running under it"
        )
    emit(args, result, text)
    return 0


def cmd_status(args: argparse.Namespace, paths: Paths) -> int:
    state = status(paths)
    running = find_running(paths)
    emit(args, state, describe_status(state, running.pid if running else None))
    return 0


def cmd_should_start(args: argparse.Namespace, paths: Paths) -> int:
    """The unit's start condition: 0 when no daemon of this installation answers yet."""
    running = find_running(paths)
    if running is None:
        return 0
    print(
        f"memorycloud service: a daemon of this installation already runs (pid {running.pid},"
        f" {running.url}); the service does not start a second one",
        file=sys.stderr,
    )
    return 1


def add_commands(sub: Any) -> None:
    """Register ``service install|uninstall|status|should-start``."""
    service = sub.add_parser("service", help="start the daemon at login (systemd user unit, launchd agent)")
    ssub = service.add_subparsers(title="service commands", metavar="ACTION", required=True)
    add_command(ssub, "install", cmd_install, "write the login service, enable and start it")
    add_command(ssub, "uninstall", cmd_uninstall, "stop and disable the login service and remove its file")
    add_command(ssub, "status", cmd_status, "is the login service installed, enabled, active")
    p = ssub.add_parser(
        "should-start",
        help="exit 0 unless a daemon of this installation already runs (the service's start condition)",
    )
    p.set_defaults(func=cmd_should_start)
