"""Method cards ranked for what the agent forgot; collaboration claims with a TTL."""

from __future__ import annotations

import pytest

from tests.daemon.test_skills import _served

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines


@pytest.mark.parametrize(
    "message, runtime, expected",
    [
        ("I got a 409 sync interrupt when writing an event", None, "resume_intent"),
        ("怎么安装一个记忆套件", None, "install_suite"),
        ("the context is about to compact", "claude_code", "claude_code_compaction"),
        ("we decided to use postgres, remember that", "codex", "write_back_decision"),
        ("two agents edit the same branch: lock it", None, "claim_shared_resource"),
    ],
)
async def test_methods_are_ranked_for_the_message(api, message, runtime, expected):
    body = {"message": message, **({"runtime": runtime} if runtime else {})}
    ranked = await api.post("/api/agent/methods/query", body)
    assert ranked["methods"][0]["method_id"] == expected


async def test_runtime_specific_cards_stay_with_their_runtime(api):
    ranked = await api.post(
        "/api/agent/methods/query", {"message": "compact compaction", "runtime": "codex", "limit": 8}
    )
    assert "claude_code_compaction" not in [m["method_id"] for m in ranked["methods"]]


async def test_method_cards_name_only_served_endpoints(api):
    cards = (await api.get("/api/agent/methods"))["methods"]
    assert len(cards) >= 8
    for card in cards:
        for endpoint in card["endpoints"]:
            assert _served(endpoint.split(" ", 1)[1]), (card["method_id"], endpoint)


async def test_claims_conflict_extend_release(api):
    other = api.new_agent("other-agent")
    mine = await api.post(
        "/api/agent/claims", {"resource": "branch:main", "ttl_seconds": 600, "purpose": "release prep"}
    )
    held = await api.post("/api/agent/claims", {"resource": "branch:main"}, key=other, status=409)
    assert held["error"]["type"] == "claim_held"
    assert "test-agent" in held["error"]["message"] and mine["expires_at"] in held["error"]["message"]
    assert held["detail"]["holder"] == "test-agent"
    again = await api.post("/api/agent/claims", {"resource": "branch:main", "ttl_seconds": 1200})
    assert again["claim_id"] == mine["claim_id"] and again["expires_at"] > mine["expires_at"]
    await api.post(f"/api/agent/claims/{mine['claim_id']}/release", {}, key=other, status=409)
    listed = await api.get("/api/agent/claims?resource=branch:main")
    assert [c["claim_id"] for c in listed["claims"]] == [mine["claim_id"]]
    released = await api.post(f"/api/agent/claims/{mine['claim_id']}/release", {})
    assert released["released_at"]
    theirs = await api.post("/api/agent/claims", {"resource": "branch:main"}, key=other)
    assert theirs["holder"]["name"] == "other-agent"


async def test_an_expired_claim_frees_the_resource(api):
    other = api.new_agent("other-agent")
    claim = await api.post("/api/agent/claims", {"resource": "svc:billing", "ttl_seconds": 60})
    with api.store.transaction():
        api.store.conn.execute(
            "update claims set expires_at = '2000-01-01T00:00:00.000Z' where id = ?", (claim["claim_id"],)
        )
    taken = await api.post("/api/agent/claims", {"resource": "svc:billing"}, key=other)
    assert taken["claim_id"] != claim["claim_id"]
