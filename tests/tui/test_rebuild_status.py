"""The TUI's status line shows the search index's rebuild as the daemon reports it (GET
/api/local/status), and nothing of it once the index is current: the real daemon app on a
store made by the previous release (tests/fixtures/prev_release_store.db)."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import Static

from state.config import Settings
from state.rebuild import rebuild_now
from state.tokenize import TOKENIZER_VERSION
from tests.tui.helpers import serve, settle
from tui.app import CompanionApp
from tui.client import DaemonClient

FIXTURE = Path(__file__).parent.parent / "fixtures" / "prev_release_store.db"


async def test_the_status_line_shows_the_rebuild_until_it_is_done(paths):
    shutil.copyfile(FIXTURE, paths.database)
    # One batch of two records at start, then a pause longer than the test: a fixed middle.
    settings = Settings(rebuild_batch_records=2, rebuild_pause_ms=600_000)
    async with serve(paths, settings) as daemon:
        app = CompanionApp(DaemonClient(daemon.url, daemon.owner_key))
        async with app.run_test(size=(160, 40)) as pilot:
            status = app.query_one("#status", Static)
            for _ in range(100):
                app.refresh_status()
                await settle(pilot, app)
                if "2 of 249" in str(status.render()):
                    break
            line = str(status.render()).splitlines()[-1]
            assert line.startswith(
                f"search index: rebuilding for tokenizer {TOKENIZER_VERSION} — 2 of 249 records"
                " (0 %), started "
            ), line
            assert line.endswith("; the vectors follow")
            rebuild_now(daemon.store, force=False)  # what the job's next batches would do
            app.refresh_status()
            await settle(pilot, app)
            text = str(status.render())
            assert "search index" not in text and text.startswith("Daemon running")
