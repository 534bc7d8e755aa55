"""An upgrade's search index rebuild with the real daemon process, on a store made by the
previous release (tests/fixtures/prev_release_store.db, commit 3e61d2f): the progress in
`memorycloud doctor` and `memorycloud daemon status`, kill -9 in the middle, a restart that continues where the last
committed batch stopped, and every record found afterwards, Russian text included (the
previous tokenizer kept no word of it)."""

from __future__ import annotations

import json
import re
import shutil
import signal
import time
from pathlib import Path

import httpx

from state.config import set_setting
from state.db import connect
from state.paths import resolve_paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from state.tokenize import TOKENIZER_VERSION
from tests.e2e.conftest import DaemonProcess, cli, free_port

FIXTURE = Path(__file__).parent.parent / "fixtures" / "prev_release_store.db"
PROGRESS = re.compile(
    rf"search index: rebuilding (?:for tokenizer {TOKENIZER_VERSION}|vectors for embedder hashing-v3 \(1024"
    r" dimensions\)) — (\d+) of (\d+) records \((\d+) %\), started \d\d:\d\d"
    r"(?:; the vectors follow|; search ranks by words until then)"
)


def _wait(condition, what: str, seconds: float = 60.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _fts_build(database: Path) -> tuple[int, int, int]:
    """(cursor, done, rows in the new table) as committed: what a restart starts from."""
    conn = connect(database, readonly=True)
    try:
        cursor, done = conn.execute(
            "select cursor, done from index_builds where name = 'memory_fts'"
        ).fetchone()
        rows = conn.execute("select count(*) from memory_fts_next").fetchone()[0]
        return cursor, done, rows
    finally:
        conn.close()


def test_a_previous_release_store_is_rebuilt_in_the_background_across_a_kill(isolated_home):
    paths = resolve_paths().ensure()
    shutil.copyfile(FIXTURE, paths.database)
    # Small, slow batches, so that there is a middle to see and to kill.
    set_setting(paths.config_file, "rebuild_batch_records", "3")
    set_setting(paths.config_file, "rebuild_pause_ms", "40")
    conn = connect(paths.database, readonly=True)
    live = {
        re.search(r"ref\d{3}", content).group(): (namespace, content)
        for namespace, content in conn.execute(
            "select namespace, content from memory_records where deleted_at is null"
        )
    }
    conn.close()
    # The first open with this code (here doctor's, the daemon stopped) records the rebuild.
    doctor = cli("doctor")
    assert re.search(
        rf"search index +rebuilding for tokenizer {TOKENIZER_VERSION} — 0 of 249 records \(0 %\),"
        r" started \d\d:\d\d; the vectors follow \(the daemon continues it;"
        r" `memorycloud doctor --repair` with the daemon stopped finishes it now\)",
        doctor.stdout,
    ), doctor.stdout
    assert re.search(r"index vectors +rebuilding \(checked once it is complete\)", doctor.stdout)
    daemon = DaemonProcess(free_port(), isolated_home)
    daemon.start()
    try:
        owner = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
        http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {owner}"})

        def progress() -> dict:  # what `daemon status` prints, without a process per look
            return http.get("/api/local/status").json()["search_index"]

        def search(query: str, namespace: str) -> list[str]:
            answer = http.get("/api/local/memories", params={"q": query, "namespace": namespace})
            assert answer.status_code == 200, answer.text
            return [item["content"] for item in answer.json()["items"]]

        _wait(lambda: progress().get("done", 0) >= 30, "the rebuild to be under way")
        assert progress()["index"] == "words"
        # Meanwhile the old index answers.
        assert search("ref042", live["ref042"][0])[0] == live["ref042"][1]
        daemon.stop(signal.SIGKILL)
        cursor, done_at_kill, rows = _fts_build(paths.database)
        assert cursor > 0 and rows == done_at_kill >= 30  # the cursor matches what was copied

        daemon.start()
        # It continues from the last committed batch: nothing is copied again from the start.
        assert progress()["indexes"]["memory_fts"]["done"] >= done_at_kill
        text = cli("daemon", "status").stdout
        line = next(line for line in text.splitlines() if line.startswith("search index:"))
        assert PROGRESS.fullmatch(line), text
        done, total, percent = map(int, PROGRESS.fullmatch(line).groups())
        assert total == len(live) and done < total and percent == done * 100 // total
        if f"tokenizer {TOKENIZER_VERSION}" in line:
            assert done >= done_at_kill
        _wait(lambda: progress()["state"] == "current", "the rebuild to finish", 120)
        assert "search index: current" in cli("daemon", "status").stdout
        for ref, (namespace, content) in live.items():
            assert search(ref, namespace)[0] == content, ref
        russian = [ref for ref, (_, content) in live.items() if "пятниц" in content]
        for ref in russian:
            assert live[ref][1] in search("пятницу", live[ref][0]), ref
        report = json.loads(cli("doctor", "--json").stdout)
        assert report["indexes"]["fts"]["ok"] and report["indexes"]["vectors"]["ok"], report
        assert report["search_index"]["state"] == "current"
    finally:
        if daemon.process is not None:
            daemon.stop()
