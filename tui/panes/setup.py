"""Startup setup: plans with the exact files they write; approve, reject; remove installed ones."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Markdown

from startup_items.plan_files import ACTIVE, file_state, files_by_path
from tui.formats import Formats
from tui.panes.base import Pane


def plan_markdown(plan: dict[str, Any], formats: Formats | None = None) -> str:
    formats = formats or Formats()
    age = plan.get("fallback_cache_age_seconds")
    lines = [
        f"### {plan['runtime']} in `{formats.path(plan['repo_root'])}` — {plan['status']}",
        "",
        f"project `{plan['project_key']}`; the key stays under credential_ref"
        f" `{plan['credential_ref']}` (never in the repository)",
        "",
        f"last refresh: {formats.ago(plan.get('last_refresh_at'))} · fallback cache: "
        + (f"{formats.span(age)} old" if age is not None else "none yet"),
        "",
    ]
    lines += _hook_lines(plan, formats)
    # The person sees each file once, with each of its regions' parts under it.
    for path, items in files_by_path(plan["files"]):
        lines.append(f"**{file_state(plan['status'], items)}** `{path}`")
        for item in items:
            lines += [
                f"({item['kind']}): {item['purpose']}",
                "```",
                formats.text(item["content"][:1500]),
                "```",
            ]
    for conflict in plan.get("conflicts", []):
        lines.append(f"> CONFLICT `{conflict['path']}`: {conflict['reason']}")
    return "\n".join(lines)


def _hook_lines(plan: dict[str, Any], formats: Formats) -> list[str]:
    """Whether the installed hook has really run (the daemon saw the launcher), or what the
    person still has to do; the age is formatted here, like every other age in the TUI."""
    hook = plan.get("hook")
    if not hook or plan["status"] not in ACTIVE:
        return []
    if hook.get("ran"):
        text = f"hook last ran {formats.ago(hook['last_run_at'])} ({hook.get('source')})"
    else:
        text = hook["text"]
    return [f"_{formats.text(text)}_", ""]


class SetupPane(Pane):
    BINDINGS = [
        Binding("a", "approve", "Approve"),
        Binding("j", "reject", "Reject"),
        Binding("m", "remove", "Remove installed"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plans: dict[str, dict[str, Any]] = {}
        self.shown = ""

    def compose(self) -> ComposeResult:
        yield DataTable(id="plans", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="plan-box"):
            yield Markdown("", id="plan")

    def on_mount(self) -> None:
        self.query_one("#plans", DataTable).add_columns("status", "runtime", "repository", "created")
        super().on_mount()

    async def load(self) -> None:
        plans = (await self.client.get("/api/local/startup/plans"))["plans"]
        self.plans = {p["plan_id"]: p for p in plans if p["status"] not in ("rejected", "removed")}
        self.fill(
            self.query_one("#plans", DataTable),
            [
                (
                    p["plan_id"],
                    (
                        p["status"],
                        p["runtime"],
                        self.formats.path(p["repo_root"], 40),
                        self.formats.ago(p["created_at"]),
                    ),
                )
                for p in self.plans.values()
            ],
        )
        self._show(self.selected(self.query_one("#plans", DataTable)))

    def _show(self, plan_id: str | None) -> None:
        plan = self.plans.get(plan_id or "")
        text = plan_markdown(plan, self.formats) if plan else "No startup-item plans."
        if text != self.shown:  # the same plan again (a reload) keeps its scroll position
            self.shown = text
            self.query_one("#plan", Markdown).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.row_key.value if event.row_key else None)

    def _plan(self) -> str | None:
        return self.selected(self.query_one("#plans", DataTable))

    def action_approve(self) -> None:
        if plan_id := self._plan():
            self.act(
                lambda: self.client.post(f"/api/local/startup/plans/{plan_id}/approve"),
                "approved: the daemon wrote the files",
                confirm="Write these files into the repository?",
            )

    def action_reject(self) -> None:
        if plan_id := self._plan():
            self.act(
                lambda: self.client.post(f"/api/local/startup/plans/{plan_id}/reject"),
                "rejected: nothing was written",
            )

    def action_remove(self) -> None:
        if plan_id := self._plan():
            self.act(
                lambda: self.client.post(f"/api/local/startup/plans/{plan_id}/remove"),
                "removed: the repository is as it was",
                confirm="Remove this startup item from the repository?",
            )
