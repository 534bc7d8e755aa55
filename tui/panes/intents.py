"""Updates and held-back writes: who has updates pending, each blocked write with the original
request; ack for an agent, resume, discard. Expired intents are shown as such.

With an upstream connected, its side is here too: the upstream's pending updates (A acks
them for this daemon) and this daemon's own pushes the upstream interrupted (rows keyed
``up:SEQ``; they resume by themselves after the ack, x discards one).

Each held-back write says where it goes, by name: a suite's writes (persona distill, suite
sync) go to that suite, every other one to the writing agent's workspace (an agent writes
into no other, daemon/runtime/access.py)."""

from __future__ import annotations

import json
from typing import Any

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Static

from tui.namespaces import Namespaces, fetch_namespaces
from tui.panes.base import Pane


class IntentsPane(Pane):
    BINDINGS = [
        Binding("a", "ack", "Ack updates for the agent"),
        Binding("u", "resume", "Resume"),
        Binding("x", "discard", "Discard"),
        Binding("A", "ack_upstream", "Ack upstream updates", show=False),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.intents: dict[str, dict[str, Any]] = {}
        self.agents: dict[str, str] = {}
        self.workspaces: dict[str, str] = {}  # agent id -> its workspace
        self.namespaces = Namespaces()
        self.upstream: dict[str, Any] = {"connected": False}
        self.pushes: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield Static("", id="updates")
        yield DataTable(id="intents", cursor_type="row", zebra_stripes=True)
        yield Static("", id="write")

    def on_mount(self) -> None:
        self.query_one("#intents", DataTable).add_columns(
            "status", "endpoint", "importance", "agent", "expires"
        )
        super().on_mount()

    async def load(self) -> None:
        updates = await self.client.get("/api/local/updates")
        titles = {u["update_id"]: f"{u['title']} ({u['severity']})" for u in updates["updates"]}
        pending = [
            f"  {escape(a['name'])}: " + "; ".join(escape(titles.get(u, u)) for u in a["pending"])
            for a in updates["agents"]
            if a["pending"]
        ]
        self.upstream = await self.client.get("/api/local/upstream")
        self.query_one("#updates", Static).update(
            "[b]Pending updates[/b]\n"
            + ("\n".join(pending) or "  every agent is up to date")
            + self._upstream_text()
        )
        self.agents = {a["id"]: a["name"] for a in updates["agents"]}
        self.workspaces = {
            a["id"]: a["workspace_id"] for a in (await self.client.get("/api/local/agents"))["agents"]
        }
        self.namespaces = await fetch_namespaces(self.client)
        intents = (await self.client.get("/api/local/sync-intents"))["sync_intents"]
        self.intents = {i["sync_intent_id"]: i for i in intents}
        self.pushes = {
            f"up:{e['seq']}": e for e in sorted(self.upstream.get("interrupted", []), key=lambda e: e["seq"])
        }
        self.fill(
            self.query_one("#intents", DataTable),
            [
                (
                    i["sync_intent_id"],
                    (
                        i["status"],
                        i["endpoint"],
                        str(i["importance"]),
                        self.agents.get(i["identity_id"], i["identity_id"]),
                        self.formats.ago(i["expires_at"]),
                    ),
                )
                for i in intents
            ]
            + [
                (
                    key,
                    (
                        "upstream",
                        f"push #{e['seq']}",
                        str(e["importance"] or "-"),
                        "this daemon",
                        "after the ack",
                    ),
                )
                for key, e in self.pushes.items()
            ],
        )
        self._show(self.selected(self.query_one("#intents", DataTable)))

    def _upstream_text(self) -> str:
        """The upstream's updates waiting for the person, and where sync stands."""
        up = self.upstream
        if not up.get("connected"):
            return ""
        lines = [
            f"\n[b]Upstream[/b] {escape(self.formats.text(up['url']))}: backlog {up['backlog']},"
            f" last sync {self.formats.ago(up.get('last_success_at'), 'never')}"
        ]
        if up.get("last_error"):
            lines.append(f"  last error: {escape(up['last_error'])}")
        for update in up.get("pending_updates", []):
            lines.append(
                f"  update {escape(str(update.get('title')))} ({update.get('severity')})"
                " — apply it, then A acks it upstream"
            )
        return "\n".join(lines)

    def _show(self, intent_id: str | None) -> None:
        push = self.pushes.get(intent_id or "")
        if push is not None:
            interrupt = push.get("interrupt") or {}
            self.query_one("#write", Static).update(
                f"[b]Push to the upstream[/b] #{push['seq']}: {escape(str(push['title']))}\n"
                f"held upstream as {escape(str(push['upstream_sync_intent_id']))}:"
                f" {escape(str(interrupt.get('message', '')))}\n"
                "It is resumed there once its updates are acked (A); x gives it up"
                " (the local memory stays)."
            )
            return
        intent = self.intents.get(intent_id or "")
        self.query_one("#write", Static).update(
            f"[b]Original write[/b] {intent['method']} {escape(self.formats.text(intent['path']))}\n"
            + self._target(intent)
            + escape(self.formats.text(json.dumps(intent["body"], ensure_ascii=False, indent=2)[:2000]))
            if intent
            else ""
        )

    def _target(self, intent: dict[str, Any]) -> str:
        """The line saying where the write goes, by name (with the raw id)."""
        slug = (intent.get("path_params") or {}).get("slug")
        namespace = f"suite:{slug}" if slug else self.workspaces.get(intent["identity_id"])
        if not namespace:
            return ""
        label = self.namespaces.label(namespace)
        shown = label if label == namespace else f"{label} ({namespace})"
        return f"into [b]{escape(shown)}[/b]\n"

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.row_key.value if event.row_key else None)

    def _intent(self) -> dict[str, Any] | None:
        return self.intents.get(self.selected(self.query_one("#intents", DataTable)) or "")

    def _push(self) -> dict[str, Any] | None:
        return self.pushes.get(self.selected(self.query_one("#intents", DataTable)) or "")

    def action_ack_upstream(self) -> None:
        if not self.upstream.get("connected"):
            self.notify("no upstream is connected (memorycloud upstream connect URL)")
            return

        async def ack_and_sync() -> None:
            await self.client.post("/api/local/upstream/updates/ack", {})
            await self.client.post("/api/local/upstream/sync")  # resume what was waiting

        self.act(
            ack_and_sync,
            "acked upstream; interrupted pushes were resumed",
            confirm="Ack every pending upstream update (you applied them)?",
        )

    def action_ack(self) -> None:
        intent = self._intent()
        if intent:
            agent = intent["identity_id"]
            self.act(
                lambda: self.client.post(f"/api/local/agents/{agent}/updates/ack"),
                f"acked the pending updates for {self.agents.get(agent, agent)}",
                confirm="Ack every pending update for this agent (its runtime is up to date)?",
            )

    def action_resume(self) -> None:
        if self._push():
            self.act(
                lambda: self.client.post("/api/local/upstream/sync"),
                "synced with the upstream: pushes whose updates are acked were resumed",
            )
            return
        intent = self._intent()
        if intent:
            self.act(
                lambda: self.client.post(f"/api/agent/sync-intents/{intent['sync_intent_id']}/resume"),
                "resumed: the original write was applied once",
            )

    def action_discard(self) -> None:
        push = self._push()
        if push:
            self.act(
                lambda: self.client.post(f"/api/local/upstream/outbox/{push['seq']}/discard"),
                "discarded the push; the local memory stays",
                confirm="Give up sending this write to the upstream?",
            )
            return
        intent = self._intent()
        if intent:
            self.act(
                lambda: self.client.post(f"/api/agent/sync-intents/{intent['sync_intent_id']}/discard"),
                "discarded",
                confirm="Give up this write for good?",
            )
