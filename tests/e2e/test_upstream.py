"""Two real daemon processes: a laptop's daemon and a team daemon in the cloud role, the
first connected to the second as its upstream with `memorycloud upstream connect`.

Stores are read with a read-only SQLite connection (WAL lets a reader in beside the daemon),
so the assertions see exactly what was committed on each side.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from state.paths import resolve_paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from tests.e2e.conftest import DaemonProcess, cli, free_port


class Node:
    """One daemon process with its home, environment, owner key and HTTP helpers."""

    def __init__(self, home: Path, *, role: str = "local", settings: dict[str, str] | None = None):
        home.mkdir(parents=True, exist_ok=True)
        self.home = home
        self.env = {**os.environ, "MEMORYCLOUD_HOME": str(home), "MEMORYCLOUD_SECRETS": "file"}
        for key, value in (settings or {}).items():
            cli("config", "set", key, value, env=self.env)
        self.proc = DaemonProcess(free_port(), home, extra_args=("--role", role), env=self.env)
        self.proc.start()
        self.paths = resolve_paths({"MEMORYCLOUD_HOME": str(home)})
        self.owner_key = open_secret_store(self.paths.secrets_file).get(OWNER_KEY_SECRET)

    @property
    def url(self) -> str:
        return self.proc.url

    def cli(self, *args: str) -> Any:
        return json.loads(cli(*args, "--json", env=self.env).stdout)

    def call(
        self,
        method: str,
        path: str,
        key: str | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
        expect: int = 200,
    ) -> Any:
        response = httpx.request(
            method,
            f"{self.url}{path}",
            json=body,
            timeout=10,
            headers={"Authorization": f"Bearer {key or self.owner_key}", **(headers or {})},
        )
        assert response.status_code == expect, response.text
        return response.json()

    def agent(self, name: str, *extra_scopes: str) -> str:
        scopes = ["memory:read", "memory:write", "agent:sync", "skill:install", *extra_scopes]
        return self.cli("agent", "add", name, "--runtime", "codex", "--scopes", ",".join(scopes))["api_key"]

    def delta(self, key: str, summary: str, **body: Any) -> dict[str, Any]:
        receipt = self.call("POST", "/api/agent/bootstrap/context", key, {})["receipt_id"]
        return self.call(
            "POST",
            "/api/agent/memory-delta",
            key,
            {"summary": summary, **body},
            headers={"X-AMP-Context-Receipt": receipt},
        )

    def contents(self) -> list[str]:
        """Live record contents, read from the database file."""
        conn = sqlite3.connect(f"file:{self.paths.database}?mode=ro", uri=True)
        try:
            return [
                r[0]
                for r in conn.execute(
                    "select content from memory_records where deleted_at is null order by seq"
                )
            ]
        finally:
            conn.close()

    def query(self, sql: str, *params: Any) -> list[tuple]:
        conn = sqlite3.connect(f"file:{self.paths.database}?mode=ro", uri=True)
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    def stop(self) -> None:
        if self.proc.process is not None:
            if self.proc.process.poll() is None:
                os.kill(self.proc.process.pid, signal.SIGCONT)  # in case a test paused it
            self.proc.stop()


def wait_for(check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[Node]:
    node = Node(tmp_path / "cloud", role="cloud")
    yield node
    node.stop()


def connect_laptop(tmp_path: Path, cloud: Node, **settings: str) -> Node:
    laptop = Node(tmp_path / "laptop", settings={"upstream_timeout_seconds": "1", **settings})
    code = cloud.cli("agent", "pair", "--name", "laptop", "--runtime", "memorycloud_companion")
    status = laptop.cli("upstream", "connect", cloud.url, "--pairing-code", code["pairing_code"])
    assert status["connected"] and status["sync_extension"], status
    return laptop


@pytest.fixture
def laptop(tmp_path: Path, cloud: Node) -> Iterator[Node]:
    """Syncs when told to (`memorycloud upstream sync`) or 1 s after a local AMP write, and
    does not follow the cloud's feed (a change there waits for the next sync: the edit-on-both
    test needs the two edits to cross, and settles the laptop's own rounds first). Its
    requests may take 10 s: with connect_laptop's 1 s, a loaded machine (the whole suite on two
    workers) timed out the sync that a local write starts, and the change waited out its
    2 s backoff while the test's own syncs ran (the edit-on-both test found no conflict, once)."""
    node = connect_laptop(
        tmp_path, cloud, sync_upstream_seconds="3600", upstream_timeout_seconds="10", follow_upstream="false"
    )
    yield node
    node.stop()


def sync(laptop: Node) -> dict[str, Any]:
    status = laptop.cli("upstream", "sync")
    assert status["last_error"] is None, status
    return status


def settle(laptop: Node) -> None:
    """Wait out the rounds the laptop's own writes and pulls asked for (each a second later):
    one of them could otherwise pull the upstream's next change before the test's own step."""
    wait_for(
        lambda: (
            (s := laptop.call("GET", "/api/local/upstream"))["sync_scheduled_at"] is None and not s["syncing"]
        ),
        "the laptop's scheduled sync rounds",
    )


def test_writes_on_each_side_reach_the_other_and_an_edit_on_both_is_one_conflict(cloud, laptop):
    # The teammate edits through the sync extension, as their own companion daemon would.
    coder, teammate = laptop.agent("coder"), cloud.agent("teammate", "sync:write")
    laptop.delta(coder, "laptop decision: keep SQLite in WAL mode")
    cloud.delta(teammate, "teammate found: the CI cache is flaky on Mondays")
    sync(laptop)
    assert cloud.contents().count("laptop decision: keep SQLite in WAL mode") == 1
    assert laptop.contents().count("teammate found: the CI cache is flaky on Mondays") == 1
    pack = laptop.call("POST", "/api/agent/bootstrap/context", coder, {})
    assert "CI cache is flaky" in pack["summary_markdown"]

    # A runbook in a Memory Store on the laptop reaches the team workspace ...
    store = laptop.call("POST", "/api/v1/cloud/memory_stores", coder, {"name": "runbooks"})
    doc = laptop.call(
        "POST",
        f"/api/v1/cloud/memory_stores/{store['id']}/memories",
        coder,
        {"path": "deploy.md", "content": "deploy: blue-green"},
    )
    sync(laptop)
    # The edits below must cross: a round the writes above asked for, running after the
    # teammate's edit, would pull it before the laptop's (CI saw it once: no conflict).
    settle(laptop)
    changes = cloud.call("GET", "/api/sync/changes?cursor=0", teammate)["changes"]
    upstream_doc = next(c for c in changes if c["path"] == "deploy.md")
    # ... then the teammate edits it there while the laptop's agent edits it here.
    cloud.call(
        "POST",
        f"/api/sync/records/{upstream_doc['memory_id']}",
        teammate,
        {"operation": "update", "base_version": upstream_doc["version"], "content": "deploy: canary first"},
    )
    laptop.call(
        "POST",
        f"/api/v1/cloud/memory_stores/{store['id']}/memories/{doc['id']}",
        coder,
        {"content": "deploy: blue-green in two stages"},
    )
    sync(laptop)
    sync(laptop)
    conflicts = [
        c for c in laptop.call("GET", "/api/local/conflicts")["conflicts"] if c["kind"] == "upstream_sync"
    ]
    assert len(conflicts) == 1
    conflict = conflicts[0]
    assert (conflict["current"], conflict["incoming"], conflict["base"]) == (
        "deploy: blue-green in two stages",
        "deploy: canary first",
        "deploy: blue-green",
    )
    assert "deploy: blue-green in two stages" in laptop.contents()
    assert "deploy: canary first" in cloud.contents()
    # The person takes the incoming one: both sides agree, every version is kept.
    laptop.call("POST", f"/api/local/conflicts/{conflict['id']}/resolve", body={"action": "take_incoming"})
    sync(laptop)
    assert "deploy: canary first" in laptop.contents()
    assert "deploy: blue-green in two stages" not in laptop.contents()
    history = laptop.call("GET", f"/api/local/memories/{doc['id']}/history")
    assert [v["content"] for v in history["versions"]] == [
        "deploy: blue-green",
        "deploy: blue-green in two stages",
        "deploy: canary first",
    ]


def test_an_interrupted_push_is_applied_acked_and_resumed_exactly_once(cloud, laptop):
    coder = laptop.agent("coder")
    sync(laptop)  # the laptop has checked the upstream's updates: none pending
    update = cloud.cli(
        "updates",
        "publish",
        "--title",
        "Re-pull the installer skill",
        "--summary",
        "the install order changed",
        "--severity",
        "required",
        "--repull",
        "memory_tool_installer",
    )
    brief = laptop.call("POST", "/api/agent/memory-brief", coder, {"task": "ship the release"})
    laptop.call(
        "POST",
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        coder,
        {"event_type": "decision", "summary": "we release on Friday", "importance": 5},
    )
    # The write's own kick (1 s) or this round pushes it: the upstream interrupts it, the
    # daemon re-pulls the skill, acks and resumes it.
    wait_for(
        lambda: cloud.contents().count("we release on Friday") == 1 or sync(laptop) and False,
        "the resumed brief event upstream",
    )
    intents = cloud.call("GET", "/api/local/sync-intents")["sync_intents"]
    assert [(i["status"], i["endpoint"]) for i in intents] == [("resumed", "memory_brief_event")]
    status = sync(laptop)
    assert update["update_id"] in status["applied_updates"]
    assert status["interrupted"] == [] and status["backlog"] == 0
    sync(laptop)
    assert cloud.contents().count("we release on Friday") == 1
    assert laptop.contents().count("we release on Friday") == 1


def test_an_upstream_that_hangs_or_dies_mid_sync_loses_and_duplicates_nothing(tmp_path, cloud):
    laptop = connect_laptop(tmp_path, cloud, sync_upstream_seconds="0.5")
    try:
        coder = laptop.agent("coder")
        latencies: list[float] = []
        written: list[str] = []

        def write(n: int) -> None:
            summary = f"step {n:02d} of the migration"
            started = time.perf_counter()
            laptop.delta(coder, summary)
            latencies.append(time.perf_counter() - started)
            written.append(summary)

        for n in range(5):
            write(n)
        wait_for(lambda: sum("of the migration" in c for c in cloud.contents()) >= 3, "first pushes")
        # The upstream hangs (accepts connections, never answers) while agents keep writing.
        os.kill(cloud.proc.process.pid, signal.SIGSTOP)
        for n in range(5, 12):
            write(n)
            time.sleep(0.15)
        os.kill(cloud.proc.process.pid, signal.SIGCONT)
        # Then it dies mid-sync and comes back on the same port and data.
        writer = threading.Thread(target=lambda: [write(n) for n in range(12, 20)])
        writer.start()
        cloud.proc.stop(signal.SIGKILL)
        writer.join()
        status = laptop.cli("upstream", "status")
        assert status["backlog"] > 0
        cloud.proc.start()
        wait_for(lambda: laptop.cli("upstream", "status")["backlog"] == 0, "the backlog to drain", 60)
        on_cloud, on_laptop = cloud.contents(), laptop.contents()
        for summary in written:
            assert on_cloud.count(summary) == 1, summary
            assert on_laptop.count(summary) == 1, summary
        # The agents never waited for the upstream: every local write answered at local speed.
        assert max(latencies) < 0.5, sorted(latencies)[-3:]
    finally:
        laptop.stop()


@pytest.fixture
def plain_cloud(tmp_path: Path) -> Iterator[Node]:
    """A team daemon serving no sync extension: to a downstream daemon it is any AMP upstream."""
    node = Node(tmp_path / "plain-cloud", role="cloud", settings={"serve_sync_extension": "false"})
    yield node
    node.stop()


def test_a_teammates_write_on_an_upstream_without_the_sync_extension_arrives_once(tmp_path, plain_cloud):
    """Issue #14: a teammate's memory delta reaches the local context pack within two sync
    rounds, exactly once; our own write goes up once and does not come back."""
    laptop = Node(
        tmp_path / "laptop", settings={"upstream_timeout_seconds": "2", "sync_upstream_seconds": "3600"}
    )
    try:
        code = plain_cloud.cli("agent", "pair", "--name", "laptop", "--runtime", "memorycloud_companion")
        status = laptop.cli("upstream", "connect", plain_cloud.url, "--pairing-code", code["pairing_code"])
        assert not status["sync_extension"] and status["pull"]["via"] == "read_endpoints", status
        coder, teammate = laptop.agent("coder"), plain_cloud.agent("teammate")
        plain_cloud.call("GET", "/api/sync/info", teammate, expect=404)
        theirs = "teammate found: the CI cache is flaky on Mondays"
        ours = "laptop decision: keep SQLite in WAL mode"
        laptop.delta(coder, ours)
        plain_cloud.delta(teammate, theirs)
        for _ in range(2):
            sync(laptop)
            pack = laptop.call("POST", "/api/agent/bootstrap/context", coder, {})
            if "CI cache is flaky" in pack["summary_markdown"]:
                break
        assert "CI cache is flaky" in pack["summary_markdown"]
        sync(laptop)
        assert laptop.contents().count(theirs) == 1
        assert plain_cloud.contents().count(ours) == 1 and laptop.contents().count(ours) == 1
        (upstream_id,) = plain_cloud.query("select id from memory_records where content = ?", theirs)[0]
        (provenance,) = laptop.query("select provenance from memory_records where content = ?", theirs)[0]
        assert json.loads(provenance)["upstream_id"] == upstream_id
        # `memorycloud upstream status --json`: the outbox holds only what waits (item 9).
        status = laptop.cli("upstream", "status")
        assert status["backlog"] == 0 and sum(status["outbox"].values()) == 0
        assert status["finished"]["sent"] == 1

        # The upstream hangs mid-pull: local writes and packs answer at local speed meanwhile.
        os.kill(plain_cloud.proc.process.pid, signal.SIGSTOP)
        stuck = threading.Thread(target=lambda: laptop.cli("upstream", "sync"))
        stuck.start()
        started = time.perf_counter()
        laptop.delta(coder, "written while the upstream hangs")
        laptop.call("POST", "/api/agent/bootstrap/context", coder, {})
        assert time.perf_counter() - started < 1.0
        os.kill(plain_cloud.proc.process.pid, signal.SIGCONT)
        stuck.join()
        wait_for(
            lambda: sync(laptop) and plain_cloud.contents().count("written while the upstream hangs") == 1,
            "the write made while the upstream hung",
        )
    finally:
        laptop.stop()


def test_a_laptop_pulls_a_team_write_as_it_happens(tmp_path: Path, cloud: Node) -> None:
    """The laptop follows the team server's feed (a pull that waits there): a teammate's
    write arrives with no sync command and the scheduled round an hour away."""
    laptop = connect_laptop(tmp_path, cloud, sync_upstream_seconds="3600", upstream_timeout_seconds="10")
    try:
        cloud.delta(cloud.agent("teammate"), "teammate: staging moved to the eu-west region")
        started = time.monotonic()
        while "teammate: staging moved to the eu-west region" not in laptop.contents():
            assert time.monotonic() - started < 20, "the team write did not reach the laptop"
            time.sleep(0.1)
    finally:
        laptop.stop()
