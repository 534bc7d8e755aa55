"""Conflicts side by side (current, incoming, base): keep current, take incoming, or merge.
Where a conflict is says the namespace by name (e.g. the Memory Store) and the path."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import DataTable, Static

from tui.modals import MergeEditor
from tui.namespaces import Namespaces, fetch_namespaces
from tui.panes.base import Pane


def where(conflict: dict[str, Any], namespaces: Namespaces) -> str:
    """``store notes: deploy.md``: the namespace by name, then the path (or the subject)."""
    place = conflict["path"] or conflict["subject_id"] or "-"
    namespace = conflict.get("namespace")
    return f"{namespaces.label(namespace)}: {place}" if namespace else place


class ConflictsPane(Pane):
    BINDINGS = [
        Binding("k", "keep", "Keep current"),
        Binding("t", "take", "Take incoming"),
        Binding("e", "merge", "Edit a merge"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.conflicts: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield DataTable(id="conflicts", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="sides"):
            yield Static("", id="current", classes="side")
            yield Static("", id="incoming", classes="side")
            yield Static("", id="base", classes="side")

    def on_mount(self) -> None:
        self.query_one("#conflicts", DataTable).add_columns("kind", "where", "since")
        super().on_mount()

    async def load(self) -> None:
        conflicts = (await self.client.get("/api/local/conflicts"))["conflicts"]
        namespaces = await fetch_namespaces(self.client)
        self.conflicts = {c["id"]: c for c in conflicts}
        self.fill(
            self.query_one("#conflicts", DataTable),
            [
                (c["id"], (c["kind"], where(c, namespaces), self.formats.ago(c["created_at"])))
                for c in conflicts
            ],
        )
        self._show(self.selected(self.query_one("#conflicts", DataTable)))

    def _show(self, conflict_id: str | None) -> None:
        conflict = self.conflicts.get(conflict_id or "")
        for side in ("current", "incoming", "base"):
            text = (conflict or {}).get(side)
            title = {"current": "Current", "incoming": "Incoming", "base": "Base"}[side]
            self.query_one(f"#{side}", Static).update(
                f"[b]{title}[/b]\n{escape(self.formats.text(text)) if text is not None else '(unknown)'}"
                if conflict
                else ("No conflicts." if side == "current" else "")
            )

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.row_key.value if event.row_key else None)

    def _resolve(self, action: str, content: str | None = None, confirm: str | None = None) -> None:
        conflict_id = self.selected(self.query_one("#conflicts", DataTable))
        if conflict_id:
            body = {"action": action, **({"content": content} if content is not None else {})}
            self.act(
                lambda: self.client.post(f"/api/local/conflicts/{conflict_id}/resolve", body),
                f"resolved: {action.replace('_', ' ')}",
                confirm=confirm,
            )

    def action_keep(self) -> None:
        self._resolve("keep_current")

    def action_take(self) -> None:
        self._resolve(
            "take_incoming",
            confirm="Replace the current content with the incoming one?"
            " (the current one stays in the history)",
        )

    def action_merge(self) -> None:
        conflict = self.conflicts.get(self.selected(self.query_one("#conflicts", DataTable)) or "")
        if conflict:
            start = f"{conflict.get('current') or ''}\n{conflict.get('incoming') or ''}"
            self.app.push_screen(
                MergeEditor(start), lambda text: self._resolve("merge", text) if text else None
            )
