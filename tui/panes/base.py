"""What every pane shares: the daemon client, a refresh worker, errors as notifications."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.widgets import DataTable

from tui.client import DaemonClient, DaemonError
from tui.formats import Formats
from tui.modals import Confirm


class Pane(Vertical):
    """A tab's content. ``load()`` fetches and shows data; it runs in a worker."""

    @property
    def client(self) -> DaemonClient:
        return self.app.client  # type: ignore[attr-defined]

    @property
    def formats(self) -> Formats:
        """How times, sizes and paths are written (one object for the whole app)."""
        return self.app.formats  # type: ignore[attr-defined]

    def on_mount(self) -> None:
        self.reload()

    def reload(self) -> None:
        self.run_worker(self._safe(self.load), exclusive=True, group=f"load-{self.id}")

    async def load(self) -> None:  # pragma: no cover - every pane overrides it
        raise NotImplementedError

    def _safe(self, job: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
        async def run() -> Any:
            try:
                return await job()
            except DaemonError as exc:
                self.notify(str(exc), severity="error", timeout=8)
            except NoMatches:
                # The app closed (or the pane left it) while the daemon was answering: its
                # widgets are gone and there is nothing to show. Attached, it is a real bug.
                if self.is_attached:
                    raise

        return run

    def act(
        self, job: Callable[[], Awaitable[Any]], done: str | None = None, confirm: str | None = None
    ) -> None:
        """Run a daemon action in a worker (after a confirmation), then reload."""

        async def go() -> None:
            self.loading = True  # a spinner over the pane while the daemon works
            try:
                await job()
                if done:
                    self.notify(done)
                await self.load()
            finally:
                self.loading = False

        def start(answer: bool | None = True) -> None:
            if answer:
                self.run_worker(self._safe(go), group=f"act-{self.id}")

        if confirm:
            self.app.push_screen(Confirm(confirm), start)
        else:
            start()

    @staticmethod
    def fill(table: DataTable, rows: list[tuple[str, tuple]]) -> None:
        """Replace the rows, keeping the cursor on the same key when it still exists."""
        selected = Pane.selected(table)
        table.clear()
        for key, cells in rows:
            table.add_row(*cells, key=key)
        keys = [key for key, _ in rows]
        if selected in keys:
            table.move_cursor(row=keys.index(selected))

    @staticmethod
    def selected(table: DataTable) -> str | None:
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
