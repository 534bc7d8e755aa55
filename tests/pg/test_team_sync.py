"""A team of local daemons syncing through two cloud processes on one PostgreSQL (issue #18):
all real processes. Each laptop is paired with a different team-server process; what one
laptop's agent writes reaches the other laptop exactly once, and the server holds it once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.e2e.test_upstream import Node, sync


def _laptop(home: Path, server: Node, name: str) -> Node:
    """A person's daemon, paired with ``server`` (syncs when told to)."""
    laptop = Node(home, settings={"upstream_timeout_seconds": "10", "sync_upstream_seconds": "3600"})
    code = server.cli("agent", "pair", "--name", name, "--runtime", "memorycloud_companion")
    status = laptop.cli("upstream", "connect", server.url, "--pairing-code", code["pairing_code"])
    assert status["connected"] and status["sync_extension"], status
    return laptop


@pytest.fixture
def team(tmp_path: Path, pg_url: str) -> Iterator[tuple[Node, Node, Node, Node]]:
    settings = {"role": "cloud", "database_url": pg_url}
    servers = [Node(tmp_path / f"server-{n}", role="cloud", settings=settings) for n in (1, 2)]
    laptops = [
        _laptop(tmp_path / name, server, name) for name, server in zip(("alice", "bob"), servers, strict=True)
    ]
    yield servers[0], servers[1], laptops[0], laptops[1]
    for node in (*laptops, *servers):
        node.stop()


def _server_contents(pg_url: str) -> list[str]:
    with psycopg.connect(pg_url) as conn:
        return [r[0] for r in conn.execute("select content from memory_records where deleted_at is null")]


def test_laptops_paired_with_different_server_processes_share_one_workspace(team, pg_url: str) -> None:
    _first, _second, alice, bob = team
    alice_agent, bob_agent = alice.agent("alice-codex"), bob.agent("bob-claude")
    alice.delta(alice_agent, "alice: the deploy key rotates on Fridays")
    bob.delta(bob_agent, "bob: staging runs on the arm64 pool now")
    for laptop in (alice, bob, alice, bob):
        sync(laptop)
    assert alice.contents().count("bob: staging runs on the arm64 pool now") == 1
    assert bob.contents().count("alice: the deploy key rotates on Fridays") == 1
    on_server = _server_contents(pg_url)
    assert on_server.count("alice: the deploy key rotates on Fridays") == 1
    assert on_server.count("bob: staging runs on the arm64 pool now") == 1
    # Another round moves nothing twice.
    sync(alice)
    sync(bob)
    assert alice.contents().count("bob: staging runs on the arm64 pool now") == 1
    assert bob.contents().count("alice: the deploy key rotates on Fridays") == 1


def test_a_write_reaches_the_other_laptop_as_it_happens(team) -> None:
    """No sync command and the scheduled round an hour away: alice's daemon pushes after its
    local write (to server 1), server 2 hears the commit (LISTEN/NOTIFY) and answers bob's
    waiting pull, and bob's daemon pulls."""
    _first, _second, alice, bob = team
    alice.delta(alice.agent("alice-codex"), "alice: the release freeze starts Thursday")
    started = time.monotonic()
    while "alice: the release freeze starts Thursday" not in bob.contents():
        assert time.monotonic() - started < 20, "the write did not reach bob's laptop"
        time.sleep(0.1)
    assert bob.contents().count("alice: the release freeze starts Thursday") == 1
