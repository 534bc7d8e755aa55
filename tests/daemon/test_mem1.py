"""agent-memory1.0 (seed 004) over the real app and store."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.daemon.neighbours import MATCHES, NEIGHBOURS, QUERY, only_matches

ALICE = {"user_id": "alice", "scope_id": "edp_agent"}


async def _add(api, who=ALICE, **extra):
    body = {**who, "session_id": "s1", "messages": [
        {"role": "user", "content": "I prefer green tea in the morning"},
        {"role": "assistant", "content": "用户在柏林工作，周五开会"}], **extra}
    return await api.post("/add_messages/", body)


async def test_the_best_match_scores_one_whichever_rankings_the_search_used(api):
    """The score is measured against a hit first in every ranking the search used: an
    English query ranks by words alone, and its best match scored 0.5 at most, so a client's
    threshold above that (a cosine it is used to) found nothing."""
    await _add(api)
    # More matches than the search asks for (4 x num): the words alone rank, no vector scan
    # fills in.
    teas = [{"role": "user", "content": f"tea note {n}: the tea shop on street {n}"} for n in range(60)]
    await api.post("/add_messages/", {**ALICE, "session_id": "s2", "messages": teas})
    english = await api.post("/search_memory/", {**ALICE, "query": "green tea", "threshold": 0.9})
    top = english["results"][0]  # before: none (0.5 at best)
    assert top["score"] == 1.0 and "green tea" in top["content"]
    assert all(r["score"] >= 0.9 for r in english["results"])
    ranked = await api.post("/search_memory/", {**ALICE, "query": "green tea", "threshold": 0.0})
    scores = [r["score"] for r in ranked["results"]]
    assert len(scores) == 10 and scores == sorted(scores, reverse=True) and scores[-1] > 0.8
    # A Chinese query ranks by words and vectors: first in both is 1 too.
    chinese = await api.post("/search_memory/", {**ALICE, "query": "柏林工作", "threshold": 0.0})
    assert chinese["results"][0]["score"] == 1.0 and "柏林" in chinese["results"][0]["content"]
    assert all(0 < r["score"] <= 1 for r in chinese["results"])


async def test_search_ranks_as_the_store_does_and_fills_the_page_past_summaries(api):
    """search_memory asked the index for 4 x num hits at once; a query with fewer word
    matches than that also ranked by the vectors, which put "teal steam teapots" above the
    notes that say "tea". The longer list is now ranked as a page of num (search(page=...))."""
    notes = [{"role": "user", "content": text} for text in MATCHES]
    near = [{"role": "user", "content": text} for text in NEIGHBOURS]
    for session, part in enumerate((notes[:4], notes[4:8], notes[8:] + near)):
        await api.post("/add_messages/", {**ALICE, "session_id": f"s{session}", "messages": part})
    found = await api.post("/search_memory/", {**ALICE, "query": QUERY, "num": 10, "threshold": 0.0})
    assert only_matches([r["content"] for r in found["results"]]), [r["content"] for r in found["results"]]
    assert len(found["results"]) == 10 and {r["type"] for r in found["results"]} == {"episodic_memory"}
    # Each session's summary holds "tea" too and ranks among the notes: the page is still full.
    summaries = await api.post("/search_user_history_summary/", {**ALICE, "query": "tea", "threshold": 0.0})
    assert len(summaries["results"]) == 3
    few = await api.post("/search_memory/", {**ALICE, "query": "tea harbour", "num": 4, "threshold": 0.0})
    assert len(few["results"]) == 4 and all(" tea " in r["content"] for r in few["results"])


async def test_add_search_page_and_trace(api):
    added = await _add(api)
    assert added["status"] == "success" and len(added["message_ids"]) == 2
    found = await api.post("/search_memory/", {**ALICE, "query": "green tea", "num": 5, "threshold": 0.0})
    top = found["results"][0]
    assert set(top) == {"mem_id", "content", "type", "score"}
    assert top["type"] == "user_profile" and "green tea" in top["content"] and 0 < top["score"] <= 1
    zh = await api.post("/search_memory/", {**ALICE, "query": "柏林", "threshold": 0.0})
    assert zh["results"][0]["type"] == "episodic_memory"
    summary = await api.post("/search_user_history_summary/", {**ALICE, "query": "green tea"})
    assert summary["results"][0]["type"] == "summary"
    assert "assistant: 用户在柏林工作" in summary["results"][0]["content"]
    paged = await api.post("/get_user_mem_by_page/", {**ALICE, "page_idx": 1, "page_size": 2})
    assert len(paged["results"]) == 2 and paged["total"] == 2
    full = await api.post("/get_user_mem_by_page_with_total/", {**ALICE, "page_size": 2, "page_idx": 2})
    assert full["total"] == 3 and len(full["results"]) == 1
    # A page far past the end (even past SQLite's 64-bit offsets) is empty, not an error.
    beyond = await api.post("/get_user_mem_by_page_with_total/", {**ALICE, "page_idx": 2**63})
    assert beyond["results"] == [] and beyond["total"] == 3
    item = full["results"][0]
    assert datetime.fromisoformat(item["timestamp"]).utcoffset() is not None
    traced = await api.post("/get_message_by_id/", {"message_id": item["source_id"]})
    assert traced["found"] is True and traced["role"] in ("user", "assistant")
    assert datetime.fromisoformat(traced["timestamp"]).utcoffset() is not None
    missing = await api.post("/get_message_by_id/", {"message_id": "msg_nope"})
    assert missing == {"found": False, "message_id": "msg_nope"}


async def test_empty_content_is_422_with_the_seed_detail(api):
    response = await api.client.post("/add_messages/", headers=api.auth(), json={
        **ALICE, "messages": [{"role": "user", "content": "  "}, {"role": "user", "content": ""}]})
    assert response.status == 422
    assert await response.json() == {"detail": "No valid messages (all content is empty)"}


async def test_enable_flags(api):
    await _add(api, enable_summary_memory=False, enable_episodic_memory=False)
    paged = await api.post("/get_user_mem_by_page/", {**ALICE, "page_size": 50})
    assert [r["type"] for r in paged["results"]] == ["user_profile"]
    await _add(api, who={"user_id": "bob", "scope_id": "edp_agent"}, enable_long_term_mem=False)
    assert (await api.post("/get_user_mem_by_page/", {"user_id": "bob", "scope_id": "edp_agent"}))["results"] == []


async def test_variables(api):
    await api.post("/update_variables/", {**ALICE, "variables": {"status": "normal", "priority": "high"}})
    assert (await api.post("/get_variables/", ALICE))["variables"] == {"status": "normal", "priority": "high"}
    assert (await api.post("/get_variables/", {**ALICE, "names": ["status", "x"]}))["variables"] == {
        "status": "normal", "x": None}
    deleted = await api.post("/delete_variables/", {**ALICE, "names": ["priority"]})
    assert deleted["deleted"] is True
    assert (await api.post("/get_variables/", ALICE))["variables"] == {"status": "normal"}
    await api.post("/update_variables/", {**ALICE, "variables": {"n": 1}}, status=400)


@pytest.mark.parametrize("other", [{"user_id": "mallory", "scope_id": "edp_agent"},
                                   {"user_id": "alice", "scope_id": "other_scope"}])
async def test_isolation_by_user_and_scope(api, other):
    await _add(api)
    mine = (await api.post("/get_user_mem_by_page/", {**ALICE, "page_size": 50}))["results"]
    mem_id = mine[0]["mem_id"]
    assert (await api.post("/search_memory/", {**other, "query": "green tea", "threshold": 0.0}))["results"] == []
    assert (await api.post("/get_user_mem_by_page/", other))["results"] == []
    assert (await api.post("/get_variables/", other))["variables"] == {}
    await api.post("/update_mem_by_id/", {**other, "mem_id": mem_id, "memory": "hijacked"}, status=404)
    await api.post("/delete_mem_by_id/", {**other, "mem_id": mem_id}, status=404)
    batch = await api.post("/batch_delete_mem/", {**other, "mem_ids": [mem_id]})
    assert (batch["deleted"], batch["failed"]) == (0, 1)
    still = (await api.post("/get_user_mem_by_page/", {**ALICE, "page_size": 50}))["results"]
    assert [m["mem_id"] for m in still] == [m["mem_id"] for m in mine]
    assert still[0]["content"] != "hijacked"


async def test_update_delete_batch_and_scope(api):
    await _add(api)
    await _add(api, who={"user_id": "bob", "scope_id": "edp_agent"})
    await _add(api, who={"user_id": "carol", "scope_id": "keep"})
    mine = (await api.post("/get_user_mem_by_page/", {**ALICE, "page_size": 50}))["results"]
    updated = await api.post("/update_mem_by_id/", {**ALICE, "mem_id": mine[0]["mem_id"], "memory": "prefers oolong"})
    assert updated["status"] == "success"
    assert (await api.post("/search_memory/", {**ALICE, "query": "oolong", "threshold": 0.0}))["results"]
    await api.post("/delete_mem_by_id/", {**ALICE, "mem_id": mine[1]["mem_id"]})
    batch = await api.post("/batch_delete_mem/", {**ALICE, "mem_ids": [mine[2]["mem_id"], "mem_nope"]})
    assert (batch["deleted"], batch["failed"]) == (1, 1)
    cleared = await api.post("/delete_mem_by_scope/", {"user_id": "bob", "scope_id": "edp_agent"})
    assert cleared["deleted"] is True and cleared["deleted_count"] >= 1
    assert (await api.post("/get_user_mem_by_page/", {"user_id": "bob", "scope_id": "edp_agent"}))["results"] == []
    # Only bob's: alice in the same scope and carol elsewhere keep theirs.
    assert (await api.post("/get_user_mem_by_page/", {**ALICE, "page_size": 50}))["results"]
    assert (await api.post("/get_user_mem_by_page/", {"user_id": "carol", "scope_id": "keep"}))["results"]


async def test_errors_use_the_detail_envelope(api):
    response = await api.client.post("/search_memory/", headers=api.auth(), json={"num": "x"})
    body = await response.json()
    assert response.status == 422 and isinstance(body["detail"], list) and body["detail"][0]["loc"] == ["body", "query"]
    response = await api.client.post("/search_memory/", json={"query": "x"})
    assert response.status == 401 and isinstance((await response.json())["detail"], str)
    health = await (await api.client.get("/health")).json()
    # The agent-memory server's answer, beside the MemoryCloud reference's keys.
    assert {k: health[k] for k in ("status", "message")} == {
        "status": "healthy", "message": "Memory Engine API is running"}
    assert health["ok"] is True
    # An unknown field is not an error (forward compatibility), and not silent either.
    ignored = await api.post("/search_memory/", {**ALICE, "query": "x", "unknown_field": 1})
    assert ignored == {"results": [], "warnings": ["ignored field 'unknown_field'"]}
