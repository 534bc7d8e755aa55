"""state/atomic.py: the one atomic file writer (config, secrets, credentials, startup items,
service units, runtime files, mounts, caches)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from state.atomic import PRIVATE, write_atomic


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_a_new_file_is_private_and_its_directories_are_made(tmp_path):
    target = tmp_path / "a" / "b" / "file.json"
    write_atomic(target, "{}\n")
    assert target.read_text() == "{}\n" and _mode(target) == PRIVATE
    write_atomic(target, b"\x00bytes")
    assert target.read_bytes() == b"\x00bytes"
    assert _leftovers(target.parent) == []


def test_text_is_utf8_without_newline_translation(tmp_path):
    target = tmp_path / "text.md"
    write_atomic(target, "记忆云\r\nline\n")
    assert target.read_bytes() == "记忆云\r\nline\n".encode()


def test_an_existing_file_keeps_its_mode_unless_one_is_forced(tmp_path):
    target = tmp_path / "CLAUDE.md"
    target.write_text("old")
    os.chmod(target, 0o644)
    write_atomic(target, "new")
    assert target.read_text() == "new" and _mode(target) == 0o644
    write_atomic(target, "secret", mode=PRIVATE)
    assert _mode(target) == 0o600


def test_readers_see_the_old_file_or_the_new_one(tmp_path):
    target = tmp_path / "cache.json"
    write_atomic(target, "old")
    with open(target) as reader:  # opened before the write: still the whole old file
        write_atomic(target, "new")
        assert reader.read() == "old"
    assert target.read_text() == "new"


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "config.toml"
    write_atomic(target, "port = 1\n")

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_atomic(target, "port = 2\n")
    assert target.read_text() == "port = 1\n"
    assert _leftovers(tmp_path) == []
