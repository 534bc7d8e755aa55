"""The login service's files: systemd accepts the unit, the plist has launchd's keys."""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from daemon import service_units as units
from daemon.cli.service import spec_for
from state.paths import resolve_paths


def _spec(tmp_path: Path, home: Path) -> units.ServiceSpec:
    paths = resolve_paths({"MEMORYCLOUD_HOME": str(home)})
    return spec_for(paths, {"MEMORYCLOUD_HOME": str(home)}, units.default_command())


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_unit_passes_systemd_analyze_verify(tmp_path):
    # A home with a space, a % (a specifier), a $ and a quote: all must survive systemd's parser.
    home = tmp_path / 'my "home" 100% $HOME'
    content = units.render("linux", _spec(tmp_path, home)).decode()
    unit = tmp_path / "verify" / units.UNIT_NAME
    unit.parent.mkdir()
    unit.write_text(content)
    # systemd's own user units put sockets under XDG_RUNTIME_DIR, and a socket path is at most
    # 107 bytes: under a long TMPDIR (tmp_path) they failed with "File name too long".
    with tempfile.TemporaryDirectory(prefix="xrd", dir="/tmp") as runtime:
        verified = subprocess.run(
            ["systemd-analyze", "--user", "verify", str(unit)],
            capture_output=True,
            text=True,
            timeout=30,
            env={**os.environ, "XDG_RUNTIME_DIR": runtime},
        )
    # Unknown keys and bad escapes are only warnings (exit 0): stderr must be empty too.
    assert (verified.returncode, verified.stderr) == (0, "")
    lines = content.splitlines()
    command = units.default_command()
    assert command == (str(Path(sys.executable).parent / "memorycloud"),)  # the venv's script
    assert f"ExecStart={command[0]} daemon run" in lines
    assert f"ExecCondition={command[0]} service should-start" in lines
    assert {"Restart=on-failure", "RestartSec=5", "WantedBy=default.target", "Type=exec"} <= set(lines)
    log = str(home / "state" / "daemon.log").replace("%", "%%")
    assert f"StandardOutput=append:{log}" in lines and f"StandardError=append:{log}" in lines
    assert units.unit_home("linux", content.encode()) == str(home)


def test_a_unit_for_the_default_directories_carries_no_home(tmp_path):
    spec = spec_for(resolve_paths({}), {}, ("/opt/mc/bin/memorycloud",))
    content = units.render_systemd_unit(spec)
    assert "MEMORYCLOUD_HOME" not in content and spec.environment == {}
    assert units.unit_home("linux", content.encode()) is None


def test_launchd_plist_keys(tmp_path):
    home = tmp_path / "mc home"
    spec = _spec(tmp_path, home)
    plist = plistlib.loads(units.render("darwin", spec))
    assert plist["Label"] == units.LAUNCHD_LABEL
    assert plist["RunAtLoad"] is True
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["StandardOutPath"] == plist["StandardErrorPath"] == str(home / "state" / "daemon.log")
    assert plist["EnvironmentVariables"] == {"MEMORYCLOUD_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    shell, flag, script, name, *command = plist["ProgramArguments"]
    assert (shell, flag, name) == ("/bin/sh", "-c", "memorycloud")
    assert tuple(command) == spec.command
    assert script.endswith('exec "$@" daemon run') and "service should-start || exit 0" in script
    assert units.unit_home("darwin", units.render("darwin", spec)) == str(home)


def test_where_the_files_go():
    env = {"HOME": "/home/ada", "XDG_CONFIG_HOME": "/cfg"}
    assert units.unit_path("linux", env) == Path("/cfg/systemd/user/memorycloud.service")
    assert units.unit_root("linux", env) == Path("/cfg")
    # A relative XDG_CONFIG_HOME is ignored, as the XDG spec and systemd say.
    assert units.unit_path("linux", {**env, "XDG_CONFIG_HOME": "rel"}) == Path(
        "/home/ada/.config/systemd/user/memorycloud.service"
    )
    assert units.unit_path("darwin", env) == Path(
        f"/home/ada/Library/LaunchAgents/{units.LAUNCHD_LABEL}.plist"
    )
    assert units.unit_root("darwin", env) == Path("/home/ada")
    assert units.unit_path("win32", env) is None and units.manager_for("win32") is None


def test_without_a_script_beside_the_interpreter_the_command_is_python_m(tmp_path):
    python = tmp_path / "bin" / "python"
    assert units.default_command(str(python)) == (str(python), "-P", "-m", "daemon")


def test_a_line_break_cannot_reach_a_unit(tmp_path):
    spec = units.ServiceSpec(("/bin/memorycloud",), tmp_path / "log\nExecStartPre=/bin/evil")
    with pytest.raises(ValueError):
        units.render("linux", spec)
    with pytest.raises(ValueError):
        units.render("darwin", spec)
