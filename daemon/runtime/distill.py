"""Persona and document distillation: documents are chunked and embedded into a suite's
vector collection (the ``suite:<slug>`` namespace of the one search index), each chunk with
seed 000's metadata (suite_id, source_path, license, provenance, version, retrieval_triggers).

A job is created at once and processed in the background in small batches (each its own
transaction, the event loop free between them); its progress can be read and listed.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

from state.distill_records import DistillJobRecord, DistillRecords
from state.errors import NotFound
from state.identities import IdentityRecord
from state.ids import new_id, now_iso
from state.memories import NewMemory
from state.store import Store

log = logging.getLogger(__name__)
BATCH = 25


def collection(slug: str) -> str:
    return f"suite:{slug}"


def chunk(text: str, max_chars: int) -> list[str]:
    """Paragraph-aligned chunks of at most ``max_chars``; long paragraphs split at sentences."""
    pieces: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = " ".join(paragraph.split())
        if not paragraph:
            continue
        if len(paragraph) <= max_chars:
            pieces.append(paragraph)
            continue
        sentences = re.split(r"(?<=[.!?。！？])\s*", paragraph)
        current = ""
        for sentence in sentences:
            while len(sentence) > max_chars:  # one endless sentence: cut it
                pieces.append(sentence[:max_chars])
                sentence = sentence[max_chars:]
            if current and len(current) + len(sentence) + 1 > max_chars:
                pieces.append(current)
                current = ""
            current = f"{current} {sentence}".strip()
        if current:
            pieces.append(current)
    chunks: list[str] = []
    for piece in pieces:  # pack small paragraphs together
        if chunks and len(chunks[-1]) + len(piece) + 2 <= max_chars:
            chunks[-1] = f"{chunks[-1]}\n\n{piece}"
        else:
            chunks.append(piece)
    return chunks


def _job(job: DistillJobRecord) -> dict[str, Any]:
    return {
        "schema": "amp.persona-distill-job.v1",
        "job_id": job["id"],
        "slug": job["slug"],
        "status": job["status"],
        "documents": job["documents"],
        "progress": {"done_chunks": job["done_chunks"], "total_chunks": job["total_chunks"]},
        "error": job["error"],
        "created_at": job["created_at"],
        "finished_at": job["finished_at"],
        "collection": collection(job["slug"]),
    }


class DistillService:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.records = DistillRecords(store.conn)
        self.tasks: set[asyncio.Task] = set()

    def start(
        self, identity: IdentityRecord, slug: str, documents: list[dict[str, Any]], chunk_chars: int
    ) -> dict[str, Any]:
        """Create the job and schedule its processing; returns the job as created."""
        stored = self.store.suites.version(slug)
        suite, manifest = stored["suite"], stored["manifest"]
        planned = []
        for index, document in enumerate(documents):
            source = str(document.get("source_path") or f"document-{index + 1}")
            triggers = [str(t) for t in document.get("retrieval_triggers") or []][:20]
            for number, text in enumerate(chunk(str(document["text"]), chunk_chars)):
                planned.append((source, number, text, triggers))
        job_id = new_id("djob_")
        with self.store.transaction():
            self.records.insert_job(
                job_id,
                suite_id=suite["id"],
                slug=slug,
                identity_id=identity["id"],
                total_chunks=len(planned),
                documents=len(documents),
                created_at=now_iso(),
            )
        metadata = {
            "suite_id": suite["id"],
            "license": manifest.get("license"),
            "provenance": manifest.get("provenance"),
            "version": stored["version"],
        }
        task = asyncio.get_running_loop().create_task(
            self._run(job_id, slug, planned, metadata, identity["id"]), name=f"distill-{job_id}"
        )
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return self.job(job_id)

    async def _run(
        self, job_id: str, slug: str, planned: list[tuple], metadata: dict[str, Any], identity_id: str
    ) -> None:
        try:
            with self.store.transaction():
                self.records.running(job_id)
            for start in range(0, len(planned), BATCH):
                with self.store.transaction():
                    for source, number, text, triggers in planned[start : start + BATCH]:
                        self.store.memories.create(
                            NewMemory(
                                namespace=collection(slug),
                                kind="chunk",
                                title=f"{source} #{number + 1}",
                                content=text,
                                source="suite_vector",
                                importance=2,
                                triggers=triggers,
                                provenance={
                                    **metadata,
                                    "source_path": source,
                                    "chunk": number,
                                    "retrieval_triggers": triggers,
                                    "job_id": job_id,
                                },
                                identity_id=identity_id,
                            )
                        )
                    self.records.progress(job_id, min(start + BATCH, len(planned)))
                await asyncio.sleep(0)  # let requests through between batches
            with self.store.transaction():
                self.records.done(job_id, now_iso())
        except Exception as exc:  # recorded on the job for the person and the agent
            log.exception("distill job %s failed", job_id)
            with self.store.transaction():
                self.records.failed(job_id, f"{type(exc).__name__}: {exc}", now_iso())

    def job(self, job_id: str) -> dict[str, Any]:
        row = self.records.job(job_id)
        if row is None:
            raise NotFound(f"distill job {job_id} not found")
        return _job(row)

    def jobs(self, slug: str) -> list[dict[str, Any]]:
        self.store.suites.suite(slug)
        return [_job(r) for r in self.records.jobs(slug)]

    def search(self, slug: str, query: str, limit: int) -> list[dict[str, Any]]:
        self.store.suites.suite(slug)
        hits = self.store.search.search(query, [collection(slug)], limit=limit)
        records = self.store.memories.by_seqs([h.seq for h in hits])
        return [
            {
                "id": records[h.seq]["id"],
                "content": records[h.seq]["content"],
                "score": round(h.score, 6),
                "metadata": records[h.seq]["provenance"],
            }
            for h in hits
            if h.seq in records
        ]

    async def drain(self) -> None:
        """Wait for running jobs (shutdown, tests)."""
        if self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)
