"""Agents: identities, scopes, last write; add one (its key shown once) or revoke one."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable

from tui.client import DaemonError
from tui.modals import Fields, ShowOnce
from tui.panes.base import Pane


class AgentsPane(Pane):
    BINDINGS = [Binding("n", "add", "New agent"), Binding("v", "revoke", "Revoke")]

    def compose(self) -> ComposeResult:
        yield DataTable(id="agents", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#agents", DataTable).add_columns("name", "runtime", "state", "last write", "scopes")
        super().on_mount()

    async def load(self) -> None:
        agents = (await self.client.get("/api/local/agents"))["agents"]
        self.fill(
            self.query_one("#agents", DataTable),
            [
                (
                    a["id"],
                    (
                        a["name"],
                        a["runtime"] or "-",
                        "revoked" if a["disabled_at"] else "active",
                        self.formats.ago(a["last_write_at"], "never"),
                        " ".join(a["scopes"]),
                    ),
                )
                for a in agents
            ],
        )

    def action_add(self) -> None:
        async def create(values: dict) -> None:
            try:
                agent = await self.client.post(
                    "/api/local/agents", {"name": values["name"], "runtime": values["runtime"] or "generic"}
                )
            except DaemonError as exc:
                self.notify(str(exc), severity="error")
                return
            self.app.push_screen(ShowOnce(f"API key for {agent['name']}", agent["api_key"]))
            await self.load()

        def submitted(values: dict | None) -> None:
            if values and values.get("name"):
                self.run_worker(create(values), group="agents-add")

        self.app.push_screen(
            Fields(
                "New agent",
                {"name": "name (e.g. codex-laptop)", "runtime": "runtime (codex, claude_code, ...)"},
            ),
            submitted,
        )

    def action_revoke(self) -> None:
        agent_id = self.selected(self.query_one("#agents", DataTable))
        if agent_id:
            self.act(
                lambda: self.client.post(f"/api/local/agents/{agent_id}/revoke"),
                "revoked: its keys no longer work",
                confirm="Revoke this agent's keys?",
            )
