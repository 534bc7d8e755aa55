"""Snapshots of every tab of the TUI, at 80x24 and 120x40, with an empty store and with data,
against the real daemon app and its real SQLite store over real HTTP.

The data is made the way agents and the owner make it, through the daemon's HTTP API (memory
deltas, Memory Stores documents and a lost optimistic-concurrency write, a startup-item plan, a
published update and a write it holds back, a suite and a persona distill job), never by
writing rows or by replacing the store with a fake.

How the snapshots stay the same on every run and machine, without hiding anything:

* **Ids** (``mem_…``, ``wsp_…``, ``pbind_…``, ``brief_…``, shown in namespaces, details, plan
  files and held-back writes) come from ``state.ids.new_id``. The test installs a sequential
  source through ``state.ids.use_id_source`` (the one seam added to ``state`` for this): per
  prefix, ``prefix + 12 hex of (T0 in ms + n) + 20 hex of n``, so ids keep their format and
  their creation order and are the same on every run. Everything that makes them is real.
* **Times** (created, updated, last run, next run, expiry, uptime, cache age) are written by
  the TUI through one object, ``tui.formats.Formats``, as ages ("just now", "in 10 min") and,
  in detail panes, as minutes (``2026-05-18 08:00 UTC``). The test passes ``PinnedFormats``:
  the real formatting code with a clock shifted so that the moment the daemon started reads as
  T0 = 2026-05-18 08:00 UTC. Ages are therefore the real differences (the data is seconds old,
  the jobs are due in their configured intervals); only absolute instants move to T0. Both are
  written in whole minutes, so a test may take up to a minute (from the daemon's start to the
  shot) without changing a character.
* **Jobs** run on their configured intervals; the daemon here is configured with a WAL
  checkpoint every hour instead of every 5 s, so no job runs while a snapshot is taken (a run
  would turn "not yet" into "just now" at a random moment). The test waits for the debounced
  startup-item refresh and the distill job before the TUI starts, so nothing changes under it.
* **The cursor** of the focused search box blinks on a timer; the test stops the blinking
  (``cursor_blink = False``) just before the shot, the one change made to the TUI's widgets.
* **The environment**: the daemon's address (a free port) and the temporary home directory
  are aliases in ``PinnedFormats``: shown as ``http://127.0.0.1:8517`` (the default port) and
  ``/home/you`` (written ``~`` in paths), as on a person's machine. The store's size depends on
  the SQLite build (this machine may use sqlean, another the standard module), so the status
  line shows it formatted as usual but of a fixed reference size; tests/tui/test_formats.py
  checks the real formatting of sizes, ages and paths.

Nothing is patched: not the store, not the daemon, not the system clock. The daemon app is
served on its own event loop in a thread (as the real daemon is its own process) and
``snap_compare`` runs the TUI on the main thread, as ``memorycloud tui`` does.

Regenerate after a deliberate change with ``pytest tests/tui/test_snapshots.py
--snapshot-update`` and look at the report or the SVGs (the Home tab lists the daemon's
scheduled jobs, so a new job changes its snapshots).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from daemon import keys
from state.config import Settings
from state.ids import use_id_source
from tests.tui.helpers import Daemon, serve_in_thread, settle
from tui.app import TABS, CompanionApp
from tui.client import DaemonClient
from tui.formats import Formats, system_clock

T0 = datetime(2026, 5, 18, 8, 0, tzinfo=UTC)
HOME = "/home/you"
DEFAULT_URL = "http://127.0.0.1:8517"
REFERENCE_STORE_BYTES = 4_700_000
SIZES = {"80x24": (80, 24), "120x40": (120, 40)}
# Background jobs at their defaults, except the WAL checkpoint (5 s): see the docstring.
QUIET = Settings(checkpoint_seconds=3600)


class SequentialIds:
    """A deterministic ``new_id`` source: per prefix, numbered in creation order."""

    def __init__(self, epoch: datetime) -> None:
        self.epoch_ms = int(epoch.timestamp() * 1000)
        self.counters: dict[str, itertools.count] = defaultdict(lambda: itertools.count(1))
        self.lock = threading.Lock()

    def __call__(self, prefix: str) -> str:
        with self.lock:
            n = next(self.counters[prefix])
        return f"{prefix}{self.epoch_ms + n:012x}{n:020x}"


class PinnedFormats(Formats):
    """The app's formatting with the clock shifted to T0 and this machine's values aliased."""

    def __init__(self, started: datetime, aliases: dict[str, str]) -> None:
        self.shift = T0 - started
        super().__init__(clock=lambda: system_clock() + self.shift, home=HOME, aliases=aliases)

    def instant(self, value: str | None) -> datetime | None:
        moment = super().instant(value)
        return moment + self.shift if moment else None

    @staticmethod
    def size(nbytes: int | float) -> str:
        return Formats.size(REFERENCE_STORE_BYTES)


async def seed(daemon: Daemon, home: Path) -> None:
    """What a day of two agents and their owner leaves behind, made through the API."""
    owner = daemon.http(daemon.owner_key)
    agent = daemon.http(daemon.new_agent("codex-laptop", "codex"))
    retired = daemon.http(daemon.new_agent("cursor-old", "cursor"))
    try:

        async def post(
            client: Any, path: str, body: dict[str, Any], status: int = 200, **kwargs: Any
        ) -> dict[str, Any]:
            response = await client.post(path, json=body, **kwargs)
            assert response.status_code == status, response.text
            return response.json()

        # A repository, its memory and a startup-item plan waiting for approval.
        repo = home / "projects" / "shop-web"
        repo.mkdir(parents=True)
        probe = await post(agent, "/api/agent/project/probe", {"repo_root": str(repo)})
        pack = await post(
            agent, "/api/agent/bootstrap/context", {"project_key": probe["project_binding"]["project_key"]}
        )
        receipt = {"X-AMP-Context-Receipt": pack["receipt_id"]}
        for summary in (
            "Use pnpm, not npm: the lockfile is pnpm-lock.yaml",
            "Checkout tests need STRIPE_TEST_KEY from the team vault",
        ):
            await post(agent, "/api/agent/memory-delta", {"summary": summary}, headers=receipt)
        await post(
            agent,
            "/api/agent/startup-items/install-plan",
            {"runtime": "generic", "project_binding_id": probe["project_binding_id"]},
        )

        # Memory Stores documents: one in Chinese with two versions, one with a lost write.
        base = "/api/v1/cloud/memory_stores"
        store_id = (await post(agent, base, {"name": "shop-web notes"}))["id"]
        plan = await post(
            agent, f"{base}/{store_id}/memories", {"path": "plans/前端.md", "content": "周五之前完成前端重构"}
        )
        await post(
            agent,
            f"{base}/{store_id}/memories/{plan['id']}",
            {"content": "前端重构改到下周一完成，先修复结账页面"},
        )
        deploy = await post(
            agent, f"{base}/{store_id}/memories", {"path": "deploy.md", "content": "Deploy on Tuesdays"}
        )
        await post(
            agent,
            f"{base}/{store_id}/memories/{deploy['id']}",
            {"content": "Deploy on Tuesdays and Thursdays"},
        )
        await post(
            retired,
            f"{base}/{store_id}/memories/{deploy['id']}",
            {"content": "Deploy any day after 14:00", "content_sha256": deploy["content_sha256"]},
            status=409,
        )

        # An update the owner publishes, and a write the gate holds back until it is acked.
        await post(
            owner,
            "/api/local/updates",
            {
                "title": "Re-pull the memory tool",
                "summary": "the brief events API changed",
                "severity": "required",
            },
        )
        brief = await post(agent, "/api/agent/memory-brief", {"task": "ship the checkout redesign"})
        await post(
            agent,
            f"/api/agent/memory-briefs/{brief['brief_id']}/events",
            {"summary": "冻结主分支，直到结账测试通过", "importance": 5},
            status=409,
        )

        # A persona suite distilled from a short document (a long job, finished here).
        suite = await post(
            owner,
            "/api/memories",
            {
                "title": "Careful reviewer",
                "summary": "how a careful reviewer reads a change",
                "license": "CC-BY-4.0",
            },
        )
        text = "\n\n".join(
            f"Rule {n}. Read the tests first, then the change; ask why before how." for n in range(1, 7)
        )
        await post(
            owner,
            f"/api/memories/{suite['slug']}/persona-distill",
            {"documents": [{"text": text, "source_path": "reviewer.md"}], "chunk_chars": 150},
        )
        await daemon.server.app[keys.SERVICES].distill.drain()

        agents = (await owner.get("/api/local/agents")).json()["agents"]
        retired_id = next(a["id"] for a in agents if a["name"] == "cursor-old")
        await post(owner, f"/api/local/agents/{retired_id}/revoke", {})
    finally:
        for client in (owner, agent, retired):
            await client.aclose()
    await asyncio.sleep(0.6)  # the startup-item refresh runs 0.5 s after memory changes


@pytest.fixture
def pinned_daemon(paths, tmp_path):
    """A quiet daemon with deterministic ids, and the Formats that pins this run's values."""
    started = system_clock()
    with use_id_source(SequentialIds(T0)), serve_in_thread(paths, QUIET) as served:
        home = tmp_path / "you"
        home.mkdir()
        formats = PinnedFormats(started, {served.daemon.url: DEFAULT_URL, str(home): HOME})
        yield served, home, formats


async def show(pilot, tab: str, data: bool) -> None:
    """Open the tab (its key, as a person would) and, with data, select what shows most."""
    app = pilot.app
    await settle(pilot, app)
    await pilot.press(str([t for t, _, _ in TABS].index(tab) + 1))
    await settle(pilot, app)
    if tab == "memories" and data:
        results = app.query_one("#results")
        results.focus()
        titles = [str(results.get_row_at(i)[1]) for i in range(results.row_count)]
        row = next(i for i, title in enumerate(titles) if "前端" in title)
        await pilot.press(*["down"] * row, "h")
        await settle(pilot, app)
    for box in app.query(Input):  # a blinking cursor is on or off at the moment of the shot
        box.cursor_blink = False
    await pilot.pause(0.1)


@pytest.mark.parametrize("size", SIZES, ids=SIZES)
@pytest.mark.parametrize("data", [False, True], ids=["empty", "data"])
@pytest.mark.parametrize("tab", [tab for tab, _, _ in TABS])
def test_tab(snap_compare, pinned_daemon, tab: str, data: bool, size: str) -> None:
    served, home, formats = pinned_daemon
    if data:
        served.run(lambda daemon: seed(daemon, home))
    app = CompanionApp(DaemonClient(served.daemon.url, served.daemon.owner_key), formats=formats)

    async def run_before(pilot) -> None:
        await show(pilot, tab, data)

    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)
