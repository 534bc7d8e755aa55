"""The AMP read endpoints of a workspace in the MemoryCloud reference's shapes (contract sheet:
workspace_memory_query, me_workspaces, me_memory_map, workspace_memory_map,
code_memory_context): keys of the answers and of their items, newest first, limits clamped
as the reference clamps them, and what our own clients keep reading."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

SHEET = Path(__file__).resolve().parents[1] / "contract" / "memorycloud-reference-contract.json"
ENTRIES = {e["id"]: e for e in json.loads(SHEET.read_text(encoding="utf-8"))["endpoints"]}


def item_keys(endpoint_id: str) -> set[str]:
    return set(ENTRIES[endpoint_id]["response"]["nested"]["items"]["item_keys"])


def top_keys(endpoint_id: str) -> set[str]:
    return set(ENTRIES[endpoint_id]["response"]["top_level_keys"])


async def deltas(api, summaries: list[str], **body: Any) -> tuple[str, list[str]]:
    pack = await api.bootstrap()
    ids = [(await api.delta(pack["receipt_id"], summary=s, **body))["delta"]["memory_id"] for s in summaries]
    return pack["workspace_id"], ids


async def test_the_memory_query_without_q_is_the_newest_first(api):
    workspace, ids = await deltas(api, [f"note {n}" for n in range(5)])
    found = await api.get(f"/api/workspaces/{workspace}/memory/query")
    assert top_keys("workspace_memory_query") <= set(found)
    assert found["active_memory_view"] is None and found["call_instructions"]
    assert [i["id"] for i in found["items"]] == list(reversed(ids))
    for item in found["items"]:
        assert item_keys("workspace_memory_query") <= set(item), item
    # What our clients read is still there: the record's own fields, and the context joined.
    assert found["items"][0]["content"] == "note 4" and found["items"][0]["version"] == 1
    assert found["context"] == "\n\n---\n\n".join(f"note {n}" for n in (4, 3, 2, 1, 0))


@pytest.mark.parametrize("raw,expected", [("0", 1), ("-3", 1), ("2", 2), ("31", 30), ("999", 30)])
async def test_the_memory_query_limit_is_clamped_to_1_30(api, raw, expected):
    workspace, _ = await deltas(api, [f"note {n}" for n in range(32)])
    found = await api.get(f"/api/workspaces/{workspace}/memory/query?limit={raw}")
    assert len(found["items"]) == expected


async def test_the_memory_query_filters_one_memory_type_exactly(api):
    workspace, ids = await deltas(api, ["a decision"], delta_type="decision")
    await deltas(api, ["a task event"])
    found = await api.get(f"/api/workspaces/{workspace}/memory/query?memory_type=decision")
    assert [i["id"] for i in found["items"]] == ids
    assert (await api.get(f"/api/workspaces/{workspace}/memory/query?memory_type=decisio"))["items"] == []
    # With q it is still the hybrid search (ranked, with a score), filtered the same way.
    searched = await api.get(f"/api/workspaces/{workspace}/memory/query?q=decision&memory_type=decision")
    assert [i["id"] for i in searched["items"]] == ids and "score" in searched["items"][0]


async def test_my_workspaces(api):
    found = await api.get("/api/me/workspaces")
    (workspace,) = found["items"]
    assert item_keys("me_workspaces") <= set(workspace)
    assert workspace["role"] == "writer" and workspace["owned_by_current_user"] is False
    assert workspace["owner_auth_type"] == "human"
    owner = await api.get("/api/me/workspaces", key=api.owner_key)
    assert [w["role"] for w in owner["items"]] == ["owner"]
    assert owner["items"][0]["owned_by_current_user"] is True


@pytest.mark.parametrize("path", ["/api/me/memory-map", "/api/workspaces/{workspace}/memory-map"])
async def test_the_memory_map_lists_the_newest_records_as_assets(api, path):
    workspace, ids = await deltas(api, [f"map note {n}" for n in range(3)])
    run = await api.post(
        "/api/memory/router/select",
        {"task": "record a decision", "what_i_remember": "we chose WAL", "memory_type": "decision_memory"},
    )
    adaptive = (
        await api.post(
            f"/api/memory/forms/{run['run_id']}/submit",
            {
                "payload": {
                    "decision": "SQLite in WAL mode",
                    "context": "local daemon",
                    "rationale": "readers never wait",
                    "retrieval_triggers": ["sqlite"],
                }
            },
        )
    )["memory"]["id"]
    found = await api.get(path.format(workspace=workspace))
    assert found["schema"] == "amp.memory-lens-map.v1" and top_keys("me_memory_map") <= set(found)
    assert found["workspace_id"] == ("" if path.startswith("/api/me") else workspace)
    assert [a["source_id"] for a in found["assets"]] == [adaptive, *reversed(ids)]
    kinds = {a["source_id"]: a["kind"] for a in found["assets"]}
    assert kinds[adaptive] == "adaptive_memory" and kinds[ids[0]] == "memory_delta"
    assert [a["source_id"] for a in found["primary_assets"]] == [adaptive]
    assert len(found["secondary_assets"]) == 3 and found["stats"]["assets"] == 4
    first = found["assets"][0]
    assert first["detail_endpoint"].endswith(f"/api/agent/memories/{adaptive}")
    assert first["updated_at"] and first["workspace_id"] == workspace
    assert {n["kind"] for n in found["nodes"]} == {
        "user",
        "workspace",
        "topic",
        "adaptive_memory",
        "memory_delta",
    }
    node_ids = {n["id"] for n in found["nodes"]}
    assert all(e["source"] in node_ids and e["target"] in node_ids for e in found["edges"])


async def test_the_memory_map_limit_is_clamped_to_20_240(api):
    workspace, _ = await deltas(api, [f"note {n}" for n in range(25)])
    for raw, expected in (("1", 20), ("22", 22), ("100000", 25)):
        found = await api.get(f"/api/workspaces/{workspace}/memory-map?limit={raw}")
        assert len(found["assets"]) == expected, raw


async def test_the_code_memory_context_holds_the_projects_code_memories(api):
    await deltas(
        api, ["the router lives in daemon/api", "unrelated"], delta_type="code_memory", project_key="demo"
    )
    await deltas(api, ["another project's code"], delta_type="code_memory", project_key="other")
    await deltas(api, ["not code"], project_key="demo")
    found = await api.get("/api/projects/demo/code-memory/context")
    assert top_keys("code_memory_context") <= set(found) and found["project_key"] == "demo"
    assert [i["content"] for i in found["items"]] == ["unrelated", "the router lives in daemon/api"]
    assert all(item_keys("workspace_memory_query") <= set(i) for i in found["items"])
    assert found["context"] == "unrelated\n\n---\n\nthe router lives in daemon/api"
    only = await api.get("/api/projects/demo/code-memory/context?q=ROUTER&limit=0")
    assert [i["content"] for i in only["items"]] == ["the router lives in daemon/api"]
    assert (await api.get("/api/projects/nowhere/code-memory/context"))["items"] == []
