"""Updates and held-back writes: who has updates pending, each blocked write with the original
request; ack for an agent, resume, discard. Expired intents are shown as such."""

from __future__ import annotations

import json
from typing import Any

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from tui.panes.base import Pane


class IntentsPane(Pane):
    BINDINGS = [Binding("a", "ack", "Ack updates for the agent"), Binding("u", "resume", "Resume"),
                Binding("x", "discard", "Discard")]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.intents: dict[str, dict[str, Any]] = {}
        self.agents: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Static("", id="updates")
        yield DataTable(id="intents", cursor_type="row", zebra_stripes=True)
        yield Static("", id="write")

    def on_mount(self) -> None:
        self.query_one("#intents", DataTable).add_columns("status", "endpoint", "importance", "agent", "expires")
        super().on_mount()

    async def load(self) -> None:
        updates = await self.client.get("/api/local/updates")
        titles = {u["update_id"]: f"{u['title']} ({u['severity']})" for u in updates["updates"]}
        pending = [f"  {escape(a['name'])}: " + "; ".join(escape(titles.get(u, u)) for u in a["pending"])
                   for a in updates["agents"] if a["pending"]]
        self.query_one("#updates", Static).update(
            "[b]Pending updates[/b]\n" + ("\n".join(pending) or "  every agent is up to date"))
        self.agents = {a["id"]: a["name"] for a in updates["agents"]}
        intents = (await self.client.get("/api/local/sync-intents"))["sync_intents"]
        self.intents = {i["sync_intent_id"]: i for i in intents}
        self.fill(self.query_one("#intents", DataTable), [
            (i["sync_intent_id"], (i["status"], i["endpoint"], str(i["importance"]),
                                   self.agents.get(i["identity_id"], i["identity_id"]),
                                   self.formats.ago(i["expires_at"]))) for i in intents])
        self._show(self.selected(self.query_one("#intents", DataTable)))

    def _show(self, intent_id: str | None) -> None:
        intent = self.intents.get(intent_id or "")
        self.query_one("#write", Static).update(
            f"[b]Original write[/b] {intent['method']} {escape(self.formats.text(intent['path']))}\n"
            + escape(self.formats.text(json.dumps(intent["body"], ensure_ascii=False, indent=2)[:2000]))
            if intent else "")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.row_key.value if event.row_key else None)

    def _intent(self) -> dict[str, Any] | None:
        return self.intents.get(self.selected(self.query_one("#intents", DataTable)) or "")

    def action_ack(self) -> None:
        intent = self._intent()
        if intent:
            agent = intent["identity_id"]
            self.act(lambda: self.client.post(f"/api/local/agents/{agent}/updates/ack"),
                     f"acked the pending updates for {self.agents.get(agent, agent)}",
                     confirm="Ack every pending update for this agent (its runtime is up to date)?")

    def action_resume(self) -> None:
        intent = self._intent()
        if intent:
            self.act(lambda: self.client.post(f"/api/agent/sync-intents/{intent['sync_intent_id']}/resume"),
                     "resumed: the original write was applied once")

    def action_discard(self) -> None:
        intent = self._intent()
        if intent:
            self.act(lambda: self.client.post(f"/api/agent/sync-intents/{intent['sync_intent_id']}/discard"),
                     "discarded", confirm="Give up this write for good?")
