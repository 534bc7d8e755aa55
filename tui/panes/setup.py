"""Startup setup: plans with the exact files they write; approve, reject; remove installed ones."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Markdown

from tui.panes.base import Pane


def plan_markdown(plan: dict[str, Any]) -> str:
    lines = [f"### {plan['runtime']} in `{plan['repo_root']}` — {plan['status']}",
             f"project `{plan['project_key']}`; the key stays under credential_ref"
             f" `{plan['credential_ref']}` (never in the repository)",
             f"last refresh: {plan.get('last_refresh_at') or '-'} · fallback cache: "
             + (f"{plan['fallback_cache_age_seconds']:.0f} s old"
                if plan.get("fallback_cache_age_seconds") is not None else "none yet"), ""]
    for item in plan["files"]:
        state = "unchanged" if not item["changes"] else ("update" if item["exists"] else "create")
        lines += [f"**{state}** `{item['path']}` ({item['kind']}): {item['purpose']}",
                  "```", item["content"][:1500], "```"]
    for conflict in plan.get("conflicts", []):
        lines.append(f"> CONFLICT `{conflict['path']}`: {conflict['reason']}")
    return "\n".join(lines)


class SetupPane(Pane):
    BINDINGS = [Binding("a", "approve", "Approve"), Binding("j", "reject", "Reject"),
                Binding("m", "remove", "Remove installed")]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plans: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield DataTable(id="plans", cursor_type="row", zebra_stripes=True)
        yield Markdown("", id="plan")

    def on_mount(self) -> None:
        self.query_one("#plans", DataTable).add_columns("status", "runtime", "repository", "created")
        super().on_mount()

    async def load(self) -> None:
        plans = (await self.client.get("/api/local/startup/plans"))["plans"]
        self.plans = {p["plan_id"]: p for p in plans if p["status"] not in ("rejected", "removed")}
        self.fill(self.query_one("#plans", DataTable), [
            (p["plan_id"], (p["status"], p["runtime"], p["repo_root"][-40:], p["created_at"][:16]))
            for p in self.plans.values()])
        self._show(self.selected(self.query_one("#plans", DataTable)))

    def _show(self, plan_id: str | None) -> None:
        plan = self.plans.get(plan_id or "")
        self.query_one("#plan", Markdown).update(plan_markdown(plan) if plan else "No startup-item plans.")

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.row_key.value if event.row_key else None)

    def _plan(self) -> str | None:
        return self.selected(self.query_one("#plans", DataTable))

    def action_approve(self) -> None:
        if (plan_id := self._plan()):
            self.act(lambda: self.client.post(f"/api/local/startup/plans/{plan_id}/approve"),
                     "approved: the daemon wrote the files",
                     confirm="Write these files into the repository?")

    def action_reject(self) -> None:
        if (plan_id := self._plan()):
            self.act(lambda: self.client.post(f"/api/local/startup/plans/{plan_id}/reject"),
                     "rejected: nothing was written")

    def action_remove(self) -> None:
        if (plan_id := self._plan()):
            self.act(lambda: self.client.post(f"/api/local/startup/plans/{plan_id}/remove"),
                     "removed: the repository is as it was",
                     confirm="Remove this startup item from the repository?")
