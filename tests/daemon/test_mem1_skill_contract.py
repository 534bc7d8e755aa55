"""The agent-memory1.0 skill (seed 004) against the daemon as raw HTTP (real app, real store).

For every operation the skill documents, the requests its client sends are kept below as
data, body for body: the endpoint is the one the seed's recall, write, update/delete and
trace chains name; the fields and defaults are the seed's parameter tables (``scope_id``
"edp_agent", ``top_k`` 5, ``threshold`` 0.0, every ``enable_*`` true, ``role``
"assistant"); where the seed names only the endpoint, the body is the one the skill's
published script sends (``num`` 5 for the summary recall, ``page_num`` + ``page_size`` for
paging, ``{"message_id", "user_id"}`` for a trace). Each answer must be 200 with the shape
the skill reads, and must name no ignored field: a field the skill documents is declared.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from daemon.endpoints import WARNINGS_HEADER

USER = "USER_001"
SCOPE = "edp_agent"  # the skill's default scope_id (MEM1_DEFAULT_SCOPE_ID)
QUERY = f"用户 {USER} 的历史处理记录"  # the seed's search call: "用户 {user_id} 的历史处理记录"
FLAGS = {"enable_long_term_mem": True, "enable_semantic_memory": True, "enable_episodic_memory": True,
         "enable_summary_memory": True, "enable_user_profile": True}

# search: get_variables -> search_memory -> search_user_history_summary -> (all empty) page
SEARCH_CALLS = (
    ("/get_variables/", {"user_id": USER, "scope_id": SCOPE}),
    ("/search_memory/", {"query": QUERY, "num": 5, "user_id": USER, "scope_id": SCOPE, "threshold": 0.0}),
    ("/search_user_history_summary/", {"query": QUERY, "num": 5, "user_id": USER, "scope_id": SCOPE,
                                       "threshold": 0.0}),
    ("/get_user_mem_by_page/", {"user_id": USER, "scope_id": SCOPE, "page_num": 1, "page_size": 10}),
)
# get (top_k 20): one page with the real total, timestamps and source_id
GET_CALL = ("/get_user_mem_by_page_with_total/", {"user_id": USER, "scope_id": SCOPE, "page_num": 1,
                                                   "page_size": 20})
# save {"content": "处理结果...", "role": "assistant"} (session_id "" is left out)
SAVE_CALL = ("/add_messages/", {"user_id": USER, "scope_id": SCOPE, "messages": [
    {"role": "assistant", "content": "处理结果..."}], **FLAGS})
# save {"content": "中间结果...", "buffer": true} then flush: the buffer in one add_messages
FLUSH_CALL = ("/add_messages/", {"user_id": USER, "scope_id": SCOPE, "messages": [
    {"role": "assistant", "content": "中间结果..."}], **FLAGS})
UPDATE_CALL = ("/update_mem_by_id/", {"mem_id": "{mem_id}", "memory": "修正后的内容...", "user_id": USER,
                                      "scope_id": SCOPE})
DELETE_CALL = ("/delete_mem_by_id/", {"mem_id": "{mem_id}", "user_id": USER, "scope_id": SCOPE})
BATCH_DELETE_CALL = ("/batch_delete_mem/", {"mem_ids": ["mem_abc", "mem_def"], "user_id": USER,
                                            "scope_id": SCOPE})
UPDATE_VARIABLES_CALL = ("/update_variables/", {"variables": {"status": "normal", "priority": "high"},
                                                "user_id": USER, "scope_id": SCOPE})
DELETE_VARIABLES_CALL = ("/delete_variables/", {"names": ["old_var_name"], "user_id": USER, "scope_id": SCOPE})
# trace: the skill adds user_id when it has one, never a scope_id
TRACE_CALL = ("/get_message_by_id/", {"message_id": "{message_id}", "user_id": USER})
TRACE_BY_ID_CALL = ("/get_message_by_id/", {"message_id": "{message_id}"})


def fill(body: Any, **values: str) -> Any:
    """The body with its ``{placeholder}`` strings replaced (the seed's {mem_id}, ...)."""
    if isinstance(body, dict):
        return {k: fill(v, **values) for k, v in body.items()}
    if isinstance(body, list):
        return [fill(v, **values) for v in body]
    if isinstance(body, str) and body.startswith("{") and body.endswith("}") and body[1:-1] in values:
        return values[body[1:-1]]
    return copy.deepcopy(body)


async def call(api, documented: tuple[str, dict[str, Any]], status: int = 200, **values: str) -> Any:
    """Send a documented call; its answer has ``status`` and names no ignored field."""
    path, body = documented
    response = await api.client.post(path, json=fill(body, **values), headers=api.auth())
    answer = await response.json()
    assert response.status == status, answer
    assert WARNINGS_HEADER not in response.headers, response.headers[WARNINGS_HEADER]
    assert not (isinstance(answer, dict) and "warnings" in answer), answer
    return answer


def has_local_offset(timestamp: str) -> bool:
    return datetime.fromisoformat(timestamp).utcoffset() is not None


async def saved(api) -> list[dict[str, Any]]:
    """Save the seed's direct write and return the memories the get call lists."""
    answer = await call(api, SAVE_CALL)
    assert (answer["status"], answer["message"]) == ("success", "Messages added successfully")
    assert len(answer["message_ids"]) == 1
    return (await call(api, GET_CALL))["results"]


async def test_trace_with_user_id_and_no_scope_finds_the_default_scope_message(api):
    """Issue #14: the skill traces with {message_id, user_id}; the message was saved under
    the default scope edp_agent. user_id and scope_id are independent optional filters."""
    memories = await saved(api)
    source_id = next(m["source_id"] for m in memories if m["type"] != "summary")
    traced = await call(api, TRACE_CALL, message_id=source_id)
    assert traced["found"] is True and traced["message_id"] == source_id
    assert (traced["role"], traced["content"]) == ("assistant", "处理结果...")
    assert has_local_offset(traced["timestamp"])
    assert (await call(api, TRACE_BY_ID_CALL, message_id=source_id))["found"] is True
    matching = [{"scope_id": SCOPE}, {"user_id": USER, "scope_id": SCOPE}]
    for filters in matching:
        assert (await call(api, ("/get_message_by_id/", {"message_id": source_id, **filters})))["found"] is True
    for filters in ({"user_id": "USER_002"}, {"scope_id": "other_scope"},
                    {"user_id": USER, "scope_id": "other_scope"}, {"user_id": "USER_002", "scope_id": SCOPE}):
        answer = await call(api, ("/get_message_by_id/", {"message_id": source_id, **filters}))
        assert answer == {"found": False, "message_id": source_id}, filters
    assert await call(api, TRACE_CALL, message_id="msg_nonexistent_id") == {
        "found": False, "message_id": "msg_nonexistent_id"}


async def test_search_runs_the_four_recalls_with_the_documented_bodies(api):
    await call(api, UPDATE_VARIABLES_CALL)
    # Before anything is saved every recall is empty: the page fallback runs, and is empty too.
    variables, vector, summary, page = [await call(api, c) for c in SEARCH_CALLS]
    assert variables == {"variables": {"status": "normal", "priority": "high"}}
    assert vector == {"results": []} and summary == {"results": []}
    assert page == {"results": [], "total": 0}
    await call(api, ("/add_messages/", {**SAVE_CALL[1], "messages": [
        {"role": "assistant", "content": f"2024-01-15，用户 {USER} 处理结论：正常"}]}))
    vector, summary = [await call(api, c) for c in SEARCH_CALLS[1:3]]
    assert vector["results"] and summary["results"]
    for item in vector["results"] + summary["results"]:
        assert set(item) == {"mem_id", "content", "type", "score"} and 0 <= item["score"] <= 1
    assert {i["type"] for i in summary["results"]} == {"summary"}
    assert "summary" not in {i["type"] for i in vector["results"]}
    page = await call(api, SEARCH_CALLS[3])
    assert page["total"] == len(page["results"]) == 2
    assert all(set(item) == {"mem_id", "content", "type"} for item in page["results"])


async def test_page_num_is_the_page_index(api):
    """The skill pages with ``page_num``; the server's own name is ``page_idx``."""
    await saved(api)
    everything = (await call(api, GET_CALL))["results"]
    second = await call(api, ("/get_user_mem_by_page_with_total/", {**GET_CALL[1], "page_num": 2, "page_size": 1}))
    assert [m["mem_id"] for m in second["results"]] == [everything[1]["mem_id"]]
    assert second["total"] == len(everything)


async def test_get_lists_with_the_total_timestamps_and_source_ids(api):
    memories = await saved(api)
    answer = await call(api, GET_CALL)
    assert answer["total"] == len(memories) == 2
    for item in memories:
        assert set(item) == {"mem_id", "content", "type", "timestamp", "source_id"}
        assert has_local_offset(item["timestamp"]) and item["source_id"].startswith("msg_")
    assert {m["type"] for m in memories} == {"episodic_memory", "summary"}


async def test_save_direct_buffered_flush_and_empty_content(api):
    await saved(api)
    flushed = await call(api, FLUSH_CALL)
    assert flushed["status"] == "success" and len(flushed["message_ids"]) == 1
    contents = {m["content"] for m in (await call(api, GET_CALL))["results"]}
    assert {"处理结果...", "中间结果..."} <= contents
    # The skill filters empty content itself; sent anyway, the server answers 422 (seed v1.1).
    response = await api.client.post("/add_messages/", headers=api.auth(), json={
        **SAVE_CALL[1], "messages": [{"role": "assistant", "content": "  "}]})
    assert response.status == 422
    assert await response.json() == {"detail": "No valid messages (all content is empty)"}


async def test_update_delete_and_batch_delete(api):
    first, second = await saved(api)
    updated = await call(api, UPDATE_CALL, mem_id=first["mem_id"])
    assert updated == {"status": "success", "message": f"Memory {first['mem_id']} updated successfully"}
    listed = {m["mem_id"]: m["content"] for m in (await call(api, GET_CALL))["results"]}
    assert listed[first["mem_id"]] == "修正后的内容..."
    deleted = await call(api, DELETE_CALL, mem_id=first["mem_id"])
    assert deleted == {"status": "success", "message": f"Memory {first['mem_id']} deleted successfully"}
    batch = await call(api, BATCH_DELETE_CALL)  # the seed's literal ids, which do not exist
    assert (batch["status"], batch["deleted"], batch["failed"]) == ("success", 0, 2)
    assert [e["mem_id"] for e in batch["errors"]] == ["mem_abc", "mem_def"]
    real = await call(api, ("/batch_delete_mem/", {**BATCH_DELETE_CALL[1], "mem_ids": [second["mem_id"]]}))
    assert (real["deleted"], real["failed"], real["errors"]) == (1, 0, [])
    assert (await call(api, GET_CALL))["results"] == []
    # A memory that is not the caller's (or no longer exists) is 404 with a string detail.
    gone = await call(api, UPDATE_CALL, status=404, mem_id=first["mem_id"])
    assert isinstance(gone["detail"], str)


async def test_update_and_delete_variables(api):
    updated = await call(api, UPDATE_VARIABLES_CALL)
    assert (updated["status"], updated["message"]) == ("success", "Variables updated successfully")
    await call(api, ("/update_variables/", {**UPDATE_VARIABLES_CALL[1], "variables": {"old_var_name": "x"}}))
    deleted = await call(api, DELETE_VARIABLES_CALL)
    assert deleted["status"] == "success" and deleted["deleted"] is True and deleted["deleted_count"] == 1
    assert await call(api, SEARCH_CALLS[0]) == {"variables": {"status": "normal", "priority": "high"}}


async def test_health_answers_what_mem1_clients_expect(api):
    response = await api.client.get("/health")  # no key: health checks run before any setup
    assert response.status == 200
    health = await response.json()
    assert (health["status"], health["message"]) == ("healthy", "Memory Engine API is running")
