"""Fixtures of the TUI tests: the real daemon app with one agent."""

from __future__ import annotations

import os

import pytest

# Snapshots are of the settled screen: with animations on, a loaded machine caught the tab
# underline mid-slide (tests/tui/test_app.py::test_snapshot_unreachable failed twice under
# load 9, same text, different underline); read by Textual when the app starts.
os.environ["TEXTUAL_ANIMATIONS"] = "none"

from tests.tui.helpers import serve


@pytest.fixture
async def served(paths):
    """The daemon with one agent: (server, url, owner key, the agent's HTTP client, its key)."""
    async with serve(paths) as daemon:
        agent_key = daemon.new_agent("codex-1")
        agent_http = daemon.http(agent_key)
        yield daemon.server, daemon.url, daemon.owner_key, agent_http, agent_key
        await agent_http.aclose()
