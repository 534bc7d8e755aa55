"""daemon/logs.py: daemon.log rotates when the daemon's stderr is that file (detached, or
under a service manager), and stdout/stderr follow it to the new file; in a terminal the
records stay on stderr. The process is a real child whose stderr is the log file, as
``daemon start`` makes it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from state.config import load_settings, set_setting
from state.errors import ConfigError
from state.paths import resolve_paths

CHILD = """
import logging, os, sys
from daemon.logs import configure_daemon_logging
from state.config import Settings
from state.paths import resolve_paths
paths = resolve_paths()
configure_daemon_logging(paths, Settings(log_max_bytes=2000, log_backups=2))
for n in range(200):
    logging.getLogger("daemon.test").info("record %03d %s", n, "x" * 40)
print("printed after the rollovers", file=sys.stderr, flush=True)
os.write(1, b"written to fd 1\\n")
"""


def _run(stderr) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CHILD],
        stdout=stderr,
        stderr=stderr,
        env={**os.environ},
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )


def test_the_log_rotates_and_stdout_and_stderr_follow_it(paths):
    log = paths.log_file
    log.write_text("an old line\n" * 500)  # 6 kB from before: rotated at the first record
    with open(log, "ab") as handle:
        assert _run(handle).returncode == 0
    files = sorted(p.name for p in log.parent.glob("daemon.log*"))
    assert files == ["daemon.log", "daemon.log.1", "daemon.log.2"]  # log_backups = 2
    for path in log.parent.glob("daemon.log*"):
        assert path.stat().st_size <= 2000 + 100
    current = log.read_text()
    assert "printed after the rollovers" in current and "written to fd 1" in current
    assert "record 199" in current
    assert "an old line" not in current + (log.parent / "daemon.log.1").read_text()


def test_in_a_terminal_records_go_to_stderr_and_nothing_rotates(paths):
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0
    assert "daemon.test: record 000" in done.stderr and "record 199" in done.stderr
    assert not paths.log_file.exists()


def test_the_logging_settings(paths):
    settings = load_settings(paths.config_file)
    assert (settings.log_max_bytes, settings.log_backups, settings.access_log) == (5 * 1024 * 1024, 3, False)
    assert set_setting(paths.config_file, "access_log", "on") is True
    assert set_setting(paths.config_file, "log_max_bytes", "65536") == 65536
    assert load_settings(paths.config_file).access_log is True
    with pytest.raises(ConfigError, match="must be positive"):
        set_setting(paths.config_file, "log_backups", "0")
    assert resolve_paths().access_log_file == paths.state_dir / "access.log"
