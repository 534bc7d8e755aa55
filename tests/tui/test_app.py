"""The TUI against the real daemon app over real HTTP, driven by Textual's Pilot: each
person's action end to end."""

from __future__ import annotations

import httpx
import pytest
from textual.widgets import DataTable, Markdown, Static, TabbedContent

from daemon import keys
from tests.tui.helpers import settle
from tui.app import CompanionApp
from tui.client import DaemonClient
from tui.modals import Confirm


async def confirm(pilot, app) -> None:
    await settle(pilot, app)
    assert isinstance(app.screen, Confirm)
    await pilot.press("y")
    await settle(pilot, app)


async def open_tab(pilot, app, key: str, tab: str) -> None:
    await pilot.press(key)
    await settle(pilot, app)
    assert app.query_one(TabbedContent).active == f"tab-{tab}"


async def test_home_shows_status_and_inbox(served):
    server, url, owner_key, _, _ = served
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        status = str(app.query_one("#status", Static).render())
        assert "Daemon running" in status and "Inbox: all clear" in status
        jobs = app.query_one("#jobs", DataTable)
        scheduled = [job["name"] for job in (await app.client.status())["jobs"]]
        assert [jobs.get_row_at(i)[0] for i in range(jobs.row_count)] == scheduled
        assert "wal_checkpoint" in scheduled


async def test_search_history_and_revert(served):
    server, url, owner_key, agent_http, _ = served
    pack = (await agent_http.post("/api/agent/bootstrap/context", json={"project_key": "p"})).json()
    delta = (
        await agent_http.post(
            "/api/agent/memory-delta",
            headers={"X-AMP-Context-Receipt": pack["receipt_id"]},
            json={"summary": "周五之前完成前端重构"},
        )
    ).json()
    memory_id = delta["delta"]["memory_id"]
    store = server.app[keys.STORE]
    with store.transaction():
        store.memories.update(memory_id, content="改到下周一")
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_tab(pilot, app, "2", "memories")
        await pilot.press(*"前端")
        await settle(pilot, app)
        results = app.query_one("#results", DataTable)
        assert results.row_count == 1
        results.focus()
        await pilot.press("h")
        await settle(pilot, app)
        versions = app.query_one("#versions", DataTable)
        assert versions.row_count == 2
        versions.focus()
        await pilot.press("up")  # version 1
        await pilot.press("f")
        await settle(pilot, app)
        assert "改到下周一" in app.query_one("#detail", Markdown).source
        await pilot.press("m", "down", "f")  # any two versions: marked 1 against 2
        await settle(pilot, app)
        assert "-周五之前完成前端重构" in app.query_one("#detail", Markdown).source
        app.action_reload()  # the list reloads every 3 s: the diff being read stays
        await settle(pilot, app)
        assert app.query_one("#detail", Markdown).source.startswith("```diff")
        await pilot.press("up")
        await pilot.press("v")
        await confirm(pilot, app)
    memory = store.memories.get(memory_id)
    assert memory["version"] == 3 and memory["content"] == "周五之前完成前端重构"


async def test_approving_a_plan_writes_the_files(served, tmp_path):
    server, url, owner_key, agent_http, _ = served
    repo = tmp_path / "repo"
    repo.mkdir()
    probe = (await agent_http.post("/api/agent/project/probe", json={"repo_root": str(repo)})).json()
    await agent_http.post(
        "/api/agent/startup-items/install-plan",
        json={"runtime": "generic", "project_binding_id": probe["project_binding_id"]},
    )
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_tab(pilot, app, "3", "setup")
        assert "AGENTS.md" in app.query_one("#plan", Markdown).source
        app.query_one("#plans", DataTable).focus()
        assert "fallback cache: none yet" in app.query_one("#plan", Markdown).source
        await pilot.press("a")
        await confirm(pilot, app)
        assert "fallback cache: <1 min old" in app.query_one("#plan", Markdown).source
        assert app.query_one("#pane-setup").loading is False  # the spinner is gone again
    assert "memorycloud:begin startup-item:generic" in (repo / "AGENTS.md").read_text()
    assert (repo / ".amp" / "launcher.py").exists()


async def test_resolving_a_conflict_changes_the_store(served):
    server, url, owner_key, agent_http, _ = served
    base = "/api/v1/cloud/memory_stores"
    store_id = (await agent_http.post(base, json={"name": "s"})).json()["id"]
    memory = (
        await agent_http.post(f"{base}/{store_id}/memories", json={"path": "a.md", "content": "base"})
    ).json()
    await agent_http.post(f"{base}/{store_id}/memories/{memory['id']}", json={"content": "winner"})
    await agent_http.post(
        f"{base}/{store_id}/memories/{memory['id']}",
        json={"content": "loser", "content_sha256": memory["content_sha256"]},
    )
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_tab(pilot, app, "4", "conflicts")
        assert "loser" in str(app.query_one("#incoming", Static).render())
        app.query_one("#conflicts", DataTable).focus()
        await pilot.press("t")
        await confirm(pilot, app)
        assert app.query_one("#conflicts", DataTable).row_count == 0
    assert server.app[keys.STORE].memories.get(memory["id"])["content"] == "loser"


async def test_ack_then_resume_replays_the_intent(served):
    server, url, owner_key, agent_http, _ = served
    owner = httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {owner_key}"})
    await owner.post("/api/local/updates", json={"title": "t", "summary": "s", "severity": "required"})
    await owner.aclose()
    brief = (await agent_http.post("/api/agent/memory-brief", json={"task": "ship"})).json()
    blocked = await agent_http.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        json={"summary": "冻结主分支", "importance": 5},
    )
    assert blocked.status_code == 409
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_tab(pilot, app, "5", "intents")
        assert "冻结主分支" in str(app.query_one("#write", Static).render())
        app.query_one("#intents", DataTable).focus()
        await pilot.press("a")
        await confirm(pilot, app)
        await pilot.press("u")
        await settle(pilot, app)
    store = server.app[keys.STORE]
    events = store.amp.events(brief["brief_id"])
    assert [e["summary"] for e in events] == ["冻结主分支"]


async def test_revoke_stops_the_key_and_add_shows_a_new_one(served):
    server, url, owner_key, agent_http, agent_key = served
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_tab(pilot, app, "6", "agents")
        table = app.query_one("#agents", DataTable)
        assert table.row_count == 1
        table.focus()
        await pilot.press("v")
        await confirm(pilot, app)
        await pilot.press("n")
        await settle(pilot, app)
        await pilot.press(*"cursor-1", "tab", *"cursor", "enter")
        await settle(pilot, app)
        secret = str(app.screen.query_one("#secret", Static).render())
        assert secret.startswith("mca_")
    assert (await agent_http.get("/api/me")).status_code == 401
    fresh = httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {secret}"})
    assert (await fresh.get("/api/me")).json()["user"]["handle"] == "cursor-1"
    await fresh.aclose()


async def test_every_action_is_in_the_command_palette(served):
    server, url, owner_key, _, _ = served
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_tab(pilot, app, "3", "setup")
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Go to Memories", "Go to Agents", "Reload", "Approve", "Reject", "Remove installed"} <= titles
        await open_tab(pilot, app, "6", "agents")
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"New agent", "Revoke"} <= titles and "Approve" not in titles


async def test_unreachable_daemon_is_shown_not_crashed():
    app = CompanionApp(DaemonClient("http://127.0.0.1:9", "mco_nothing"))
    async with app.run_test() as pilot:
        await settle(pilot, app)
        status = str(app.query_one("#status", Static).render())
        assert "Daemon unreachable" in status and "memorycloud daemon start" in status


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_snapshot_unreachable(snap_compare, size):
    app = CompanionApp(DaemonClient("http://127.0.0.1:9", "mco_nothing"))

    async def settle_only(pilot):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.1)
        await pilot.app.workers.wait_for_complete()

    assert snap_compare(app, terminal_size=size, run_before=settle_only)
