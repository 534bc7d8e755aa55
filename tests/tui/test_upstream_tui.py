"""The upstream in the TUI (tab 5), against a real local daemon app connected to a real one
in the cloud role: the person sees the pushes the upstream interrupted and its pending
updates, discards one push, acks the updates, and the other push is resumed exactly once."""

from __future__ import annotations

from textual.widgets import DataTable, Static

from state.config import Settings
from tests.daemon.test_upstream_sync import start_side
from tests.tui.helpers import settle
from tui.app import CompanionApp
from tui.client import DaemonClient
from tui.modals import Confirm


async def test_interrupted_pushes_are_acked_resumed_or_discarded_from_the_tui(tmp_path):
    cloud = await start_side(tmp_path / "cloud", Settings(role="cloud"), "teammate")
    local = await start_side(tmp_path / "local", Settings(sync_upstream_seconds=3600), "coder")
    try:
        with cloud.store.transaction():
            code = cloud.store.identities.create_pairing_code("laptop", "memorycloud_companion")
        await local.local(
            "POST", "/api/local/upstream/connect", {"url": cloud.url, "pairing_code": code["pairing_code"]}
        )
        await local.local("POST", "/api/local/upstream/sync")
        await cloud.local(
            "POST",
            "/api/local/updates",
            {"title": "Read the new policy", "summary": "a person must read it", "severity": "required"},
        )
        brief = await local.post("/api/agent/memory-brief", {"task": "ship it"})
        for summary in ("keep this one", "give this one up"):
            await local.post(
                f"/api/agent/memory-briefs/{brief['brief_id']}/events", {"summary": summary, "importance": 5}
            )
        status = await local.local("POST", "/api/local/upstream/sync")
        assert len(status["interrupted"]) == 2

        app = CompanionApp(DaemonClient(local.url, local.owner_key))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("5")
            await settle(pilot, app)
            updates = str(app.query_one("#updates", Static).render())
            assert "Upstream" in updates and "Read the new policy" in updates
            table = app.query_one("#intents", DataTable)
            pushes = [table.get_row_at(i) for i in range(table.row_count)]
            assert [row[0] for row in pushes] == ["upstream", "upstream"]
            table.focus()
            # Discard the second push (the newer one) ...
            newer = f"up:{max(e['seq'] for e in status['interrupted'])}"
            table.move_cursor(row=table.get_row_index(newer))
            await settle(pilot, app)
            assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == newer
            await pilot.press("x")
            await settle(pilot, app)
            assert isinstance(app.screen, Confirm)
            await pilot.press("y")
            await settle(pilot, app)
            # ... then ack the upstream's update: the first is resumed there.
            await pilot.press("A")
            await settle(pilot, app)
            assert isinstance(app.screen, Confirm)
            await pilot.press("y")
            await settle(pilot, app)
            assert app.query_one("#intents", DataTable).row_count == 0
        events = [r[0] for r in cloud.store.conn.execute("select summary from brief_events")]
        assert events == ["keep this one"]
        assert [
            i["status"] for i in (await cloud.local("GET", "/api/local/sync-intents"))["sync_intents"]
        ].count("resumed") == 1
    finally:
        await local.client.close()
        await cloud.client.close()
