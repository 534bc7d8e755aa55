"""Long jobs show the daemon's own progress: a persona distill job started through the real
daemon, watched on the Home tab while it runs."""

from __future__ import annotations

from textual.widgets import ProgressBar

from daemon import keys
from daemon.runtime.distill import BATCH
from tests.tui.helpers import settle
from tui import progress
from tui.app import CompanionApp
from tui.client import DaemonClient
from tui.formats import Formats
from tui.progress import JobProgress, job_label, pick


async def test_running_distill_jobs_show_the_daemons_counts(served, monkeypatch):
    server, url, owner_key, agent_http, _ = served
    monkeypatch.setattr(progress, "POLL_SECONDS", 0.1)  # sample often: the jobs take ~2 s here
    suite = (
        await agent_http.post(
            "/api/memories",
            json={"title": "Long reader", "summary": "many short paragraphs", "license": "CC-BY-4.0"},
        )
    ).json()
    # Two jobs of 3000 chunks of at most 100 characters: 120 batches of 25 each, every batch
    # its own transaction; running side by side, each takes twice as long.
    text = "\n\n".join(f"Paragraph {n}: read the change before the description, twice." for n in range(3000))
    app = CompanionApp(DaemonClient(url, owner_key))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert "none yet" in str(app.query_one("#long-jobs-title").render())
        jobs = [
            (
                await agent_http.post(
                    f"/api/memories/{suite['slug']}/persona-distill",
                    json={"documents": [{"text": text, "source_path": f"long-{n}.md"}], "chunk_chars": 100},
                )
            ).json()
            for n in (1, 2)
        ]
        totals = {job["job_id"]: job["progress"]["total_chunks"] for job in jobs}
        app.action_reload()  # what the status refresh does every 3 s
        seen: dict[str, list[float]] = {job_id: [] for job_id in totals}
        for _ in range(600):
            await pilot.pause(0.02)
            for row in app.query(JobProgress):
                assert row.bar.total == totals[row.job["job_id"]]
                seen[row.job["job_id"]].append(row.bar.progress)
            if all(row.job["status"] == "done" for row in app.query(JobProgress)) and app.query(JobProgress):
                break
        await server.app[keys.SERVICES].distill.drain()
        await settle(pilot, app)
        for job_id, values in seen.items():
            total = totals[job_id]
            assert values == sorted(values), "progress never goes back"
            assert all(p % BATCH == 0 or p == total for p in values), "only counts the daemon reported"
            assert any(0 < p < total for p in values), "the bar moved while the job ran"
            assert values[-1] == total
        for row in app.query(JobProgress):
            assert row.bar.percentage == 1 and row.query_one(ProgressBar) is row.bar
            assert f"done · {totals[row.job['job_id']]} chunks" in str(row.label.render())


def job(status: str, done: int, total: int, created: str, **extra) -> dict:
    return {
        "job_id": f"djob_{created}",
        "slug": "s",
        "status": status,
        "documents": 1,
        "progress": {"done_chunks": done, "total_chunks": total},
        "error": extra.get("error"),
        "created_at": created,
        "finished_at": extra.get("finished_at"),
    }


def test_active_jobs_first_then_the_latest_finished():
    jobs = [job("done", 3, 3, f"2026-05-18T08:0{n}:00Z") for n in range(5)]
    jobs.append(job("running", 25, 100, "2026-05-18T07:00:00Z"))
    picked = pick(jobs)
    assert [j["status"] for j in picked] == ["running", "done", "done", "done"]
    assert [j["created_at"][14:16] for j in picked[1:]] == ["04", "03", "02"]


def test_a_failed_job_says_how_far_it_got():
    formats = Formats()
    label = job_label(job("failed", 50, 120, "2026-05-18T08:00:00Z", error="OSError: disk [full]"), formats)
    assert "at 50/120 chunks" in label and "disk \\[full]" in label
