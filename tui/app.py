"""MemoryCloud Companion TUI: daemon status and memory search (first slice).

Later issues add the inbox, startup setup, conflicts, updates and sync intents.
"""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Footer, Header, Input, Markdown, Static

from tui.client import DaemonClient, DaemonError


def status_text(status: dict[str, Any] | None, error: str | None = None) -> str:
    if error:
        return f"[b red]Daemon unreachable[/]  {error}"
    if status is None:
        return "Connecting to the daemon..."
    counts = status["counts"]
    inbox = status.get("inbox", {})
    waiting = (f"Inbox: {inbox.get('startup_plans_to_approve', 0)} setups to approve · "
               f"{inbox.get('conflicts', 0)} conflicts · "
               f"{inbox.get('agents_with_pending_updates', 0)} agents with pending updates · "
               f"{inbox.get('blocked_sync_intents', 0)} blocked writes")
    return (
        f"[b green]Daemon running[/]  v{status['version']}  pid {status['pid']}  "
        f"port {status['port']}  up {status['uptime_seconds']:.0f} s\n"
        f"Memories {counts['memories']}  Agents {counts['agents']}  "
        f"Projects {counts['project_bindings']}  Store {status['store_bytes'] / 1e6:.1f} MB\n"
        f"{waiting}"
    )


EMPTY_HINT = """\
**No memories yet.** Connect an agent:

    memorycloud agent add my-agent --runtime codex

and let it call `POST /api/agent/bootstrap/context` (see the README).
"""


class CompanionApp(App[None]):
    """Home: status at the top, search as you type, the selected memory below."""

    TITLE = "MemoryCloud Companion"
    CSS = """
    #status { padding: 0 1; height: 4; }
    #results { height: 1fr; }
    #detail { height: 1fr; border-top: solid $primary; }
    """
    BINDINGS = [("ctrl+q", "quit", "Quit"), ("/", "focus_search", "Search"),
                ("r", "refresh", "Refresh"), ("q", "quit", "Quit")]

    def __init__(self, client: DaemonClient) -> None:
        super().__init__()
        self.client = client
        self.workspace_id: str | None = None
        self.items: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(status_text(None), id="status")
        yield Input(placeholder="Search memories (Chinese or English)...", id="search")
        with Vertical():
            yield DataTable(id="results", cursor_type="row")
            yield Markdown("", id="detail")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("type", "title", "project", "updated")
        self.refresh_status()
        self.set_interval(5, self.refresh_status)

    def action_focus_search(self) -> None:
        self.query_one(Input).focus()

    def action_refresh(self) -> None:
        self.refresh_status()

    @work(exclusive=True, group="status")
    async def refresh_status(self) -> None:
        widget = self.query_one("#status", Static)
        try:
            if self.workspace_id is None:
                self.workspace_id = (await self.client.me())["workspace_id"]
            status = await self.client.status()
            widget.update(status_text(status))
            if status["counts"]["memories"] == 0:
                self.query_one("#detail", Markdown).update(EMPTY_HINT)
        except DaemonError as exc:
            widget.update(status_text(None, str(exc)))

    async def on_input_changed(self, event: Input.Changed) -> None:
        self.run_search(event.value)

    @work(exclusive=True, group="search")
    async def run_search(self, query: str) -> None:
        table = self.query_one(DataTable)
        if not query.strip() or self.workspace_id is None:
            table.clear()
            return
        try:
            items = await self.client.search(self.workspace_id, query)
        except DaemonError as exc:
            self.notify(str(exc), severity="error")
            return
        table.clear()
        self.items = {item["id"]: item for item in items}
        for item in items:
            table.add_row(item["memory_type"], (item["title"] or item["content"])[:60],
                          item["project_key"] or "", item["updated_at"][:16], key=item["id"])

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        item = self.items.get(event.row_key.value if event.row_key else "")
        if item is None:
            return
        writer = (item.get("provenance") or {}).get("agent") or item["written_by"] or "unknown"
        self.query_one("#detail", Markdown).update(
            f"{item['content']}\n\n---\n`{item['id']}` · {item['memory_type']} · importance "
            f"{item['importance']} · written by **{writer}** · {item['created_at']}")

    async def on_unmount(self) -> None:
        await self.client.aclose()


def run_tui(url: str, key: str) -> int:
    CompanionApp(DaemonClient(url, key)).run()
    return 0
