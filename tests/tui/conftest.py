"""Fixtures of the TUI tests: the real daemon app with one agent."""

from __future__ import annotations

import pytest

from tests.tui.helpers import serve


@pytest.fixture
async def served(paths):
    """The daemon with one agent: (server, url, owner key, the agent's HTTP client, its key)."""
    async with serve(paths) as daemon:
        agent_key = daemon.new_agent("codex-1")
        agent_http = daemon.http(agent_key)
        yield daemon.server, daemon.url, daemon.owner_key, agent_http, agent_key
        await agent_http.aclose()
