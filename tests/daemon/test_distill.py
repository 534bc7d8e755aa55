"""Persona/document distillation into a suite's vector collection: jobs with progress, the
seed's chunk metadata, the gate (JSON resumable, uploads never kept)."""

from __future__ import annotations

import aiohttp
import pytest

from daemon import keys
from daemon.runtime.distill import chunk

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

SUITE = {"title": "Persona Lin", "summary": "林老师的教学风格", "license": "CC-BY-4.0"}
DOCS = [
    {
        "text": "林老师上课先讲故事，再讲公式。\n\nShe always asks students to explain back.",
        "source_path": "notes/teaching.md",
        "retrieval_triggers": ["teaching style"],
    },
    {"text": "Office hours are on Thursdays. " * 80, "source_path": "notes/schedule.md"},
]


async def _finish(api, job_id: str) -> dict:
    await api.client.app[keys.SERVICES].distill.drain()
    return await api.get(f"/api/distill-jobs/{job_id}")


def test_chunks_respect_the_size_and_keep_paragraphs():
    pieces = chunk("one.\n\ntwo.\n\n" + "long sentence. " * 200, 300)
    assert pieces[0] == "one.\n\ntwo." and all(len(p) <= 300 for p in pieces)
    assert chunk("x" * 1000, 300) == ["x" * 300, "x" * 300, "x" * 300, "x" * 100]


async def test_distill_job_embeds_chunks_with_metadata(api):
    await api.post("/api/memories", SUITE)
    job = await api.post("/api/memories/persona-lin/persona-distill", {"documents": DOCS, "chunk_chars": 400})
    assert job["status"] in ("queued", "running") and job["documents"] == 2
    done = await _finish(api, job["job_id"])
    assert done["status"] == "done"
    assert done["progress"]["done_chunks"] == done["progress"]["total_chunks"] > 2
    found = await api.get("/api/catalog/persona-lin/search?q=%E8%AE%B2%E6%95%85%E4%BA%8B")  # 讲故事
    top = found["items"][0]
    assert "讲故事" in top["content"]
    meta = top["metadata"]
    assert meta["source_path"] == "notes/teaching.md" and meta["license"] == "CC-BY-4.0"
    assert meta["retrieval_triggers"] == ["teaching style"] and meta["version"] == "1.0.0"
    assert meta["suite_id"].startswith("suite_") and meta["provenance"]["source"]
    listed = await api.get("/api/memories/persona-lin/distill-jobs")
    assert [j["job_id"] for j in listed["jobs"]] == [job["job_id"]]
    # The collection is not workspace memory: context packs do not carry it.
    pack = await api.bootstrap()
    assert "讲故事" not in pack["summary_markdown"]


async def test_multipart_upload_variant(api):
    await api.post("/api/memories", SUITE)
    form = aiohttp.FormData()
    form.add_field("file", b"Grading: rubric first, then comments.", filename="grading.md")
    form.add_field("chunk_chars", "500")
    response = await api.client.post(
        "/api/memories/persona-lin/persona-distill/upload", data=form, headers=api.auth()
    )
    job = await response.json()
    assert response.status == 200, job
    done = await _finish(api, job["job_id"])
    assert done["status"] == "done" and done["progress"]["total_chunks"] == 1


async def test_gate_keeps_json_jobs_and_refuses_uploads(api):
    await api.post("/api/memories", SUITE)
    await api.post(
        "/api/local/updates", {"title": "t", "summary": "s", "severity": "required"}, key=api.owner_key
    )
    blocked = await api.post(
        "/api/memories/persona-lin/persona-distill", {"documents": DOCS, "importance": 5}, status=409
    )
    assert blocked["schema"] == "amp.sync-interrupt.v1" and blocked["sync_intent_id"]
    form = aiohttp.FormData()
    form.add_field("file", b"text", filename="a.md")
    form.add_field("importance", "5")
    response = await api.client.post(
        "/api/memories/persona-lin/persona-distill/upload", data=form, headers=api.auth()
    )
    refused = await response.json()
    assert response.status == 409 and refused["sync_intent_id"] is None
    assert "upload the files again" in refused["error"]["message"]
    await api.post("/api/agent/updates/ack", {})
    resumed = await api.post(f"/api/agent/sync-intents/{blocked['sync_intent_id']}/resume", {})
    done = await _finish(api, resumed["result"]["job_id"])
    assert done["status"] == "done"
    assert len((await api.get("/api/memories/persona-lin/distill-jobs"))["jobs"]) == 1


@pytest.mark.parametrize(
    ("importance", "chunk_chars", "status"),
    [(" 4 ", "400", 200), ("4", " 400\n", 200), ("+4", "400", 422), ("04", "400", 422), ("4", "٤٠٠", 422)],
)
async def test_upload_fields_are_read_as_the_document_says(api, importance, chunk_chars, status):
    """importance is 1-5 and chunk_chars ASCII digits, blanks around them allowed (the
    document's patterns: daemon/api/suite_rules.py)."""
    await api.post("/api/memories", SUITE)
    form = aiohttp.FormData()
    form.add_field("file", "Office hours are on Thursdays.", filename="a.md")
    form.add_field("importance", importance)
    form.add_field("chunk_chars", chunk_chars)
    response = await api.client.post(
        "/api/memories/persona-lin/persona-distill/upload", data=form, headers=api.auth()
    )
    assert response.status == status, await response.text()
