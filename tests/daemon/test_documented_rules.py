"""The rules a request model states only in the document (its service refuses with the status
and message its clients have always had) hold both ways: a body the OpenAPI document calls
valid is not refused for its content, and one it calls invalid is refused. Each case is checked
against the document with jsonschema and sent to the real app."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from daemon.runtime.suite_sync import DAY

SUITE = {"title": "Rules suite", "summary": "a suite for the documented rules", "license": "MIT"}
MANIFEST = {"schema": "amp.memory.v1", "title": "ab", "license": "MIT", "provenance": {"source_type": "x"}}
VALID, INVALID = True, False

CASES: list[tuple[str, dict[str, Any], bool]] = [
    # a suite sync: one event (text) or several (events), each with text that is not blank
    ("/api/memories/rules-suite/sync", {"text": "shipped"}, VALID),
    ("/api/memories/rules-suite/sync", {"text": "   "}, INVALID),
    ("/api/memories/rules-suite/sync", {}, INVALID),
    ("/api/memories/rules-suite/sync", {"text": "a", "events": [{"summary": "b"}]}, INVALID),
    ("/api/memories/rules-suite/sync", {"text": None, "events": [{"summary": "b"}]}, VALID),
    ("/api/memories/rules-suite/sync", {"events": []}, INVALID),
    ("/api/memories/rules-suite/sync", {"events": [{"summary": " "}]}, INVALID),
    ("/api/memories/rules-suite/sync", {"events": [{"text": "b"}]}, VALID),
    ("/api/memories/rules-suite/sync", {"events": [{"summary": None, "text": "b"}]}, INVALID),
    ("/api/memories/rules-suite/sync", {"events": [{"summary": "b", "tags": [1]}]}, INVALID),
    ("/api/memories/rules-suite/sync", {"text": "x", "occurred_at": "2024-02-29T10:00:00Z"}, VALID),
    ("/api/memories/rules-suite/sync", {"text": "x", "occurred_at": "2023-02-29T10:00:00Z"}, INVALID),
    ("/api/memories/rules-suite/sync", {"events": [{"summary": "b", "occurred_at": "2024-13-01"}]}, INVALID),
    # a suite: its manifest, version, visibility, slug and memory
    ("/api/memories/validate", {"title": "ab", "summary": "s"}, VALID),
    ("/api/memories/validate", {"title": "ab", "summary": "s", "manifest": {}}, INVALID),
    ("/api/memories/validate", {"title": "ab", "summary": "s", "manifest": MANIFEST}, VALID),
    (
        "/api/memories/validate",
        {"title": "ab", "summary": "s", "manifest": {**MANIFEST, "version": "1.0"}},
        INVALID,
    ),
    (
        "/api/memories/validate",
        {"title": "ab", "summary": "s", "manifest": {**MANIFEST, "provenance": {"source_type": 5}}},
        INVALID,
    ),
    (
        "/api/memories/validate",
        {
            "title": "ab",
            "summary": "s",
            "manifest": {**MANIFEST, "provenance": {"source_type": "", "source": "x"}},
        },
        VALID,
    ),
    ("/api/memories/validate", {"title": "ab", "summary": "s", "provenance": {}}, INVALID),
    ("/api/memories/validate", {"title": "ab", "summary": "s", "version": ""}, VALID),
    ("/api/memories/validate", {"title": "ab", "summary": "s", "version": "1.0"}, INVALID),
    ("/api/memories/validate", {"title": "ab", "summary": "s", "visibility": "secret"}, INVALID),
    ("/api/memories/validate", {"title": "ab", "summary": "s", "slug": "A"}, INVALID),
    ("/api/memories/validate", {"title": "ab", "summary": "s", "memory_md": " "}, INVALID),
    (
        "/api/memories/validate",
        {"title": "ab", "summary": "s", "memory_md": "", "work_memory": [{"content": "x"}]},
        VALID,
    ),
    (
        "/api/memories/validate",
        {"title": "ab", "summary": "s", "memory_md": "", "work_memory": {"2024-01-01": "x"}},
        VALID,
    ),
    (
        "/api/memories/validate",
        {"title": "ab", "summary": "s", "memory_md": "", "work_memory": {"2024-01-01": " "}},
        INVALID,
    ),
    (
        "/api/memories/validate",
        {"title": "ab", "summary": "s", "work_memory": [{"date": 0, "content": "x"}]},
        INVALID,
    ),
    (
        "/api/memories/validate",
        {"title": "ab", "summary": "s", "work_memory": [{"date": "", "text": "x"}]},
        VALID,
    ),
    ("/api/memories/validate", {"title": "ab", "summary": "s", "work_memory": {"2024-02-30": "x"}}, INVALID),
    # persona distillation: at least one document, each with text
    ("/api/memories/rules-suite/persona-distill", {"documents": []}, INVALID),
    ("/api/memories/rules-suite/persona-distill", {"documents": [{"text": " "}]}, INVALID),
    (
        "/api/memories/rules-suite/persona-distill",
        {"documents": [{"text": "x", "retrieval_triggers": [1]}]},
        INVALID,
    ),
    (
        "/api/memories/rules-suite/persona-distill",
        {"documents": [{"text": "x", "retrieval_triggers": None}]},
        VALID,
    ),
    # agent-memory1.0: a message with content, a scope without "/", string variables
    ("/add_messages/", {"messages": [{"role": "user", "content": " "}]}, INVALID),
    ("/add_messages/", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant"}]}, VALID),
    ("/add_messages/", {"scope_id": "a/b", "messages": [{"content": "hi"}]}, INVALID),
    ("/add_messages/", {"scope_id": "", "messages": [{"content": "hi"}]}, INVALID),
    ("/update_variables/", {"variables": {"mood": 1}}, INVALID),
    ("/update_variables/", {"variables": {"mood": "calm"}}, VALID),
    # a memory form's visibility is one of three (checked before the run is looked up: 404)
    ("/api/memory/forms/no-such-run/submit", {"payload": {}, "visibility": "secret"}, INVALID),
    ("/api/memory/forms/no-such-run/submit", {"payload": {}, "visibility": "private"}, VALID),
]


def _request_schema(document: dict[str, Any], path: str) -> dict[str, Any]:
    for template, item in document["paths"].items():
        pattern = template.replace("{slug}", "rules-suite").replace("{run_id}", "no-such-run")
        if pattern == path:
            return item["post"]["requestBody"]["content"]["application/json"]["schema"]
    raise AssertionError(f"{path} is not in the document")


async def test_the_document_and_the_server_agree_on_each_rule(api):
    await api.post("/api/memories", SUITE)
    document = await api.get("/api/openapi.json")
    disagreements = []
    for path, body, valid in CASES:
        documented = Draft202012Validator(_request_schema(document, path)).is_valid(body)
        response = await api.client.post(path, json=body, headers=api.auth())
        accepted = response.status < 400 or response.status == 404
        if documented is not valid or accepted is not valid:
            disagreements.append((path, body, f"expected {valid}", documented, response.status))
    assert not disagreements, disagreements


@pytest.mark.parametrize("year", [0, 1, 4, 100, 400, 1900, 2000, 2023, 2024, 2100, 2400, 9996, 9999])
def test_the_date_pattern_reads_the_dates_that_python_reads(year):
    for month in range(14):
        for day in range(33):
            text = f"{year:04d}-{month:02d}-{day:02d}"
            try:
                date.fromisoformat(text)
                readable = True
            except ValueError:
                readable = False
            assert bool(DAY.fullmatch(text)) is readable, text
