"""Installing a suite into a workspace: facts with provenance, the lens in context packs,
contradictions held for a person, the installed-open-memory record."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

SUITE = {
    "title": "Ops Handbook",
    "summary": "运维手册 for the platform team",
    "license": "CC-BY-4.0",
    "long_term_markdown": "# Ops\n\n- Deploy to production only on Fridays after review\n"
    "- 先检查监控告警再发布\n- Rollbacks use the blue-green switch\n",
    "work_memory": {"2026-11-02": "- Rotated the TLS certificates\n"},
    "dreams_markdown": "Small releases are calmer releases.\n",
}


async def _install(api, **extra):
    await api.post("/api/memories", SUITE)
    return await api.post("/api/agent/open-memories/install", {"slug": "ops-handbook", **extra})


async def test_published_suite_is_not_in_packs_until_installed(api):
    await api.post("/api/memories", SUITE)
    before = await api.bootstrap(project_key="ops")
    assert "Active Installed Memory Lenses" not in before["summary_markdown"]
    assert "blue-green" not in before["summary_markdown"]
    activation = await api.post(
        "/api/agent/open-memories/install", {"slug": "ops-handbook", "project_key": "ops"}
    )
    assert activation["schema"] == "amp.memory-native-activation.v1"
    summary = activation["runtime_context_pack"]["summary_markdown"]
    assert "## Active Installed Memory Lenses" in summary and "Ops Handbook 1.0.0" in summary
    assert set(activation["refresh_requests"]) == {"bootstrap_context", "memory_brief"}
    after = await api.bootstrap(project_key="ops")
    assert "Rollbacks use the blue-green switch" in after["summary_markdown"]
    lens = next(h for h in after["retrieval_handles"] if h["kind"] == "installed_open_memory")
    detail = await api.get(urlsplit(lens["detail_endpoint"]).path)
    assert detail["installed_memory_id"] == activation["installed_memory_id"]


async def test_install_follows_the_seed_order_and_records_provenance(api):
    activation = await _install(api)
    record = activation["installed_open_memory"]
    steps = record["steps"]
    order = [
        "suite/manifest.json",
        "manifest.json",
        "memory_tool_installer",
        "agent.instructions.md",
        "MEMORY.md",
        "memory/2026-11-02.md",
        "DREAMS.md",
        "retrieval test",
    ]
    positions = [next(i for i, s in enumerate(steps) if key in s) for key in order]
    assert positions == sorted(positions), steps
    assert record["retrieval_test"]["passed"] is True
    assert record["version"] == "1.0.0" and len(record["archive_sha256"]) == 64
    kinds = {m["file"]: m["memory_type"] for m in record["memories"]}
    assert kinds == {"MEMORY.md": "fact", "memory/2026-11-02.md": "event", "DREAMS.md": "reflection"}
    memory = await api.get(f"/api/agent/memories/{record['memories'][0]['id']}")
    provenance = memory["memory"]["provenance"]
    assert provenance["slug"] == "ops-handbook" and provenance["license"] == "CC-BY-4.0"
    assert len(provenance["file_sha256"]) == 64


async def test_a_contradicting_suite_fact_becomes_a_conflict(api):
    pack = await api.bootstrap(project_key="ops")
    await api.delta(
        pack["receipt_id"], summary="Deploy to production only on Tuesdays after review", importance=4
    )
    activation = await _install(api, project_key="ops")
    record = activation["installed_open_memory"]
    assert len(record["conflict_ids"]) == 1
    conflicts = (await api.get("/api/local/conflicts", key=api.owner_key))["conflicts"]
    (conflict,) = [c for c in conflicts if c["kind"] == "suite_fact_contradiction"]
    assert (
        "Fridays" in conflict["detail"]["suite_fact"] and "Tuesdays" in conflict["detail"]["workspace_memory"]
    )
    # The workspace's own memory is untouched and the suite's version is not stored.
    found = await api.get(f"/api/workspaces/{pack['workspace_id']}/memory/query?q=deploy%20production")
    contents = [item["content"] for item in found["items"]]
    assert any("Tuesdays" in c for c in contents) and not any("Fridays" in c for c in contents)


async def test_other_workspaces_cannot_read_the_installation(api):
    activation = await _install(api)
    with api.store.transaction():
        other_ws = api.store.identities.create_workspace("Other", owner_id=None)
    key = api.new_agent("outsider", workspace_id=other_ws["id"])
    await api.get(
        f"/api/agent/installed-open-memories/{activation['installed_memory_id']}", key=key, status=404
    )
    await api.post("/api/agent/open-memories/install", {"slug": "nope"}, status=404)
