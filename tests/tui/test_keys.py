"""Keys as a person uses them (issue #15), against the real daemon app over real HTTP: Escape
leaves a text box for the tab's list, digits open tabs wherever no text is typed and are text
in a text box; in a dialog Escape still closes it and digits leave the tabs alone."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Select, TabbedContent

from tests.tui.helpers import settle
from tui.app import CompanionApp
from tui.client import DaemonClient
from tui.modals import Fields


def active(app) -> str:
    return app.query_one(TabbedContent).active


async def test_escape_leaves_the_search_box_then_3_opens_startup_setup(served):
    _, url, owner_key, _, _ = served
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        await settle(pilot, app)
        assert app.focused is app.query_one("#q", Input)
        await pilot.press("escape")
        assert app.focused is app.query_one("#results", DataTable)
        await pilot.press("3")
        await settle(pilot, app)
        assert active(app) == "tab-setup"
        assert app.query_one("#q", Input).value == ""


async def test_a_digit_typed_in_the_search_box_stays_text(served):
    """ "3" in the search box searches for "3"; it is still there after leaving the box."""
    _, url, owner_key, _, _ = served
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        await settle(pilot, app)
        await pilot.press("3", "1")
        await settle(pilot, app)
        assert app.query_one("#q", Input).value == "31"
        assert active(app) == "tab-memories"
        await pilot.press("escape", "3")
        await settle(pilot, app)
        assert active(app) == "tab-setup" and app.query_one("#q", Input).value == "31"


async def test_every_filter_of_memories_is_left_with_escape(served):
    _, url, owner_key, _, _ = served
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("2")
        await settle(pilot, app)
        for box in ("#kind", "#project_key", "#namespace"):
            app.query_one(box).focus()
            await pilot.press("escape")
            assert app.focused is app.query_one("#results", DataTable), box
        # The namespace filter is picked, not typed: a digit there opens a tab.
        app.query_one("#namespace", Select).focus()
        await pilot.press("4")
        await settle(pilot, app)
        assert active(app) == "tab-conflicts"


async def test_escape_in_a_dialog_closes_it_then_leaves_a_tab_s_box(served):
    """A dialog keeps its Escape (cancel) and its digits (text); on a tab Escape leaves the box."""
    _, url, owner_key, _, _ = served
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("6")
        await settle(pilot, app)
        await pilot.press("n")  # New agent: two text fields
        await settle(pilot, app)
        assert isinstance(app.screen, Fields)
        await pilot.press("c", "3")
        assert app.screen.query_one("#field-name", Input).value == "c3"
        await pilot.press("escape")
        await settle(pilot, app)
        assert not isinstance(app.screen, Fields) and active(app) == "tab-agents"
        assert app.query_one("#agents", DataTable).row_count == 1  # nothing was added
        await pilot.press("2", "x", "escape", "4")
        await settle(pilot, app)
        assert active(app) == "tab-conflicts"


async def test_a_load_that_returns_after_its_pane_left_is_dropped(served):
    """A pane's load that the daemon answers after the pane left the app (it closed) finds
    its widgets gone: that ends quietly, while on an attached pane it is still an error
    (seen in CI as a shutdown race failing the app)."""
    import pytest
    from textual.css.query import NoMatches

    from tui.panes.conflicts import ConflictsPane

    _, url, owner_key, _, _ = served
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        pane = app.query_one(ConflictsPane)

        async def late_load() -> None:
            pane.query_one("#no-such-widget")

        with pytest.raises(NoMatches):  # attached: a real bug is not hidden
            await pane._safe(late_load)()
        await pane.remove()
        await pilot.pause()
        assert not pane.is_attached
        await pane._safe(late_load)()  # gone: nothing to show, no error
