"""Adaptive memory under the MemoryCloud reference's contract: the templates, router select
with its storage plan and retrieval policy, a run readable as a form, form submit with the
reference's visibilities and memory keys, and the sync gate as the reference orders it (the
importance follows the visibility; the gate comes before the run is looked up)."""

from __future__ import annotations

import pytest

from daemon.api.amp_adaptive import SELECT, SUBMIT
from daemon.runtime.memory_forms import FORMS_BY_TYPE
from tests.daemon.reference_shapes import request_field_names, shape_problems
from tests.daemon.test_updates_and_sync import publish

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

DECISION = {
    "decision": "use SQLite",
    "context": "local daemon",
    "rationale": "no server",
    "retrieval_triggers": ["sqlite"],
}
REFERENCE_TYPES = {
    "profile_memory",
    "task_execution_memory",
    "project_memory",
    "code_memory",
    "decision_memory",
    "procedure_memory",
    "failure_memory",
    "entity_memory",
    "conversation_memory",
    "collaboration_memory",
}


async def _run(api, key: str | None = None, **body) -> dict:
    return await api.post(
        "/api/memory/router/select",
        {"task": "pick a database", "what_i_remember": "we decided on SQLite", **body},
        key=key,
    )


def count(api, table: str) -> int:
    return api.store.conn.execute(f"select count(*) from {table}").fetchone()[0]


@pytest.mark.parametrize(
    "schema,endpoint_id", [(SELECT, "memory_router_select"), (SUBMIT, "memory_form_submit")]
)
def test_every_field_of_the_sheet_is_declared(schema, endpoint_id):
    assert schema.ignored_fields(dict.fromkeys(request_field_names(endpoint_id))) == []


async def test_templates_are_public_and_keyed_by_memory_type(api):
    response = await api.client.get("/api/memory/templates")
    data = await response.json()
    assert response.status == 200, data
    assert shape_problems("memory_templates", data) == []
    assert set(data["items"]) == REFERENCE_TYPES == set(FORMS_BY_TYPE)
    for template in data["items"].values():
        assert set(template) == {"label", "when", "required", "fields"}
        assert set(template["required"]) <= set(template["fields"])
        assert "retrieval_triggers" in template["required"]


async def test_select_has_the_reference_keys(api):
    run = await _run(api, environment={"repo": "demo"}, workspace_id=None, project_key="demo")
    assert shape_problems("memory_router_select", run) == []
    assert "warnings" not in run
    assert run["selected_memory_type"] == "decision_memory"
    assert run["llm_used"] is False and run["storage_plan"]["audit_version_log"] is True
    assert run["integration_recommendation"]["schema"] == "amp.memory-integration-recommendation.v1"


@pytest.mark.parametrize(
    "text,expected",
    [
        ("the billing service depends on the auth service (a dependency)", "entity_memory"),
        ("in our conversation the user said they promised a demo", "conversation_memory"),
        ("multi-agent collaboration: who owns the shared state", "collaboration_memory"),
    ],
)
async def test_the_reference_types_are_routed(api, text, expected):
    run = await api.post("/api/memory/router/select", {"task": "remember this", "what_i_remember": text})
    assert run["selected_memory_type"] == expected


@pytest.mark.parametrize(
    "body,field", [({"task": "abc"}, "task"), ({"project_key": "p" * 121}, "project_key")]
)
async def test_select_limits_are_the_references(api, body, field):
    data = await api.post(
        "/api/memory/router/select", {"task": "pick a database", "what_i_remember": "w", **body}, status=422
    )
    assert data["detail"]["field"] == field


async def test_a_run_reads_as_a_form_until_it_is_stored(api):
    run = await _run(api)
    form = await api.get(f"/api/memory/forms/{run['run_id']}")
    assert shape_problems("memory_form_get", form) == []
    assert form["status"] == "selected" and form["form_schema"] == run["form_schema"]
    assert form["router_result"]["storage_plan"] == run["storage_plan"]
    stored = await api.post(f"/api/memory/forms/{run['run_id']}/submit", {"payload": DECISION})
    form = await api.get(f"/api/memory/forms/{run['run_id']}")
    assert form["status"] == "stored" and form["memory_ids"] == [stored["memory"]["id"]]


async def test_reading_a_form(api):
    run = await _run(api)
    await api.get("/api/memory/forms/arun_nope", status=404)
    with api.store.transaction():
        foreign_ws = api.store.identities.create_workspace("Foreign", owner_id=None)
        _, foreign = api.store.identities.create_agent("foreign", "codex", workspace_id=foreign_ws["id"])
    refused = await api.get(f"/api/memory/forms/{run['run_id']}", key=foreign, status=403)
    assert run["run_id"] in refused["error"]["message"]
    response = await api.client.get(f"/api/memory/forms/{run['run_id']}")
    assert response.status == 401


@pytest.mark.parametrize("visibility,importance", [("workspace", 4), ("public", 4), ("private", 3)])
async def test_submit_has_the_reference_memory_keys(api, visibility, importance):
    run = await _run(api)
    stored = await api.post(
        f"/api/memory/forms/{run['run_id']}/submit", {"payload": DECISION, "visibility": visibility}
    )
    assert shape_problems("memory_form_submit", stored) == []
    memory = stored["memory"]
    assert memory["type"] == memory["memory_type"] == "decision_memory"
    assert (memory["visibility"], memory["importance"]) == (visibility, importance)
    assert memory["title"] == "use SQLite" and memory["summary"] == "no server"
    assert memory["compiled_markdown"] == memory["content"]
    assert memory["tags"] == ["decision_memory", "sqlite"] and memory["slug"] == "use-sqlite"
    assert memory["provenance"]["payload"] == DECISION  # the structured form is kept


async def test_importance_given_is_kept(api):
    run = await _run(api)
    stored = await api.post(
        f"/api/memory/forms/{run['run_id']}/submit",
        {"payload": DECISION, "visibility": "private", "importance": 5},
    )
    assert stored["memory"]["importance"] == 5


@pytest.mark.parametrize("visibility", ["everyone", "WORKSPACE", ""])
async def test_an_unknown_visibility_is_400(api, visibility):
    run = await _run(api)
    data = await api.post(
        f"/api/memory/forms/{run['run_id']}/submit",
        {"payload": DECISION, "visibility": visibility},
        status=400,
    )
    assert "visibility" in data["error"]["message"]
    assert count(api, "memory_records") == 0


# -- the sync gate --------------------------------------------------------------------------------


async def test_the_gate_comes_before_the_run_is_looked_up(api):
    """With default visibility a gated agent is told to update first, whatever the run id;
    its write is kept as sent."""
    await publish(api)
    blocked = await api.post("/api/memory/forms/arun_nope/submit", {"payload": {"title": "x"}}, status=409)
    interrupt = blocked["detail"]
    assert interrupt["schema"] == "amp.sync-interrupt.v1" and interrupt["importance"] == 4
    intent = await api.get(f"/api/agent/sync-intents/{interrupt['sync_intent_id']}")
    assert intent["body"]["payload"] == {"title": "x"} and intent["status"] == "blocked"


async def test_a_private_submit_goes_through_with_a_notice(api):
    await publish(api)
    run = await _run(api)
    stored = await api.post(
        f"/api/memory/forms/{run['run_id']}/submit", {"payload": DECISION, "visibility": "private"}
    )
    assert stored["update_notice"]["schema"] == "amp.runtime-update-warning.v1"
    assert stored["memory"]["importance"] == 3
    assert count(api, "sync_intents") == 0


async def test_a_bad_visibility_is_refused_before_the_gate(api):
    await publish(api)
    run = await _run(api)
    await api.post(
        f"/api/memory/forms/{run['run_id']}/submit",
        {"payload": DECISION, "visibility": "everyone"},
        status=400,
    )
    assert count(api, "sync_intents") == 0


async def test_a_held_back_form_missing_fields_stays_blocked_on_resume(api):
    """The reference's order: the gate keeps the write, the form is checked when it is
    replayed; a 422 then leaves the intent blocked, to be discarded, and stores nothing."""
    await publish(api)
    run = await _run(api)
    blocked = await api.post(
        f"/api/memory/forms/{run['run_id']}/submit", {"payload": {"decision": "x"}}, status=409
    )
    intent_id = blocked["detail"]["sync_intent_id"]
    await api.post("/api/agent/updates/ack", {})
    refused = await api.post(f"/api/agent/sync-intents/{intent_id}/resume", {}, status=422)
    assert refused["detail"]["missing_fields"] == ["context", "rationale", "retrieval_triggers"]
    assert (await api.get(f"/api/agent/sync-intents/{intent_id}"))["status"] == "blocked"
    assert count(api, "memory_records") == 0
    await api.post(f"/api/agent/sync-intents/{intent_id}/discard", {})
