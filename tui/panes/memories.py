"""Memories: search as you type across every dialect, filters, detail, history, diff, revert,
redact and delete (each change asked for first). Namespaces are shown by name (workspace and
project, Memory Store, mem1 user/scope, suite); the detail keeps the raw id."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Input, Markdown, Select

from tui.namespaces import Namespaces, fetch_namespaces
from tui.panes.base import Pane


class MemoriesPane(Pane):
    BINDINGS = [
        Binding("h", "history", "History"),
        Binding("m", "mark", "Mark version"),
        Binding("f", "diff", "Diff (marked or current)"),
        Binding("v", "revert", "Revert to version"),
        Binding("x", "redact", "Redact version"),
        Binding("d", "delete", "Delete memory"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.items: dict[str, dict[str, Any]] = {}
        self.history_of: str | None = None
        self.marked: int | None = None
        self.diff_of: str | None = None  # the memory whose diff the detail pane shows
        self.detail_text = ""
        self.namespaces = Namespaces()
        self.namespace_options: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        with Horizontal(id="filters"):
            yield Input(placeholder="Search (any language)...", id="q")
            # Picked by name from what the daemon knows: nobody types a wsp_… id.
            yield Select[str]([], prompt="namespace", id="namespace")
            yield Input(placeholder="kind", id="kind")
            yield Input(placeholder="project", id="project_key")
        yield DataTable(id="results", cursor_type="row", zebra_stripes=True)
        with Horizontal(id="lower"):
            with VerticalScroll(id="detail-box"):
                yield Markdown("", id="detail")
            yield DataTable(id="versions", cursor_type="row")

    def on_mount(self) -> None:
        self.query_one("#results", DataTable).add_columns("type", "title", "namespace", "by", "updated")
        self.query_one("#versions", DataTable).add_columns("v", "operation", "when", "state")
        super().on_mount()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.reload()

    def on_select_changed(self, event: Select.Changed) -> None:
        self.reload()

    def _show_namespaces(self, namespaces: Namespaces) -> None:
        """Offer the daemon's namespaces in the filter, keeping the one picked."""
        self.namespaces = namespaces
        select = self.query_one("#namespace", Select)
        options = namespaces.options()
        if options != self.namespace_options:  # the same ones again (a reload): no flicker
            self.namespace_options = options
            picked = select.value
            select.set_options(options)
            if picked in namespaces.by_id:
                select.value = picked

    async def load(self) -> None:
        self._show_namespaces(await fetch_namespaces(self.client))
        params = {
            name: self.query_one(f"#{name}", Input).value.strip() for name in ("q", "kind", "project_key")
        }
        namespace = self.query_one("#namespace", Select).value
        if isinstance(namespace, str):
            params["namespace"] = namespace
        data = await self.client.get("/api/local/memories", **params)
        self.items = {item["id"]: item for item in data["items"]}
        # The terminal's width, not the pane's: a load can run before the pane is laid out
        # (its width 0 then, and the namespaces were cut to 14 characters on a 120-column
        # screen: seen in tests/tui/test_namespaces.py). On 80 columns, who and when stay
        # in view too.
        wide = self.app.size.width >= 110
        title_width, namespace_width = (50, 24) if wide else (24, 14)
        self.fill(
            self.query_one("#results", DataTable),
            [
                (
                    item["id"],
                    (
                        item["memory_type"],
                        (item["title"] or item["content"])[:title_width],
                        self._cut(
                            self.namespaces.label(item["namespace"], item.get("project_key")), namespace_width
                        ),
                        item.get("written_by_name") or "-",
                        self.formats.ago(item["updated_at"]),
                    ),
                )
                for item in data["items"]
            ],
        )
        if self.history_of:
            await self._history(self.history_of)

    @staticmethod
    def _cut(text: str, width: int) -> str:
        """At most ``width`` characters; an ellipsis says the label goes on."""
        return text if len(text) <= width else text[: width - 1] + "…"

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id != "results" or event.row_key is None:
            return
        item = self.items.get(event.row_key.value or "")
        # The list reloads every few seconds and highlights its row again: a diff being read
        # stays until another memory is selected.
        if item and item["id"] != self.diff_of:
            self.diff_of = None
            provenance = item.get("provenance") or {}
            self._detail(
                f"{self.formats.text(item['content'])}\n\n---\n`{item['id']}` · {item['memory_type']}"
                f" · {self.namespaces.describe(item['namespace'], item.get('project_key'))}"
                f" · version {item['version']} · written by"
                f" **{item.get('written_by_name') or provenance.get('agent') or 'unknown'}**,"
                f" created {self.formats.moment(item['created_at'])},"
                f" updated {self.formats.ago(item['updated_at'])}"
            )

    def _detail(self, text: str) -> None:
        """Show this in the detail pane (not again when it is already shown: no flicker)."""
        if text != self.detail_text:
            self.detail_text = text
            self.query_one("#detail", Markdown).update(text)

    async def _history(self, memory_id: str) -> None:
        data = await self.client.get(f"/api/local/memories/{memory_id}/history")
        if memory_id != self.history_of:
            self.marked = None
        self.history_of = memory_id
        self.fill(
            self.query_one("#versions", DataTable),
            [
                (
                    str(v["version"]),
                    (
                        str(v["version"]),
                        v["operation"],
                        self.formats.ago(v["created_at"]),
                        "redacted" if v["redacted_at"] else "",
                    ),
                )
                for v in data["versions"]
            ],
        )

    def _memory(self) -> str | None:
        return self.selected(self.query_one("#results", DataTable))

    def _version(self) -> int | None:
        value = self.selected(self.query_one("#versions", DataTable))
        return int(value) if value else None

    def action_history(self) -> None:
        if memory_id := self._memory():
            self.run_worker(self._safe(lambda: self._history(memory_id)), group="history")

    def action_mark(self) -> None:
        self.marked = self._version()
        if self.marked:
            self.notify(f"version {self.marked} marked: select another and press f to compare")

    def action_diff(self) -> None:
        """Diff the selected version against the marked one, or against the current one."""
        memory_id, version = self.history_of, self._version()
        other = self.marked or self.items.get(memory_id or "", {}).get("version")
        if memory_id and version and other:
            old, new = sorted((version, other))

            async def show() -> None:
                diff = await self.client.get(
                    f"/api/local/memories/{memory_id}/diff", **{"from": old, "to": new}
                )
                text = self.formats.text(diff["diff"]) or "(no change)"
                self._detail(f"```diff\n{text}\n```")
                self.diff_of = memory_id

            self.run_worker(self._safe(show), group="diff")

    def action_revert(self) -> None:
        memory_id, version = self.history_of, self._version()
        if memory_id and version:
            self.act(
                lambda: self.client.post(f"/api/local/memories/{memory_id}/revert", {"version": version}),
                f"reverted to version {version} (as a new version)",
                confirm=f"Make version {version} current again? (a new version is added)",
            )

    def action_redact(self) -> None:
        memory_id, version = self.history_of, self._version()
        if memory_id and version:
            self.act(
                lambda: self.client.post(f"/api/local/memories/{memory_id}/redact", {"version": version}),
                f"version {version} redacted",
                confirm=f"Remove the content of version {version} for good? (metadata stays)",
            )

    def action_delete(self) -> None:
        if memory_id := self._memory():
            self.act(
                lambda: self.client.post(f"/api/local/memories/{memory_id}/delete"),
                "memory deleted (its history stays)",
                confirm=f"Delete memory {memory_id}?",
            )
