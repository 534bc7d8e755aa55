"""With an embedder that blocks (an embedding server, a model), a search request's query
vector is made in a worker thread before its handler runs (Endpoint.search_text,
MemorySearch.prepare_query_vectors): other requests are answered meanwhile, and the handler's
search uses that vector instead of asking the embedder again on the event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from state.config import Settings
from state.embedders import EndpointEmbedder
from tests.conftest import start_api
from tests.state.test_search import EmbeddingServer

TASK = "move the WAL checkpoint off the request path"


@pytest.fixture
def embedding_server():
    server = EmbeddingServer()
    yield server
    server.close()


@pytest.fixture
async def api(aiohttp_client, paths, embedding_server):
    settings = Settings(
        check_responses=True, embedder=f"openai:tiny-embed@{embedding_server.url}", vector_mode="always"
    )
    api = await start_api(aiohttp_client, paths, settings=settings)
    pack = await api.bootstrap()
    await api.delta(pack["receipt"]["receipt_id"], summary="WAL checkpoint runs every 5 minutes")
    await api.post(
        "/add_messages/",
        {"user_id": "ana", "messages": [{"role": "user", "content": "the WAL checkpoint is too slow"}]},
    )
    return api


def _asked(server: EmbeddingServer, text: str) -> int:
    return sum(1 for _, body in server.requests if body["input"] == text)


async def test_other_requests_are_answered_while_a_search_waits_for_the_embedder(api, embedding_server):
    embedding_server.delay = 1.0  # under the query timeout (2 s): the vector is used
    search = asyncio.ensure_future(api.get("/api/agent/search?q=WAL%20checkpoint"))
    await asyncio.sleep(0.2)  # the search is waiting for its vector now
    health = asyncio.ensure_future(api.client.get("/healthz"))
    done, _ = await asyncio.wait({search, health}, return_when=asyncio.FIRST_COMPLETED)
    # On the event loop, the embedder's call would hold /healthz until the search was done.
    assert done == {health}
    assert (await health).status == 200
    answer = await search
    assert "WAL checkpoint" in answer["items"][0]["content"]
    assert _asked(embedding_server, "WAL checkpoint") == 1


@pytest.mark.parametrize(
    ("method", "path", "body", "text"),
    [
        ("GET", "/api/agent/search?q=%20checkpoint%20", None, "checkpoint"),
        ("POST", "/search_memory/", {"user_id": "ana", "query": "slow checkpoint"}, "slow checkpoint"),
        ("POST", "/search_user_history_summary/", {"user_id": "ana", "query": "checkpoint"}, "checkpoint"),
        ("GET", "/api/local/memories?q=checkpoint%20runs", None, "checkpoint runs"),
        ("GET", "/api/workspaces/{workspace}/memory/query?q=WAL", None, "WAL"),
        ("POST", "/api/agent/memory-brief", {"task": TASK}, f"{TASK}\n"),
    ],
)
async def test_each_search_embeds_its_query_once_off_the_event_loop(
    api, embedding_server, monkeypatch, method, path, body, text
):
    """search_text names exactly what the handler searches: a different text would be
    embedded again on the event loop, a second request to the embedder."""
    threads: list[threading.Thread] = []
    embed_query = EndpointEmbedder.embed_query

    def watched(self, query, frequencies):
        if query == text:
            threads.append(threading.current_thread())
        return embed_query(self, query, frequencies)

    monkeypatch.setattr(EndpointEmbedder, "embed_query", watched)
    key = api.owner_key if path.startswith("/api/local/") else None
    if "{workspace}" in path:
        path = path.format(workspace=(await api.bootstrap())["workspace_id"])
    if method == "GET":
        await api.get(path, key=key)
    else:
        await api.post(path, body, key=key)
    assert _asked(embedding_server, text) == 1
    assert threads and threading.main_thread() not in threads


# Every search of the store's index in the domain services, and the endpoints that reach it
# with a text of the request (or, for the suite installer, the suite's facts and title).
SEARCHES = {
    "daemon/runtime/search.py": ["/api/agent/search"],
    "daemon/runtime/briefs.py": ["/api/agent/memory-brief"],
    "daemon/runtime/mem1.py": ["/search_memory/", "/search_user_history_summary/"],
    "daemon/runtime/memory_admin.py": ["/api/local/memories"],
    "daemon/runtime/workspace_reads.py": ["/api/workspaces/{workspace_id}/memory/query"],
    "daemon/runtime/distill.py": ["/api/catalog/{slug}/search"],
    "daemon/runtime/install_suite.py": ["/api/agent/open-memories/install"],
}


def test_every_endpoint_that_searches_names_its_search_text():
    """A new search in a service fails here until its endpoint declares search_text."""
    from pathlib import Path

    from daemon.api import all_endpoints

    root = Path(__file__).resolve().parents[2]
    searching = {
        str(path.relative_to(root))
        for path in sorted((root / "daemon").rglob("*.py"))
        if ".search.search(" in path.read_text()
    }
    assert searching == set(SEARCHES)
    declared = {e.path for e in all_endpoints() if e.search_text is not None}
    assert declared == {path for paths in SEARCHES.values() for path in paths}


async def test_a_suite_install_embeds_each_fact_it_checks_off_the_event_loop(api, monkeypatch):
    """The installer searches every fact it merges (for a contradiction) and the suite's title
    (its retrieval test), inside its write: their vectors are made first, in a worker thread."""
    memory_md = "# Lin\n\n- Lin grades essays on Sunday evenings\n- Lin answers email before nine\n"
    suite = await api.post(
        "/api/memories", {"title": "Teacher Lin", "summary": "how Lin works", "memory_md": memory_md}
    )
    asked: list[tuple[str, threading.Thread]] = []
    embed_query = EndpointEmbedder.embed_query

    def watched(self, query, frequencies):
        asked.append((query, threading.current_thread()))
        return embed_query(self, query, frequencies)

    monkeypatch.setattr(EndpointEmbedder, "embed_query", watched)
    installed = await api.post("/api/agent/open-memories/install", {"slug": suite["slug"]})
    assert installed["installed_open_memory"]["retrieval_test"]["passed"]
    texts = [text for text, _ in asked]
    for text in ("Lin grades essays on Sunday evenings", "Lin answers email before nine", "Teacher Lin"):
        assert texts.count(text) == 1, texts
    assert threading.main_thread() not in {thread for _, thread in asked}


async def test_with_the_hashing_embedder_no_search_text_is_read(aiohttp_client, paths, monkeypatch):
    """The default embedder makes query vectors where the search runs: the wrapper does not read
    an endpoint's search texts (for an install, the suite's facts would be read twice)."""
    from daemon.runtime.install_suite import SuiteInstaller

    def unread(self, identity, body):
        raise AssertionError("search texts read for an inline embedder")

    monkeypatch.setattr(SuiteInstaller, "search_texts", unread)
    api = await start_api(aiohttp_client, paths)
    suite = await api.post("/api/memories", {"title": "Teacher Lin", "summary": "how Lin works"})
    installed = await api.post("/api/agent/open-memories/install", {"slug": suite["slug"]})
    assert installed["installed_open_memory"]["retrieval_test"]["passed"]
