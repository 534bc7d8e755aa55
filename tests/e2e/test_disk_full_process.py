"""A real full disk under the real daemon process: its data lives on a small tmpfs that the
writes fill. The write that finds no room is refused with 507 and a clear message, reading
goes on, writing resumes once room is made, and after a kill -9 every acknowledged write is
there and the database is sound. (Mounting needs root; elsewhere
tests/reliability/test_disk_full.py covers the same promise with max_page_count.)
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import DaemonProcess, cli, free_port

STORES = "/api/v1/cloud/memory_stores"


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(disk)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill (needs root): {mounted.stderr.strip()}")
    monkeypatch.setenv("MEMORYCLOUD_HOME", str(disk / "home"))
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_full_disk_refuses_writes_then_recovers_and_survives_a_kill(small_disk, tmp_path):
    ballasts = [small_disk / "ballast-1", small_disk / "ballast-2"]
    for ballast, mib in zip(ballasts, (1, 6), strict=True):  # room to make later
        ballast.write_bytes(b"\0" * (mib << 20))
    key = json.loads(cli("agent", "add", "disk-agent", "--runtime", "codex", "--json").stdout)["api_key"]
    daemon = DaemonProcess(free_port(), tmp_path)  # its log stays off the small disk
    daemon.start()
    try:
        http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)
        store_id = http.post(STORES, json={"name": "full"}).json()["id"]
        acked: dict[str, str] = {}
        refused = None
        for i in range(200):
            content = f"document {i} " + "x" * 30_000
            answer = http.post(
                f"{STORES}/{store_id}/memories", json={"path": f"d/{i}.md", "content": content}
            )
            if answer.status_code != 200:
                refused = answer
                break
            acked[answer.json()["id"]] = content
        assert refused is not None, "12 MiB of disk took 12 MB of documents"
        assert refused.status_code == 507, refused.text
        assert "disk is full" in refused.json()["error"]["message"], refused.text
        # How many fit depends on SQLite's page and WAL use; what matters is that some did.
        assert acked
        # Reads go on while the disk is full.
        some = next(iter(acked))
        assert http.get(f"{STORES}/{store_id}/memories/{some}").json()["content"] == acked[some]

        ballasts[0].unlink()
        answer = http.post(
            f"{STORES}/{store_id}/memories", json={"path": "after.md", "content": "room again"}
        )
        assert answer.status_code == 200, answer.text
        acked[answer.json()["id"]] = "room again"
        daemon.stop(signal.SIGKILL)

        # Opening folds the WAL into the database, which needs room for the WAL's pages.
        ballasts[1].unlink()
        daemon.start()
        http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)
        for memory_id, content in acked.items():
            assert http.get(f"{STORES}/{store_id}/memories/{memory_id}").json()["content"] == content
        listed = http.get(f"{STORES}/{store_id}/memories", params={"limit": 100}).json()["data"]
        assert len(listed) == len(acked), "the refused write left something behind"
        report = json.loads(cli("doctor", "--json").stdout)
        assert report["integrity"] == "ok" and report["indexes"]["fts"]["ok"], report
        assert report["indexes"]["vectors"]["ok"], report
    finally:
        if daemon.process is not None:
            daemon.stop()
