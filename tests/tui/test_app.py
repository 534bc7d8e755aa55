"""The TUI against the real daemon app over real HTTP, driven by Textual's Pilot."""

from __future__ import annotations

from aiohttp.test_utils import TestServer
from textual.widgets import DataTable, Markdown, Static

from daemon.app import create_app
from state.config import Settings
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from tui.app import CompanionApp
from tui.client import DaemonClient


async def _server_with_memories(paths) -> TestServer:
    server = TestServer(create_app(Settings(), paths), host="127.0.0.1")
    await server.start_server()
    from daemon import keys

    store = server.app[keys.STORE]
    from state.memories import NewMemory

    workspace = store.identities.default_workspace()["id"]
    with store.transaction():
        for text in ("Deploy with `make release` after the migrations", "周五之前完成前端重构"):
            store.memories.create(NewMemory(namespace=workspace, kind="decision", content=text,
                                            title=text, source="memory_delta", project_key="demo"))
    return server


async def test_status_search_and_detail(paths):
    server = await _server_with_memories(paths)
    key = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
    app = CompanionApp(DaemonClient(str(server.make_url("")).rstrip("/"), key))
    try:
        async with app.run_test() as pilot:
            await pilot.pause(0.3)
            await app.workers.wait_for_complete()
            status = str(app.query_one("#status", Static).render())
            assert "Daemon running" in status and "Memories 2" in status
            assert "Inbox: 0 setups to approve" in status
            await pilot.press("/")
            await pilot.press(*"前端重构")
            await app.workers.wait_for_complete()
            await pilot.pause(0.1)
            table = app.query_one(DataTable)
            assert table.row_count == 1
            assert "前端重构" in str(table.get_row_at(0)[1])
            table.focus()
            await pilot.press("down", "up")
            await pilot.pause(0.1)
            detail = app.query_one("#detail", Markdown)
            assert "周五之前完成前端重构" in detail.source
    finally:
        await server.close()


async def test_unreachable_daemon_is_shown_not_crashed():
    app = CompanionApp(DaemonClient("http://127.0.0.1:9", "mco_nothing"))
    async with app.run_test() as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause(0.1)
        assert "Daemon unreachable" in str(app.query_one("#status", Static).render())


def test_snapshot_unreachable(snap_compare):
    app = CompanionApp(DaemonClient("http://127.0.0.1:9", "mco_nothing"))

    async def settle(pilot):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=(100, 24), run_before=settle)
