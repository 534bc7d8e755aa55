"""The checkpoint job's connection is closed only after the checkpoint running in a worker
thread returns (closing it under that thread crashed the daemon at shutdown)."""

from __future__ import annotations

import threading

import pytest

from state import db
from state.errors import StoreUnavailable


def test_close_waits_for_the_checkpoint_in_progress(tmp_path, monkeypatch):
    guard = db.CheckpointConnection(db.connect(tmp_path / "store.db"))
    running, release = threading.Event(), threading.Event()
    real = db.checkpoint

    def slow_checkpoint(conn):
        running.set()
        release.wait(10)
        return real(conn)  # the connection must still be open here

    monkeypatch.setattr(db, "checkpoint", slow_checkpoint)
    results: list[object] = []
    worker = threading.Thread(target=lambda: results.append(guard.checkpoint()))
    worker.start()
    assert running.wait(10)
    closer = threading.Thread(target=guard.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive(), "close() returned while a checkpoint was still running"
    release.set()
    worker.join(10)
    closer.join(10)
    assert not closer.is_alive() and len(results) == 1 and len(results[0]) == 3
    with pytest.raises(StoreUnavailable):
        guard.checkpoint()
    with pytest.raises(StoreUnavailable):
        guard.restart_wal()
