"""Rows of persona distill jobs (a suite's documents cut into chunks in the background).
Plain data access; the job itself runs in daemon/runtime/distill.py, which builds this over
the store's connection."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from state.db import Connection


class DistillJobRecord(TypedDict):
    """A row of distill_jobs: a suite's documents being cut into chunks."""

    id: str
    suite_id: str
    slug: str
    identity_id: str | None
    status: str  # queued | running | done | failed
    total_chunks: int
    done_chunks: int
    documents: int
    error: str | None
    created_at: str
    finished_at: str | None


def _job(row: Any) -> DistillJobRecord:
    return cast(DistillJobRecord, dict(row))


class DistillRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def insert_job(
        self,
        job_id: str,
        *,
        suite_id: str,
        slug: str,
        identity_id: str,
        total_chunks: int,
        documents: int,
        created_at: str,
    ) -> None:
        """A new job, queued."""
        self.conn.execute(
            "insert into distill_jobs (id, suite_id, slug, identity_id, status, total_chunks,"
            " documents, created_at) values (?,?,?,?, 'queued', ?, ?, ?)",
            (job_id, suite_id, slug, identity_id, total_chunks, documents, created_at),
        )

    def running(self, job_id: str) -> None:
        """The job has started."""
        self.conn.execute("update distill_jobs set status = 'running' where id = ?", (job_id,))

    def progress(self, job_id: str, done_chunks: int) -> None:
        """How many of its chunks the job has stored."""
        self.conn.execute("update distill_jobs set done_chunks = ? where id = ?", (done_chunks, job_id))

    def done(self, job_id: str, finished_at: str) -> None:
        """The job stored every chunk."""
        self.conn.execute(
            "update distill_jobs set status = 'done', finished_at = ? where id = ?", (finished_at, job_id)
        )

    def failed(self, job_id: str, error: str, finished_at: str) -> None:
        """The job stopped on ``error``."""
        self.conn.execute(
            "update distill_jobs set status = 'failed', error = ?, finished_at = ? where id = ?",
            (error, finished_at, job_id),
        )

    def job(self, job_id: str) -> DistillJobRecord | None:
        """One job's row, or None."""
        row = self.conn.execute("select * from distill_jobs where id = ?", (job_id,)).fetchone()
        return _job(row) if row is not None else None

    def jobs(self, slug: str) -> list[DistillJobRecord]:
        """A suite's jobs, newest first."""
        rows = self.conn.execute(
            "select * from distill_jobs where slug = ? order by created_at desc", (slug,)
        )
        return [_job(r) for r in rows]
