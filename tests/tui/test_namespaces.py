"""Namespaces by what they are (issue #15): the memory list, its detail and filter, conflicts
and held-back writes name the workspace and project, the Memory Store, the agent-memory1.0
user and scope, against the real daemon app over real HTTP; the raw id stays in the detail,
and a namespace without a name is shown by its id."""

from __future__ import annotations

import httpx
from textual.widgets import DataTable, Markdown, Select, Static

from tests.tui.helpers import settle
from tui.app import CompanionApp
from tui.client import DaemonClient
from tui.namespaces import Namespaces


async def seed(agent_http: httpx.AsyncClient, owner_key: str, url: str) -> dict[str, str]:
    """One memory per dialect, a lost Memory Store write and a held-back brief event."""
    pack = (await agent_http.post("/api/agent/bootstrap/context", json={"project_key": "shop-web"})).json()
    await agent_http.post(
        "/api/agent/memory-delta",
        headers={"X-AMP-Context-Receipt": pack["receipt_id"]},
        json={"summary": "Use pnpm, not npm"},
    )
    base = "/api/v1/cloud/memory_stores"
    store_id = (await agent_http.post(base, json={"name": "shop-web notes"})).json()["id"]
    memory = (
        await agent_http.post(
            f"{base}/{store_id}/memories", json={"path": "deploy.md", "content": "Deploy on Tuesdays"}
        )
    ).json()
    await agent_http.post(f"{base}/{store_id}/memories/{memory['id']}", json={"content": "and Thursdays"})
    lost = await agent_http.post(
        f"{base}/{store_id}/memories/{memory['id']}",
        json={"content": "any day", "content_sha256": memory["content_sha256"]},
    )
    assert lost.status_code == 409
    await agent_http.post(
        "/add_messages/",
        json={
            "user_id": "alice",
            "scope_id": "work",
            "messages": [{"role": "user", "content": "I prefer short answers"}],
        },
    )
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {owner_key}"}) as owner:
        await owner.post("/api/local/updates", json={"title": "t", "summary": "s", "severity": "required"})
    brief = (await agent_http.post("/api/agent/memory-brief", json={"task": "ship"})).json()
    blocked = await agent_http.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        json={"summary": "freeze main", "importance": 5},
    )
    assert blocked.status_code == 409
    return {"workspace": pack["workspace_id"], "store": store_id}


def column(table: DataTable, index: int) -> list[str]:
    return [str(table.get_row_at(i)[index]) for i in range(table.row_count)]


async def test_memories_show_namespaces_by_name_with_the_id_in_the_detail(served):
    _, url, owner_key, agent_http, _ = served
    ids = await seed(agent_http, owner_key, url)
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        await settle(pilot, app)
        results = app.query_one("#results", DataTable)
        shown = column(results, 2)
        assert {"Personal · shop-web", "store shop-web notes", "mem1 alice/work"} <= set(shown)
        assert not [cell for cell in shown if cell.startswith(("wsp_", "memstore_", "mem1:"))]
        results.focus()
        await pilot.press(*["down"] * shown.index("store shop-web notes"))
        await settle(pilot, app)
        detail = app.query_one("#detail", Markdown).source
        assert f"Memory Store **shop-web notes** (`{ids['store']}`)" in detail
        # The filter offers the names; picking one shows that namespace's memories only.
        select = app.query_one("#namespace", Select)
        assert ("store shop-web notes", ids["store"]) in app.query_one("#pane-memories").namespace_options
        select.value = ids["store"]
        await settle(pilot, app)
        assert set(column(results, 2)) == {"store shop-web notes"}


async def test_conflicts_and_held_back_writes_name_their_namespace(served):
    _, url, owner_key, agent_http, _ = served
    ids = await seed(agent_http, owner_key, url)
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("4")
        await settle(pilot, app)
        assert column(app.query_one("#conflicts", DataTable), 1) == ["store shop-web notes: deploy.md"]
        await pilot.press("5")
        await settle(pilot, app)
        write = str(app.query_one("#write", Static).render())
        assert f"into Personal ({ids['workspace']})" in write


def test_a_namespace_without_a_name_is_shown_by_its_id():
    names = Namespaces([{"namespace": "wsp_1", "kind": "workspace", "name": "Personal"}])
    assert names.label("wsp_1", "shop-web") == "Personal · shop-web"
    assert names.label("memstore_2") == "memstore_2"
    assert names.describe("memstore_2") == "namespace `memstore_2`"
