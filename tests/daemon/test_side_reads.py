"""The daemon ranks the common-terms part of a bounded BM25 query on a second connection in a
worker thread (state/side_reads.py, opened by Store.open_apart_pools), beside the request
connection's rare-terms parts: the same answers as on one connection, in less time on two
cores (bench/RESULTS.md, "a search's common-terms part beside the rest")."""

from __future__ import annotations

import pytest

from state import search as search_module
from state.config import Settings
from state.memories import NewMemory
from tests.conftest import seed_database, start_api

QUERIES = ("alpha zebra", "beta quokka alpha", "report alpha zebra beta", "alpha beta")


@pytest.fixture
def bounded(monkeypatch):
    """Budgets small enough for a store of tens of records to take the bounded path."""
    monkeypatch.setattr(search_module, "MAX_RANKED_MATCHES", 20)
    monkeypatch.setattr(search_module, "NEWEST_COMMON_MATCHES", 10)
    monkeypatch.setattr(search_module, "RARE_TERMS_BUDGET", 10)


async def _pages(api) -> list[list[str]]:
    pages = []
    for query in QUERIES:
        answer = await api.get(f"/api/agent/search?q={query.replace(' ', '%20')}&limit=10")
        pages.append([item["id"] for item in answer["items"]])
    return pages


async def test_a_search_ranks_its_common_part_beside_and_answers_as_on_one_connection(
    aiohttp_client, paths, migrated_database, bounded, monkeypatch
):
    seed_database(paths, migrated_database)
    api = await start_api(aiohttp_client, paths, settings=Settings(check_responses=True, vector_weight=0.0))
    texts = ["zebra crossing at the alpha office", "quokka alpha beta"]
    texts += [f"alpha beta report {i % 9}" for i in range(60)]  # equal scores: newest first
    with api.store.transaction():
        for text in texts:
            api.store.memories.create(
                NewMemory(namespace=api.agent["workspace_id"], kind="fact", content=text, source="test")
            )
    side = api.store.search.side_reads
    assert side is not None  # the daemon's default (database_read_connections = 4)
    beside: list[str] = []
    rows = side.rows
    monkeypatch.setattr(side, "rows", lambda sql, params: beside.append(sql) or rows(sql, params))
    with_side = await _pages(api)
    # "alpha beta" holds no rare term: its one part is ranked on the request connection.
    assert len(beside) == len(QUERIES) - 1 and all(len(page) == 10 for page in with_side)
    store = api.store
    await api.client.close()  # the app's cleanup closes the store with its side connection
    assert store.search.side_reads is None

    settings = Settings(check_responses=True, vector_weight=0.0, database_read_connections=0)
    alone = await start_api(aiohttp_client, paths, agent=(api.agent, api.agent_key), settings=settings)
    assert alone.store.search.side_reads is None
    assert await _pages(alone) == with_side
