"""The daemon process meets a broken environment: a corrupt config file, a damaged database,
a read-only data directory, a full disk, a port in use. It refuses to start or degrades, says
why in words a person can act on, and never changes the files it could not use.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import DaemonProcess, cli, free_port


def run_daemon(port: int, **popen) -> subprocess.CompletedProcess:
    """`memorycloud daemon run` that is expected to give up by itself (30 s is a hang)."""
    return subprocess.run(
        [sys.executable, "-m", "daemon", "daemon", "run", "--port", str(port)],
        capture_output=True,
        text=True,
        timeout=30,
        **popen,
    )


def digest(*files: Path) -> dict[str, str | None]:
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() if f.exists() else None for f in files}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """One installation with an agent and a memory, made once; each test gets a copy."""
    home = tmp_path_factory.mktemp("installed") / "mchome"
    home.mkdir()
    env = {**os.environ, "MEMORYCLOUD_HOME": str(home), "MEMORYCLOUD_SECRETS": "file"}
    key = json.loads(
        subprocess.run(
            [sys.executable, "-m", "daemon", "agent", "add", "fault-agent", "--runtime", "codex", "--json"],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout
    )["api_key"]
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "daemon", "daemon", "run", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        url, auth = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {key}"}
        for _ in range(200):
            try:
                store = httpx.post(f"{url}/api/v1/cloud/memory_stores", json={"name": "s"}, headers=auth)
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        else:
            raise AssertionError("the template daemon did not come up")
        httpx.post(
            f"{url}/api/v1/cloud/memory_stores/{store.json()['id']}/memories",
            json={"path": "a.md", "content": "kept through every fault"},
            headers=auth,
        )
    finally:
        process.terminate()
        process.wait(20)
    return home


@pytest.fixture
def installed(template: Path, isolated_home: Path) -> Path:
    """A copy of the template installation as this test's home; returns the database."""
    shutil.copytree(template, isolated_home)
    return isolated_home / "data" / "memorycloud.db"


@pytest.mark.parametrize(
    "text,message",
    [
        ("[daemon\nport = 8517\n", "cannot parse"),
        ('[daemon]\nport = "eighty"\n', "'port' must be of type int"),
    ],
    ids=["syntax", "wrong-type"],
)
def test_corrupt_config_file_refuses_to_start_and_keeps_the_file(installed, isolated_home, text, message):
    config = isolated_home / "config" / "config.toml"
    config.write_text(text, encoding="latin-1")
    before = digest(config, installed)
    result = run_daemon(free_port())
    assert result.returncode == 1, result.stderr
    assert message in result.stderr and str(config) in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert digest(config, installed) == before


def test_file_that_is_not_a_database_is_left_untouched(installed):
    data = bytearray(installed.read_bytes())
    data[:16] = b"not sqlite at all"[:16]
    installed.write_bytes(bytes(data))
    before = digest(installed)
    result = run_daemon(free_port())
    assert result.returncode == 1 and "damaged" in result.stderr and str(installed) in result.stderr, (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    assert digest(installed) == before
    doctor = cli("doctor", check=False)
    assert doctor.returncode == 1 and "damaged" in (doctor.stdout + doctor.stderr)


def test_damaged_pages_degrade_with_a_clear_message(installed, isolated_home):
    from state.db import connect

    conn = connect(installed)
    (root,) = conn.execute("select rootpage from sqlite_master where name = 'memory_records'").fetchone()
    page_size = conn.execute("pragma page_size").fetchone()[0]
    conn.close()
    data = bytearray(installed.read_bytes())
    data[(root - 1) * page_size : root * page_size] = b"\xa5" * page_size
    installed.write_bytes(bytes(data))

    daemon = DaemonProcess(free_port(), isolated_home)
    result = None
    try:
        daemon.start()
    except AssertionError:  # refused to start: that must be said clearly too
        result = (isolated_home / "foreground.log").read_text()
        assert "damaged" in result and "Traceback" not in result, result
    if result is None:
        owner = json.loads((isolated_home / "config" / "secrets.json").read_text())["owner_key"]
        answer = httpx.get(
            f"{daemon.url}/api/local/memories?q=kept", headers={"Authorization": f"Bearer {owner}"}
        )
        daemon.stop()
        assert answer.status_code == 503 and "damaged" in answer.json()["error"]["message"], answer.text
        assert "memorycloud doctor" in answer.json()["error"]["message"]
    doctor = cli("doctor", check=False)
    assert doctor.returncode == 1 and "integrity  FAILED" in doctor.stdout, doctor.stdout


def _without_dac_override() -> None:
    """In the child before exec: drop root's power to ignore file modes (CAP_DAC_OVERRIDE,
    CAP_DAC_READ_SEARCH) from the bounding set, so root meets a read-only directory as any
    user would."""
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_read_only_data_directory_refuses_to_start_and_changes_nothing(installed):
    data = installed.parent
    for leftover in data.glob("memorycloud.db-*"):
        leftover.unlink()
    os.chmod(installed, 0o444)
    os.chmod(data, 0o555)
    try:
        before = digest(installed)
        popen = {"preexec_fn": _without_dac_override} if os.geteuid() == 0 else {}
        try:
            result = run_daemon(free_port(), **popen)
        except subprocess.SubprocessError as exc:
            pytest.skip(f"running as root without the right to drop CAP_DAC_OVERRIDE: {exc}")
        assert result.returncode == 1, result.stderr
        assert "read-only" in result.stderr and str(data) in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        assert digest(installed) == before and sorted(p.name for p in data.iterdir()) == ["memorycloud.db"]
    finally:
        os.chmod(data, 0o755)
        os.chmod(installed, 0o644)


def test_port_in_use_in_the_foreground_is_a_clear_message(isolated_home):
    isolated_home.mkdir(parents=True, exist_ok=True)
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        result = run_daemon(blocker.getsockname()[1])
    assert result.returncode == 1
    assert "already in use" in result.stderr and "--port" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_damaged_search_index_is_rebuilt_by_doctor_repair(installed, isolated_home):
    """Damage confined to the FTS index is not a damaged file: the records are intact, and
    `doctor --repair` rebuilds the index from them."""
    from state.db import connect

    conn = connect(installed)
    conn.execute(
        "update memory_fts_data set block = zeroblob(length(block))"
        " where id = (select max(id) from memory_fts_data)"
    )
    conn.close()
    found = cli("doctor", check=False)
    assert found.returncode == 1, found.stdout
    # SQLite 3.44+ also reports FTS damage in integrity_check ("search index damaged");
    # older ones (Debian 12's 3.40) only through the index check: both lead to --repair.
    assert "search index damaged" in found.stdout or "index fts         DISAGREES" in found.stdout, (
        found.stdout
    )
    assert "doctor --repair" in found.stdout, found.stdout
    assert "integrity  FAILED" not in found.stdout

    repaired = cli("doctor", "--repair")
    assert "integrity         ok" in repaired.stdout and "index fts         ok" in repaired.stdout, (
        repaired.stdout
    )
    daemon = DaemonProcess(free_port(), isolated_home)
    daemon.start()
    try:
        owner = json.loads((isolated_home / "config" / "secrets.json").read_text())["owner_key"]
        answer = httpx.get(
            f"{daemon.url}/api/local/memories?q=kept", headers={"Authorization": f"Bearer {owner}"}
        )
    finally:
        daemon.stop()
    assert [item["content"] for item in answer.json()["items"]] == ["kept through every fault"]
