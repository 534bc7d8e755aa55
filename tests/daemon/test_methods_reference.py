"""The method registry and method query under the MemoryCloud reference's contract (issue #14
item 6): its request fields, public access, 200 even when nothing matches, the echoed query
and every documented key of the registry, the answer and each card."""

from __future__ import annotations

import pytest

from tests.daemon.reference_shapes import request_field_names, shape_problems
from tests.daemon.test_skills import _served

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

REFERENCE_QUERY = {
    "user_message": "I got a 409 sync interrupt when writing an event",
    "task": "finish the release notes",
    "agent_handle": "test-agent",
    "current_route": "/release",
    "runtime": {"type": "codex", "version": "0.42"},
    "installed_skills": ["memory_tool_installer"],
    "max_results": 2,
}


async def _post(api, body, *, key=None):
    headers = {} if key is None else api.auth(key)
    response = await api.client.post("/api/agent/methods/query", json=body, headers=headers)
    return response.status, await response.json()


async def test_registry_is_public_with_the_reference_keys(api):
    response = await api.client.get("/api/agent/methods")  # no key: the reference needs none
    data = await response.json()
    assert response.status == 200, data
    assert data["schema"] == "amp.agent-method-registry.v1"
    assert shape_problems("methods", data) == []
    assert data["base_url"] == str(api.client.make_url("")).rstrip("/")
    assert data["query"] == data["base_url"] + "/api/agent/methods/query"
    assert _served("/api/agent/skills/" + data["recommended_skill"] + "/pull")
    assert data["methods"] == data["items"]  # our earlier key stays


async def test_query_with_the_reference_fields(api):
    status, data = await _post(api, REFERENCE_QUERY)
    assert status == 200, data
    assert "warnings" not in data, data["warnings"]  # every field of the sheet is read
    assert shape_problems("methods_query", data) == []
    assert data["query"] == {**REFERENCE_QUERY, "runtime": {"type": "codex", "version": "0.42"}}
    assert data["result_count"] == len(data["results"]) == 2
    first = data["results"][0]
    assert first["id"] == first["method_id"] == "resume_intent"
    assert isinstance(first["score"], int) and 0 < first["confidence"] <= 1
    assert first["missing_skills"] == []  # resume_intent needs only memory_tool_installer
    assert data["recommended_first_action"].startswith(first["title"])
    assert data["do_not_guess"] is True and data["methods"] == data["results"]
    base = str(api.client.make_url("")).rstrip("/")
    assert first["query_url"] == base + "/api/agent/methods/query"
    assert [base + e.split(" ", 1)[1] for e in first["required_endpoints"]] == first["required_endpoint_urls"]


def test_every_field_of_the_sheet_is_declared():
    from daemon.api.amp_methods import QUERY

    assert QUERY.ignored_fields(dict.fromkeys(request_field_names("methods_query"))) == []


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"user_message": "", "task": ""},
        {"user_message": "  ", "task": "\n"},
        {"user_message": "qwxz zzyq"},
    ],
)
async def test_nothing_to_match_is_200_with_no_results(api, body):
    status, data = await _post(api, body)
    assert status == 200, data
    assert data["result_count"] == 0 and data["results"] == []
    assert "/api/agent/methods" in data["recommended_first_action"]
    assert data["query"]["max_results"] == 3


@pytest.mark.parametrize(
    "runtime", ["claude_code", "Claude Code", {"type": "claude"}, {"name": "claude_code"}]
)
async def test_runtime_as_a_string_or_an_object(api, runtime):
    status, data = await _post(api, {"user_message": "the context is about to compact", "runtime": runtime})
    assert status == 200, data
    assert data["results"][0]["id"] == "claude_code_compaction"
    assert data["query"]["runtime"]["type"] == "claude_code"


async def test_our_earlier_names_still_work(api):
    status, data = await _post(api, {"message": "怎么安装一个记忆套件", "limit": 1}, key=api.agent_key)
    assert status == 200, data
    assert "warnings" not in data
    assert data["query"]["user_message"] == "怎么安装一个记忆套件" and data["query"]["max_results"] == 1
    assert [m["method_id"] for m in data["methods"]] == ["install_suite"]


async def test_installed_skills_name_what_is_missing(api):
    status, data = await _post(
        api,
        {
            "user_message": "install a memory suite package",
            "installed_skills": ["memory_tool_installer"],
            "max_results": 1,
        },
    )
    assert status == 200, data
    assert data["results"][0]["missing_skills"] == ["capsule_installer"]


@pytest.mark.parametrize(
    "body,field",
    [
        ({"max_results": 0}, "max_results"),
        ({"max_results": 9}, "max_results"),
        ({"limit": 9}, "max_results"),
        ({"user_message": "m" * 4001}, "user_message"),
        ({"task": "t" * 1001}, "task"),
        ({"agent_handle": "a" * 121}, "agent_handle"),
        ({"current_route": "r" * 241}, "current_route"),
        ({"runtime": 5}, "runtime"),
        ({"runtime": ["codex"]}, "runtime"),
        ({"installed_skills": "memory_tool_installer"}, "installed_skills"),
        ({"installed_skills": [5]}, "installed_skills"),
        ({"message": "a", "user_message": "b"}, "user_message"),
    ],
)
async def test_invalid_fields_are_422(api, body, field):
    status, data = await _post(api, body)
    assert status == 422, data
    assert data["detail"]["field"] == field
