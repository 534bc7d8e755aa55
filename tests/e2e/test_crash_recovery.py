"""kill -9 of the daemon while several clients write through three dialects at once.

After the restart: every write the daemon acknowledged is there with its exact content, no
write is half there (each record has all its versions, its delta log row and summary card, or
nothing), SQLite's integrity_check passes, and the FTS and vector indexes agree with the
records. Then `memorycloud doctor` finds a damaged index and `doctor --repair` rebuilds it.
(bench/crash_soak.py repeats the kill many times; see bench/RESULTS.md.)
"""

from __future__ import annotations

import hashlib
import json
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from state.db import connect
from state.doctor import check_indexes, integrity_check
from tests.e2e.conftest import cli

STORES = "/api/v1/cloud/memory_stores"


class Writer(threading.Thread):
    """One client writing in a loop until the daemon dies under it; keeps what was acked."""

    def __init__(self, name: str, url: str, key: str, write: Callable[[httpx.Client, int], Any]) -> None:
        super().__init__(name=name, daemon=True)
        self.client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=10)
        self.write = write
        self.acked: list[tuple[int, Any]] = []
        self.failure: str | None = None

    def run(self) -> None:
        i = 0
        try:
            while True:
                self.acked.append((i, self.write(self.client, i)))
                i += 1
        except httpx.TransportError:
            pass  # the kill: this write's outcome is unknown, and it was not acknowledged
        except Exception as exc:  # anything else is a failure of the test's own writes
            self.failure = repr(exc)


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    return response.json()


def text(dialect: str, i: int) -> str:
    return f"crash-safe {dialect} write number {i} with some ordinary words"


def start_writers(url: str, keys: list[str], store_id: str, receipts: list[str]) -> list[Writer]:
    def delta(receipt: str, tag: str) -> Callable[[httpx.Client, int], Any]:
        return lambda http, i: _ok(
            http.post(
                "/api/agent/memory-delta",
                json={"summary": text(tag, i), "importance": 3},
                headers={"X-AMP-Context-Receipt": receipt},
            )
        )["delta"]["memory_id"]

    def document(http: httpx.Client, i: int) -> Any:
        return _ok(
            http.post(
                f"{STORES}/{store_id}/memories", json={"path": f"notes/{i}.md", "content": text("stores", i)}
            )
        )["id"]

    def message(http: httpx.Client, i: int) -> Any:
        return _ok(
            http.post(
                "/add_messages/",
                json={
                    "user_id": "crash-user",
                    "scope_id": "crash",
                    "session_id": f"s{i % 3}",
                    "messages": [{"role": "assistant", "content": text("mem1", i)}],
                },
            )
        )["message_ids"][0]

    writers = [
        Writer("amp-a", url, keys[0], delta(receipts[0], "amp-a")),
        Writer("amp-b", url, keys[1], delta(receipts[1], "amp-b")),
        Writer("stores", url, keys[0], document),
        Writer("mem1", url, keys[1], message),
    ]
    for writer in writers:
        writer.start()
    return writers


def assert_nothing_half_written(database) -> None:
    conn = connect(database)  # not read-only: FTS5's integrity-check is an insert command
    try:
        assert integrity_check(conn) == ["ok"]
        # Every record has each of its versions 1..n, and its content matches its sha256.
        broken = conn.execute(
            "select r.id from memory_records r where r.version != (select count(*) from"
            " memory_versions v where v.memory_id = r.id) or r.version != (select max(version)"
            " from memory_versions v where v.memory_id = r.id)"
        ).fetchall()
        assert broken == []
        for memory_id, content, digest in conn.execute(
            "select id, content, content_sha256 from memory_records"
        ):
            assert hashlib.sha256(content.encode()).hexdigest() == digest, memory_id
        # An AMP delta is a record + delta log row + summary card, all or nothing.
        orphans = conn.execute(
            "select count(*) from memory_records r where r.source = 'memory_delta' and ("
            " not exists (select 1 from memory_deltas d where d.memory_id = r.id) or"
            " not exists (select 1 from summary_cards c where c.memory_id = r.id))"
        ).fetchone()[0]
        orphans += conn.execute(
            "select count(*) from memory_deltas d where not exists"
            " (select 1 from memory_records r where r.id = d.memory_id)"
        ).fetchone()[0]
        # A mem1 message and the memory derived from it, both or neither.
        orphans += conn.execute(
            "select count(*) from mem1_messages m where not exists (select 1 from memory_records r"
            " where r.source = 'mem1' and json_extract(r.provenance, '$.message_id') = m.id"
            " and r.kind != 'summary')"
        ).fetchone()[0]
        assert orphans == 0
        reports = check_indexes(conn)
        assert all(r.ok for r in reports.values()), {k: r.describe() for k, r in reports.items()}
    finally:
        conn.close()


def test_sigkill_during_concurrent_writes_loses_nothing(daemon, agent_key):
    other_key = json.loads(cli("agent", "add", "crash-b", "--runtime", "claude", "--json").stdout)["api_key"]
    keys = [agent_key, other_key]
    receipts = [
        _ok(
            httpx.post(
                f"{daemon.url}/api/agent/bootstrap/context",
                json={"project_key": "crash"},
                headers={"Authorization": f"Bearer {key}"},
            )
        )["receipt_id"]
        for key in keys
    ]
    store_id = _ok(
        httpx.post(
            f"{daemon.url}{STORES}", json={"name": "crash"}, headers={"Authorization": f"Bearer {agent_key}"}
        )
    )["id"]

    writers = start_writers(daemon.url, keys, store_id, receipts)
    deadline = time.monotonic() + 10
    while sum(len(w.acked) for w in writers) < 120 and time.monotonic() < deadline:
        time.sleep(0.02)
    daemon.stop(signal.SIGKILL)  # mid-write: no checkpoint, no close, no cleanup
    for writer in writers:
        writer.join(timeout=15)
        assert writer.failure is None, (writer.name, writer.failure)
        assert writer.acked, f"{writer.name} had no write acknowledged before the kill"

    assert_nothing_half_written(daemon.home / "data" / "memorycloud.db")
    daemon.start()
    by_name = {w.name: w for w in writers}
    http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {agent_key}"})
    for name in ("amp-a", "amp-b"):
        for i, memory_id in by_name[name].acked:
            memory = _ok(http.get(f"/api/agent/memories/{memory_id}"))["memory"]
            assert memory["content"] == text(name, i)
    for i, memory_id in by_name["stores"].acked:
        assert _ok(http.get(f"{STORES}/{store_id}/memories/{memory_id}"))["content"] == text("stores", i)
    for i, message_id in by_name["mem1"].acked:
        traced = _ok(http.post("/get_message_by_id/", json={"message_id": message_id}))
        assert traced["found"] and traced["content"] == text("mem1", i)
    # The last acknowledged write of each dialect is also found by search.
    last = by_name["stores"].acked[-1][0]
    found = _ok(
        http.get("/api/agent/search", params={"q": f"stores write number {last}", "namespace": store_id})
    )
    assert any(item.get("path") == f"notes/{last}.md" for item in found["items"]), found

    # The doctor agrees, and repairs a damaged index.
    report = json.loads(cli("doctor", "--json").stdout)
    assert report["integrity"] == "ok" and report["indexes"]["fts"]["ok"], report
    daemon.stop()
    conn = connect(daemon.home / "data" / "memorycloud.db")
    damaged = conn.execute("select rowid from memory_fts limit 5").fetchall()
    conn.execute("delete from memory_fts where rowid in (select rowid from memory_fts limit 5)")
    conn.execute("delete from memory_vec where rowid = ?", (damaged[0][0],))
    conn.execute("delete from live_records where seq = ?", (damaged[1][0],))
    conn.close()
    found = cli("doctor", check=False)
    assert found.returncode == 1 and "DISAGREES: 5 missing" in found.stdout, found.stdout
    assert "index live_records  DISAGREES: 1 missing" in found.stdout, found.stdout
    repaired = json.loads(cli("doctor", "--repair", "--json").stdout)
    assert all(repaired["indexes"][name]["ok"] for name in ("fts", "vectors", "live_records")), repaired
    assert_nothing_half_written(daemon.home / "data" / "memorycloud.db")
