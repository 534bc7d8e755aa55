"""An embedder that fails (its model server is down) costs no write: every dialect's write is
kept and searchable by its words, search answers instead of failing, and the vectors are added
once the embedder works again, by the backfill job or after a restart."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from daemon import keys
from daemon.app import create_app
from state import embedders
from state.config import Settings
from state.doctor import check_indexes
from state.paths import Paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from state.store import Store
from tests.conftest import Api

BASE = "/api/v1/cloud/memory_stores"


class FlakyEmbedder(embedders.HashingEmbedder):
    """The offline embedder behind a switch that makes it fail like an unreachable server."""

    failing = True

    def embed(self, text: str) -> list[float]:
        if FlakyEmbedder.failing:
            raise ConnectionError("embedding server at 127.0.0.1:11434 refused the connection")
        return super().embed(text)


@pytest.fixture
def flaky(monkeypatch: pytest.MonkeyPatch) -> type[FlakyEmbedder]:
    monkeypatch.setitem(embedders._FACTORIES, "flaky", FlakyEmbedder)
    FlakyEmbedder.failing = True
    return FlakyEmbedder


@pytest.fixture
async def flaky_api(aiohttp_client, paths: Paths, flaky) -> AsyncIterator[Api]:
    app = create_app(Settings(embedder="flaky"), paths)
    client = await aiohttp_client(app)
    store = app[keys.STORE]
    with store.transaction():
        agent, agent_key = store.identities.create_agent("test-agent", "codex")
    yield Api(client, open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET), agent_key, agent)


async def write_everywhere(api: Api) -> dict[str, Any]:
    pack = await api.bootstrap()
    delta = await api.delta(pack["receipt_id"], summary="lighthouse keepers log the weather")
    store_id = (await api.post(BASE, {"name": "notes"}))["id"]
    document = await api.post(
        f"{BASE}/{store_id}/memories", {"path": "harbor.md", "content": "harbor pilots check the tides"}
    )
    await api.post(
        "/add_messages/",
        {"user_id": "u", "scope_id": "s", "messages": [{"role": "user", "content": "ferries run at dawn"}]},
    )
    return {
        "workspace": pack["workspace_id"],
        "memory": delta["delta"]["memory_id"],
        "store": store_id,
        "document": document["id"],
    }


async def test_writes_are_kept_while_the_embedder_fails(flaky_api, flaky):
    api = flaky_api
    written = await write_everywhere(api)
    reports = check_indexes(api.store.conn)
    assert reports["fts"].ok
    assert reports["vectors"].describe()["missing"] == reports["fts"].expected > 0
    # Words still find them; a query that would consult the vectors degrades to words.
    found = await api.get(f"/api/workspaces/{written['workspace']}/memory/query?q=lighthouse")
    assert [item["id"] for item in found["items"]] == [written["memory"]]
    assert (await api.get(f"/api/agent/search?q=tides&namespace={written['store']}"))["items"]
    await api.get(f"/api/agent/search?q=zzyzx&namespace={written['store']}")  # words find none: 200

    flaky.failing = False
    job = api.client.app[keys.SCHEDULER].get_job("backfill_vectors")
    board = api.client.app[keys.JOBS]
    await board.run(*job.args)
    assert board.states["backfill_vectors"].last_result.startswith("ok: 4 vectors added"), board.states[
        "backfill_vectors"
    ].last_result
    assert all(report.ok for report in check_indexes(api.store.conn).values())


async def test_vectors_missing_after_a_restart_are_found_again(flaky_api, flaky, paths):
    await write_everywhere(flaky_api)
    flaky.failing = False
    reopened = Store.open(paths.database, Settings(embedder="flaky"))
    try:
        assert len(reopened.search.pending_vectors) == 4
        assert reopened.search.backfill() == 4
        assert all(report.ok for report in check_indexes(reopened.conn).values())
    finally:
        reopened.close()
