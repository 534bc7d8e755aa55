"""Long jobs with real progress: persona distill jobs, as the daemon counts them.

A distill job chunks and embeds documents into a suite's collection in batches; the daemon
records ``done_chunks`` of ``total_chunks`` after every batch (``GET /api/distill-jobs/{id}``).
Each job gets a line and a progress bar that shows exactly those two numbers: no estimate, no
animation, nothing the daemon did not report. Bars of jobs still queued or running are
refreshed from the daemon every half second, finished ones when the list reloads.
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, ProgressBar, Static
from textual.worker import Worker

from tui.client import DaemonClient, DaemonError
from tui.formats import Formats

ACTIVE = ("queued", "running")
FINISHED_SHOWN = 3  # finished jobs listed besides the active ones (the most recent first)
POLL_SECONDS = 0.5
TITLE = "[b]Long jobs[/b] (persona distill: chunks embedded)"
NONE_YET = ": none yet"


def job_label(job: dict[str, Any], formats: Formats) -> str:
    """One line about a job: what, how far (in the daemon's own counts), and since when."""
    done, total = job["progress"]["done_chunks"], job["progress"]["total_chunks"]
    what = f"[b]{escape(job['slug'])}[/b]"
    if job["status"] == "queued":
        state = f"queued · {total} chunks · {formats.ago(job['created_at'])}"
    elif job["status"] == "running":
        state = f"{done}/{total} chunks · started {formats.ago(job['created_at'])}"
    elif job["status"] == "done":
        state = f"done · {total} chunks · {formats.ago(job['finished_at'])}"
    else:
        error = escape((job.get("error") or "unknown error")[:80])
        state = f"[red]{escape(job['status'])}[/] at {done}/{total} chunks: {error}"
    return f"{what} {state}"


def pick(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every active job, then the few most recently created finished ones."""
    ordered = sorted(jobs, key=lambda j: j["created_at"], reverse=True)
    active = [j for j in ordered if j["status"] in ACTIVE]
    finished = [j for j in ordered if j["status"] not in ACTIVE][:FINISHED_SHOWN]
    return active + finished


async def list_jobs(client: DaemonClient) -> list[dict[str, Any]]:
    """The distill jobs of every suite the owner has, of any visibility (the catalog lists
    only public ones; the daemon lists jobs per suite)."""
    suites = (await client.get("/api/me/memories"))["items"]
    jobs: list[dict[str, Any]] = []
    for suite in suites:
        jobs += (await client.get(f"/api/memories/{suite['slug']}/distill-jobs"))["jobs"]
    return pick(jobs)


class JobProgress(Horizontal):
    """One job: its line and a bar of done/total chunks."""

    DEFAULT_CSS = """
    JobProgress { height: 1; }
    JobProgress > Label { width: 1fr; }
    JobProgress > ProgressBar { width: auto; }
    JobProgress Bar { width: 24; }
    """

    def __init__(self, job: dict[str, Any], formats: Formats, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.job = job
        self.formats = formats
        # Held, not queried: the daemon's numbers may arrive before the children are mounted.
        self.label = Label(job_label(job, formats))
        self.bar = ProgressBar(total=job["progress"]["total_chunks"], show_eta=False)

    def compose(self) -> ComposeResult:
        yield self.label
        yield self.bar

    def on_mount(self) -> None:
        self.show(self.job)

    def show(self, job: dict[str, Any]) -> None:
        self.job = job
        self.label.update(job_label(job, self.formats))
        self.bar.update(total=job["progress"]["total_chunks"], progress=job["progress"]["done_chunks"])


class LongJobs(Vertical):
    """The list of distill jobs, polling the daemon while any of them is active."""

    DEFAULT_CSS = """
    LongJobs { height: auto; max-height: 8; padding: 0 1; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: dict[str, JobProgress] = {}
        self.polling: Worker[None] | None = None

    @property
    def formats(self) -> Formats:
        return self.app.formats  # type: ignore[attr-defined]

    def compose(self) -> ComposeResult:
        yield Static(TITLE + NONE_YET, id="long-jobs-title")

    def on_mount(self) -> None:
        self.set_interval(POLL_SECONDS, self.poll)

    def active(self) -> list[str]:
        return [job_id for job_id, row in self.rows.items() if row.job["status"] in ACTIVE]

    async def show(self, jobs: list[dict[str, Any]]) -> None:
        """Show exactly these jobs (in this order), keeping the rows that stay."""
        title = self.query_one("#long-jobs-title", Static)
        title.update(TITLE if jobs else TITLE + NONE_YET)
        if [job["job_id"] for job in jobs] != list(self.rows):  # other jobs, or another order
            await self.remove_children(JobProgress)
            self.rows = {job["job_id"]: JobProgress(job, self.formats) for job in jobs}
            await self.mount_all(self.rows.values())
        else:
            for job in jobs:
                self.rows[job["job_id"]].show(job)

    def poll(self) -> None:
        """Ask the daemon how far the active jobs are (unless the last answer is still due)."""
        if self.active() and (self.polling is None or self.polling.is_finished):
            self.polling = self.run_worker(self._poll, group="long-jobs-poll")

    async def _poll(self) -> None:
        client: DaemonClient = self.app.client  # type: ignore[attr-defined]
        for job_id in self.active():
            try:
                job = await client.get(f"/api/distill-jobs/{job_id}")
            except DaemonError:
                return  # the status line says the daemon is gone; the next reload retries
            if job_id in self.rows:
                self.rows[job_id].show(job)
