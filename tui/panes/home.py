"""Home: what waits for a person, long jobs with their progress, and the daemon's schedule."""

from __future__ import annotations

from rich.markup import escape
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from tui.panes.base import Pane
from tui.progress import LongJobs, list_jobs


class HomePane(Pane):
    def compose(self) -> ComposeResult:
        yield Static("", id="inbox")
        yield LongJobs(id="long-jobs")
        yield DataTable(id="jobs", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#jobs", DataTable).add_columns("scheduled job", "last run", "result", "next run")
        super().on_mount()

    async def load(self) -> None:
        status = await self.client.status()
        inbox = status.get("inbox", {})
        self.query_one("#inbox", Static).update(
            "[b]Waiting for you[/b]\n"
            f"  {inbox.get('startup_plans_to_approve', 0)} startup setups to approve (tab 3)\n"
            f"  {inbox.get('conflicts', 0)} conflicts (tab 4)\n"
            f"  {inbox.get('agents_with_pending_updates', 0)} agents with pending updates,"
            f" {inbox.get('blocked_sync_intents', 0)} blocked writes (tab 5)"
            + self._upstream_text(status.get("upstream") or {}, inbox)
        )
        self.fill(
            self.query_one("#jobs", DataTable),
            [
                (
                    job["name"],
                    (
                        job["name"],
                        self.formats.ago(job["last_run_at"], "not yet"),
                        (job["last_result"] or "-")[:40],
                        self.formats.ago(job["next_run_at"]),
                    ),
                )
                for job in status.get("jobs", [])
            ],
        )
        await self.query_one(LongJobs).show(await list_jobs(self.client))

    def _upstream_text(self, upstream: dict, inbox: dict) -> str:
        """Only with an upstream connected: its backlog, last sync and what waits upstream."""
        if not upstream.get("connected"):
            return ""
        text = (
            f"\n  upstream {escape(self.formats.text(upstream['url']))}: backlog"
            f" {upstream['backlog']}, last sync {self.formats.ago(upstream.get('last_success_at'), 'never')},"
            f" {inbox.get('upstream_updates_to_ack', 0)} updates to ack,"
            f" {inbox.get('interrupted_upstream_writes', 0)} interrupted pushes (tab 5)"
        )
        if upstream.get("last_error"):
            text += f"\n  upstream error: {escape(upstream['last_error'])}"
        return text
