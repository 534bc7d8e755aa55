"""MemoryCloud Companion TUI: where a person sees and controls what the agents remember.

Tabs: Home (inbox, long jobs with their progress, scheduled jobs), Memories, Startup setup,
Conflicts, Updates and held-back writes, Agents. It talks to the daemon over HTTP only; every
call runs in a worker, so the interface never freezes. Times, sizes and paths are written by
one ``Formats`` object (tui/formats.py). When the daemon is down a banner says how to start
it, and everything reloads by itself when it is back.

Keys: 1-6 open the tabs wherever no text is being typed (in a text box a digit is text);
Escape leaves a text box or the namespace filter for the tab's list, where the tab's keys
and 1-6 work again. A dialog is modal: Escape closes it (its own binding), and the app's keys
wait until it is closed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.markup import escape
from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import (
    DataTable,
    Footer,
    Header,
    Input,
    Select,
    Static,
    TabbedContent,
    TabPane,
    Tabs,
    TextArea,
)

from tui.client import DaemonClient, DaemonError
from tui.formats import Formats
from tui.panes.agents import AgentsPane
from tui.panes.base import Pane
from tui.panes.conflicts import ConflictsPane
from tui.panes.home import HomePane
from tui.panes.intents import IntentsPane
from tui.panes.memories import MemoriesPane
from tui.panes.setup import SetupPane

TABS = (
    ("home", "1 Home", HomePane),
    ("memories", "2 Memories", MemoriesPane),
    ("setup", "3 Startup setup", SetupPane),
    ("conflicts", "4 Conflicts", ConflictsPane),
    ("intents", "5 Updates & writes", IntentsPane),
    ("agents", "6 Agents", AgentsPane),
)


def status_text(
    status: dict[str, Any] | None, error: str | None = None, formats: Formats | None = None
) -> str:
    if error:
        return (
            f"[b red]Daemon unreachable[/]  {error}\n"
            "Start it with `memorycloud daemon start`; this screen reconnects by itself."
        )
    if status is None:
        return "Connecting to the daemon..."
    formats = formats or Formats()
    counts = status["counts"]
    inbox = status.get("inbox", {})
    waiting = sum(inbox.values()) if inbox else 0
    # A rebuild of the search index after an upgrade: a third line, the daemon's own words.
    rebuild = status.get("search_index") or {}
    rebuilding = f"\n[b yellow]{escape(rebuild['text'])}[/]" if rebuild.get("state") == "rebuilding" else ""
    return (
        f"[b green]Daemon running[/] v{status['version']} :{status['port']}"
        f" up {formats.span(status['uptime_seconds'])} · {counts['memories']} memories ·"
        f" {counts['agents']} agents · {formats.size(status['store_bytes'])}\n"
        # Both lines fit in 80 columns.
        + (
            f"Inbox: {inbox.get('startup_plans_to_approve', 0)} to approve ·"
            f" {inbox.get('conflicts', 0)} conflicts · {inbox.get('agents_with_pending_updates', 0)}"
            f" pending updates · {inbox.get('blocked_sync_intents', 0)} blocked writes"
            if waiting
            else "Inbox: all clear (nothing to approve, no conflicts, updates or blocked writes)"
        )
        + rebuilding
    )


class CompanionApp(App[None]):
    TITLE = "MemoryCloud Companion"
    CSS = """
    #status { padding: 0 1; height: 2; }
    /* A third line (and more when it wraps) while the daemon rebuilds the search index. */
    #status.rebuilding { height: auto; }
    TabbedContent { height: 1fr; }
    TabPane { height: 1fr; padding: 0; }
    Pane { height: 1fr; }
    DataTable { height: 1fr; }
    /* Lists of a few rows leave the room to what the selected row holds. */
    #plans, #conflicts, #intents { height: auto; max-height: 10; }
    #filters { height: 3; }
    #filters Input, #filters Select { width: 1fr; }
    #filters #q { width: 2fr; }
    /* The namespace filter shows names: room for a short one, one line, cut with an ellipsis. */
    #filters #namespace { width: 1.5fr; }
    #namespace SelectCurrent Static#label { text-wrap: nowrap; text-overflow: ellipsis; }
    #lower, #sides { height: 1fr; }
    #detail-box, #plan-box { height: 1fr; }
    #detail-box { width: 1fr; }
    #versions { width: 36; height: 1fr; }
    .side { width: 1fr; border: round $primary; padding: 0 1; overflow-y: auto; }
    #inbox, #updates { height: auto; padding: 1 1; }
    #write { height: auto; max-height: 12; padding: 0 1; }
    """
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit"),
        Binding("ctrl+r", "reload", "Reload"),
        Binding("/", "search", "Search"),
        Binding("escape", "leave_input", "Leave the box", show=False),
        *[Binding(str(i), f"show('{tab}')", label, show=False) for i, (tab, label, _) in enumerate(TABS, 1)],
    ]

    def __init__(self, client: DaemonClient, formats: Formats | None = None) -> None:
        """``formats`` writes times, sizes and paths (tests pass one with a pinned clock)."""
        super().__init__()
        self.client = client
        self.formats = formats or Formats()
        self.reachable: bool | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(status_text(None), id="status")
        with TabbedContent(initial="tab-home"):
            for tab, label, pane in TABS:
                with TabPane(label, id=f"tab-{tab}"):
                    yield pane(id=f"pane-{tab}")
        yield Footer()

    def on_mount(self) -> None:
        # Textual 8 gives the App node its styles only after the first screen's widgets are
        # mounted. A widget that painted before then (and the panes load fast) keeps colours
        # resolved without the App's, i.e. transparent text, until its own styles change.
        # Forget those colours now that the App has its styles.
        for widget in self.screen.walk_children(with_self=True):
            widget.notify_style_update()
            widget.refresh()
        self.refresh_status()
        self.set_interval(3, self.refresh_status)

    @work(exclusive=True, group="status")
    async def refresh_status(self) -> None:
        try:
            widget = self.query_one("#status", Static)
        except NoMatches:  # the timer fired while the app closes: its widgets are gone
            return
        try:
            status = await self.client.status()
        except DaemonError as exc:
            widget.update(status_text(None, str(exc)))
            widget.remove_class("rebuilding")
            self.reachable = False
            return
        if not widget.is_attached:  # closed while the daemon answered
            return
        widget.update(status_text(status, formats=self.formats))
        widget.set_class((status.get("search_index") or {}).get("state") == "rebuilding", "rebuilding")
        if self.reachable is False:  # it came back: reload everything
            self.action_reload(all_panes=True)
        elif self.screen is self.screen_stack[0]:
            # Keep the visible list current; fill() keeps the selection, so no jumping.
            self.action_reload()
        self.reachable = True

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Every action is in the command palette: the tabs, and the active tab's keys."""
        yield from super().get_system_commands(screen)
        for tab, label, _ in TABS:
            yield SystemCommand(
                f"Go to {label[2:]}", f"Show the {label[2:]} tab", lambda tab=tab: self.action_show(tab)
            )
        yield SystemCommand("Reload", "Fetch the visible tab again", self.action_reload)
        pane = self._active()
        if pane is not None:
            for binding in pane.BINDINGS:
                if isinstance(binding, Binding):
                    yield SystemCommand(
                        binding.description,
                        f"key {binding.key} on this tab",
                        lambda action=binding.action, pane=pane: pane.run_action(action),
                    )

    def _active(self) -> Pane | None:
        active = self.query_one(TabbedContent).active
        return self.query_one(f"#pane-{active.removeprefix('tab-')}", Pane) if active else None

    def action_reload(self, all_panes: bool = False) -> None:
        panes = list(self.query(Pane)) if all_panes else [p for p in [self._active()] if p]
        for pane in panes:
            pane.reload()

    def _typing(self) -> Widget | None:
        """The text box (or the filter's Select) that has the focus, if one has."""
        focused = self.screen.focused
        return focused if isinstance(focused, (Input, TextArea, Select)) else None

    def action_leave_input(self) -> None:
        """Escape in a text box: the focus goes to the tab's list (else the tab bar)."""
        if self._typing() is None:
            return
        pane = self._active()
        tables = pane.query(DataTable) if pane is not None else None
        (tables.first() if tables else self.query_one(Tabs)).focus()

    def action_show(self, tab: str) -> None:
        self.query_one(TabbedContent).active = f"tab-{tab}"
        self.action_reload()
        self._focus_pane(tab)

    def _focus_pane(self, tab: str) -> None:
        """Focus where the tab's keys work: the search box, else its first table."""
        pane = self.query_one(f"#pane-{tab}", Pane)
        target = pane.query("#q").first() if tab == "memories" else pane.query("DataTable").first()
        target.focus()

    def action_search(self) -> None:
        self.action_show("memories")
        self.query_one("#q").focus()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.action_reload()
        if event.pane.id:
            self._focus_pane(event.pane.id.removeprefix("tab-"))

    async def on_unmount(self) -> None:
        await self.client.aclose()


def run_tui(url: str, key: str) -> int:
    CompanionApp(DaemonClient(url, key)).run()
    return 0
