"""`memorycloud service install|status|uninstall` as a user runs them, in a temp HOME.

The environment points systemctl at a user bus that does not exist, so no test can reach a
real user manager (on a developer's machine it would otherwise enable a real unit): this is
the "no user bus" case, the one containers and SSH sessions have.
"""

from __future__ import annotations

import json
import os
import plistlib
import subprocess
from pathlib import Path

import pytest

from daemon import service_units as units
from daemon.cli.service import NotSupported, install, service_hint, status, uninstall
from state.paths import resolve_paths
from tests.e2e.conftest import cli

MANUAL = f"systemctl --user daemon-reload && systemctl --user enable --now {units.UNIT_NAME}"


@pytest.fixture
def env(tmp_path: Path, isolated_home: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    runtime = tmp_path / "xrd"
    runtime.mkdir(mode=0o700)
    resolve_paths().ensure()  # the product has run here before
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_RUNTIME_DIR": str(runtime),
        "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus",
    }


def _tree(*roots: Path) -> dict[str, str]:
    """Every file, link and directory below ``roots``, with a file's content."""
    found: dict[str, str] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            kind = (
                "link" if path.is_symlink() else "dir" if path.is_dir() else path.read_text(errors="replace")
            )
            found[str(path)] = kind
    return found


def test_install_status_uninstall_leave_nothing_behind(env, isolated_home):
    home, unit = Path(env["HOME"]), Path(env["XDG_CONFIG_HOME"]) / "systemd/user" / units.UNIT_NAME
    before = _tree(home, isolated_home)
    assert json.loads(cli("service", "status", "--json", env=env).stdout)["installed"] is False
    assert service_hint(resolve_paths(), platform="linux", environ=env) == (
        "the daemon is not started at login: `memorycloud service install`"
    )

    done = cli("service", "install", env=env)
    assert f"wrote {unit}" in done.stdout and MANUAL in done.stdout
    assert "did not answer here (Failed to connect to bus" in done.stdout
    content = unit.read_text()
    assert f'Environment="MEMORYCLOUD_HOME={isolated_home}"' in content
    state = json.loads(cli("service", "status", "--json", env=env).stdout)
    assert state["installed"] is True and state["unit"] == str(unit)
    assert state["home"] == str(isolated_home) and state["this_installation"] is True
    # Enabling is a symlink systemctl makes even without a manager where it runs offline.
    link = unit.parent / "default.target.wants" / units.UNIT_NAME
    assert state["enabled"] is link.is_symlink() and state["active"] is None
    assert service_hint(resolve_paths(), platform="linux", environ=env) is None
    daemon_status = cli("daemon", "status", env=env, check=False)
    assert daemon_status.returncode == 3
    assert f"service: systemd user unit {units.UNIT_NAME} installed" in daemon_status.stdout
    assert f"log: {isolated_home / 'state' / 'daemon.log'}" in daemon_status.stdout

    again = cli("service", "install", "--json", env=env)
    assert json.loads(again.stdout)["changed"] is False

    removed = cli("service", "uninstall", env=env)
    assert f"removed {unit}" in removed.stdout
    assert _tree(home, isolated_home) == before
    assert json.loads(cli("service", "status", "--json", env=env).stdout)["installed"] is False
    assert "not installed" in cli("service", "uninstall", env=env).stdout


def test_uninstall_keeps_what_was_there_before(env):
    user_dir = Path(env["XDG_CONFIG_HOME"]) / "systemd" / "user"
    user_dir.mkdir(parents=True)
    (user_dir / "other.service").write_text("[Service]\nExecStart=/bin/true\n")
    before = _tree(Path(env["HOME"]))
    cli("service", "install", env=env)
    cli("service", "uninstall", env=env)
    assert _tree(Path(env["HOME"])) == before


def test_should_start_leaves_a_daemon_started_by_hand_alone(daemon, env):
    refused = cli("service", "should-start", env=env, check=False)
    assert refused.returncode == 1
    assert f"already runs (pid {daemon.process.pid}" in refused.stderr
    cli("service", "install", env=env)
    try:
        shown = cli("daemon", "status", env=env).stdout
        assert f"this daemon (pid {daemon.process.pid}) was started by hand" in shown
        # launchd's wrapper, run for real: another daemon serves, so it exits 0 (no restart).
        spec = json.loads(cli("service", "install", "--json", env=env).stdout)
        plist = plistlib.loads(
            units.render(
                "darwin", units.ServiceSpec(tuple(spec["command"]), Path(spec["log"]), spec["environment"])
            )
        )
        wrapper = subprocess.run(
            plist["ProgramArguments"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**env, **plist["EnvironmentVariables"]},
        )
        assert wrapper.returncode == 0 and "does not start a second one" in wrapper.stderr
    finally:
        cli("service", "uninstall", env=env)
    daemon.stop()
    assert cli("service", "should-start", env=env).returncode == 0


def test_the_macos_agent_is_written_and_removed(env, isolated_home, tmp_path):
    home = Path(env["HOME"])
    darwin = {**env, "PATH": str(tmp_path / "empty-bin")}  # no launchctl, even on a Mac
    before = _tree(home)
    paths = resolve_paths()
    result = install(paths, platform="darwin", environ=darwin)
    plist_path = home / "Library/LaunchAgents" / f"{units.LAUNCHD_LABEL}.plist"
    assert result["unit"] == str(plist_path) and result["started"] is False
    assert result["manual"] == [f"launchctl bootstrap gui/{os.getuid()} {plist_path}"]
    plist = plistlib.loads(plist_path.read_bytes())
    assert plist["EnvironmentVariables"]["MEMORYCLOUD_HOME"] == str(isolated_home)
    state = status(paths, platform="darwin", environ=darwin)
    assert state["installed"] is True and state["active"] is None and "launchctl not found" in state["reason"]
    assert service_hint(paths, platform="darwin", environ=darwin) is None
    assert uninstall(paths, platform="darwin", environ=darwin)["removed"] is True
    assert _tree(home) == before
    assert service_hint(paths, platform="darwin", environ=darwin) is not None


def test_windows_is_not_supported_yet(env):
    paths = resolve_paths()
    with pytest.raises(NotSupported, match="not supported yet on win32"):
        install(paths, platform="win32", environ=env)
    with pytest.raises(NotSupported):
        uninstall(paths, platform="win32", environ=env)
    state = status(paths, platform="win32", environ=env)
    assert state["supported"] is False and "memorycloud daemon start" in state["message"]
    assert service_hint(paths, platform="win32", environ=env) is None
