"""Group commit: the daemon's writes of one event-loop turn share one COMMIT
(state/group_commit.py).

What must still hold, each on the real store behind the real aiohttp app:

* writes that arrive together are committed together (one COMMIT), and none is answered
  before that COMMIT: an answered write is in the file, where a restarted daemon reads it;
* a request that fails inside the group rolls back only its own work;
* a COMMIT that fails fails every request of the group, and none of them left a row.

Requests that arrive in one event-loop turn are sent over raw sockets, all bytes written
before the server's loop runs again: the next poll sees them all, so their handlers run in
one turn and form one group (asserted through the group's counters).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from daemon import keys
from daemon.app import create_app
from state.config import Settings
from state.db import connect
from state.group_commit import GroupCommit, group_of
from state.paths import Paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from tests.conftest import Api

DELTA = "/api/agent/memory-delta"


async def posts_in_one_turn(
    api: Api, path: str, bodies: list[dict[str, Any]], headers: dict[str, str]
) -> list[tuple[int, dict[str, Any]]]:
    """POST each body on a connection of its own, every request on the wire before any is read."""
    server = api.client.server
    connections = [await asyncio.open_connection(server.host, server.port) for _ in bodies]
    for (_, writer), body in zip(connections, bodies, strict=True):
        data = json.dumps(body).encode()
        head = "".join(
            f"{name}: {value}\r\n"
            for name, value in {
                "Host": f"127.0.0.1:{server.port}",
                "Content-Type": "application/json",
                "Content-Length": str(len(data)),
                "Connection": "close",
                **headers,
            }.items()
        )
        writer.write(f"POST {path} HTTP/1.1\r\n{head}\r\n".encode() + data)
    answers = []
    for reader, writer in connections:
        raw = await reader.read()
        status_line, _, rest = raw.partition(b"\r\n")
        answers.append((int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2])))
        writer.close()
    return answers


def database(api: Api) -> Path:
    return Path(api.store.conn.execute("pragma database_list").fetchone()[2])


def committed_memories(api: Api, needle: str) -> set[str]:
    """Ids of the memories whose content holds ``needle``, as a restarted daemon would see
    them: through a connection of its own, which reads only committed transactions."""
    other = connect(database(api), readonly=True)
    try:
        return {
            row[0]
            for row in other.execute("select id from memory_records where instr(content, ?) > 0", (needle,))
        }
    finally:
        other.close()


def group(api: Api) -> GroupCommit:
    found = group_of(api.store.conn)
    assert found is not None, "the daemon's request connection is not in group mode"
    return found


async def receipt_headers(api: Api) -> dict[str, str]:
    receipt = (await api.bootstrap())["receipt_id"]
    return {**api.auth(), "X-AMP-Context-Receipt": receipt}


async def test_writes_of_one_turn_share_one_commit_and_are_answered_after_it(api):
    headers = await receipt_headers(api)
    counters = group(api)
    groups, units = counters.groups, counters.units
    answers = await posts_in_one_turn(
        api, DELTA, [{"summary": f"grouped write {i}"} for i in range(8)], headers
    )
    assert [status for status, _ in answers] == [200] * 8, answers
    assert (counters.groups - groups, counters.units - units) == (1, 8)
    answered = {data["delta"]["memory_id"] for _, data in answers}
    assert committed_memories(api, "grouped write") == answered
    assert not api.store.conn.in_transaction


@pytest.fixture
async def watched(aiohttp_client, paths: Paths) -> AsyncIterator[tuple[Api, list[str]]]:
    """The daemon app with a witness at the moment each answer starts: any transaction still
    open on the request connection then (requests are sent one at a time here) would hold
    the writes of the request being answered, uncommitted. The witness lists such answers."""
    app = create_app(Settings(), paths)
    early: list[str] = []

    async def witness(request: web.Request, response: web.StreamResponse) -> None:
        if request.app[keys.STORE].conn.in_transaction:
            early.append(f"{request.method} {request.path} -> {response.status}")

    app.on_response_prepare.append(witness)
    client = await aiohttp_client(app)
    store = app[keys.STORE]
    with store.transaction():
        agent, agent_key = store.identities.create_agent("test-agent", "codex")
    await asyncio.sleep(0)  # that group commits
    owner_key = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
    yield Api(client, owner_key, agent_key, agent), early


async def test_no_answer_of_any_dialect_starts_before_its_writes_are_committed(watched):
    api, early = watched
    headers = await receipt_headers(api)
    await api.post(DELTA, {"summary": "an AMP delta"}, headers=headers)
    stores = await api.post("/api/v1/cloud/memory_stores", {"name": "witnessed"})
    await api.post(
        f"/api/v1/cloud/memory_stores/{stores['id']}/memories",
        {"path": "a/b.md", "content": "a stored document"},
    )
    await api.post(
        "/add_messages/",
        {"user_id": "u", "scope_id": "s", "messages": [{"role": "user", "content": "a mem1 message"}]},
    )
    # An error answer after a write: the conflict a second create of one path gives.
    await api.post(
        f"/api/v1/cloud/memory_stores/{stores['id']}/memories",
        {"path": "a/b.md", "content": "again"},
        status=409,
    )
    assert early == []
    assert committed_memories(api, "an AMP delta") and committed_memories(api, "a stored document")


# The first write of a group runs without a SAVEPOINT of its own (state/group_commit.py):
# its failure must still leave the others of its turn standing.
@pytest.mark.parametrize("position", [0, 3, 7])
async def test_a_failing_request_does_not_undo_the_others_of_its_group(api, position):
    headers = await receipt_headers(api)
    # A real failure in the middle of one request's writes: its memory, version, index
    # entries are written when SQLite aborts the insert of its delta log row.
    api.store.conn.execute(
        "create trigger poison after insert on memory_deltas when instr(new.summary, 'POISON')"
        " begin select raise(abort, 'poisoned write'); end"
    )
    counters = group(api)
    groups, units = counters.groups, counters.units
    bodies = [{"summary": f"neighbour write {i}"} for i in range(7)]
    bodies.insert(position, {"summary": "POISON neighbour write"})
    answers = await posts_in_one_turn(api, DELTA, bodies, headers)
    statuses = [status for status, _ in answers]
    assert statuses == [200] * position + [500] + [200] * (7 - position), answers
    assert counters.groups - groups == 1 and counters.units - units == 7
    assert len(committed_memories(api, "neighbour write")) == 7
    assert committed_memories(api, "POISON") == set()
    rows = api.store.conn.execute("select count(*) from memory_deltas where instr(summary, 'POISON')")
    assert rows.fetchone()[0] == 0


async def test_a_failed_commit_fails_every_request_of_its_group_and_keeps_nothing(api):
    headers = await receipt_headers(api)
    before = committed_memories(api, "")
    # A deferred foreign key makes the COMMIT itself fail, as a full disk or an I/O error
    # can: one request's insert leaves a dangling reference that only COMMIT checks.
    api.store.conn.executescript(
        "create table gc_parent (id integer primary key);"
        "create table gc_child (parent_id integer references gc_parent(id)"
        " deferrable initially deferred);"
        "create trigger dangling after insert on memory_records when instr(new.content, 'DANGLING')"
        " begin insert into gc_child (parent_id) values (42); end;"
    )
    bodies = [{"summary": f"doomed write {i}"} for i in range(7)] + [{"summary": "DANGLING write"}]
    answers = await posts_in_one_turn(api, DELTA, bodies, headers)
    assert [status for status, _ in answers] == [500] * 8, answers
    assert all(data["error"]["type"] == "internal_error" for _, data in answers)
    assert committed_memories(api, "") == before  # nothing of the group, in the file
    assert api.store.conn.execute("select count(*) from gc_child").fetchone()[0] == 0
    assert not api.store.conn.in_transaction  # no dangling transaction swallows later writes
    # The next write commits on its own and is answered.
    data = await api.post(DELTA, {"summary": "after the failed commit"}, headers=headers)
    assert committed_memories(api, "after the failed commit") == {data["delta"]["memory_id"]}
