"""Behaviour a client of the MemoryCloud reference relies on, beyond the contract suite's
statuses and keys (tests/contract): unknown fields named, registration by proof of work and
pairing code, the brief's writeback path, held-back deltas, and sync intents' lifecycle."""

from __future__ import annotations

import hashlib

import pytest

from tests.contract.world import World

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines


async def test_an_unknown_field_is_named_in_the_answer_and_the_header(api):
    pack = await api.bootstrap()
    response = await api.client.post(
        "/api/agent/memory-delta",
        headers={**api.auth(), "X-AMP-Context-Receipt": pack["receipt_id"]},
        json={"summary": "Use WAL", "dreams_mdx": "lost?", "importance": 3},
    )
    data = await response.json()
    assert response.status == 200
    assert data["warnings"] == ["ignored field 'dreams_mdx'"]
    assert response.headers["X-MemoryCloud-Warnings"] == "dreams_mdx"
    # A field and its alias with different values is refused, not guessed.
    clash = await api.client.post(
        "/api/agent/methods/query", headers=api.auth(), json={"user_message": "a", "message": "b"}
    )
    assert clash.status == 422


def _solve(challenge: dict) -> str:
    nonce = 0
    while (
        not hashlib.sha256(f"{challenge['challenge_id']}:{challenge['server_nonce']}:{nonce}".encode())
        .hexdigest()
        .startswith("0" * challenge["difficulty"])
    ):
        nonce += 1
    return str(nonce)


async def test_registration_runs_the_references_flow_and_needs_the_pairing_code(api, tmp_path):
    world = World(api, tmp_path)
    challenge = await api.post("/api/agent/challenge", {"intent": "register"})
    assert challenge["challenge_id"].startswith("pow_") and challenge["difficulty"] >= 3
    body = {"challenge_id": challenge["challenge_id"], "handle": "ref-client"}
    # A wrong nonce is 400 and does not use the challenge up (as the reference).
    await api.post("/api/agent/register", {**body, "nonce": "wrong"}, status=400)
    # Solved, but without the owner's pairing code: 403 saying what is missing.
    refused = await api.post("/api/agent/register", {**body, "nonce": _solve(challenge)}, status=403)
    assert "pairing code" in refused["error"]["message"]
    code = await world["pairing_code"]
    again = await api.post("/api/agent/challenge", {})
    registered = await api.post(
        "/api/agent/register",
        {**body, "challenge_id": again["challenge_id"], "nonce": _solve(again), "pairing_code": code},
    )
    assert registered["api_key"] and registered["user"]["auth_type"] == "agent"
    # The challenge is single use.
    await api.post(
        "/api/agent/register",
        {**body, "challenge_id": again["challenge_id"], "nonce": _solve(again)},
        status=400,
    )
    # The honeypot field must stay empty.
    await api.post("/api/agent/register", {"website": "http://spam.example"}, status=400)


async def test_brief_writeback_path_is_in_the_context_contract_and_reading_shows_the_sources(api):
    pack = await api.bootstrap()
    await api.delta(pack["receipt_id"], summary="deploys run on Tuesdays", importance=4)
    brief = await api.post("/api/agent/memory-brief", {"task": "plan the Tuesday deploy"})
    writeback = brief["context_contract"]["writeback"]
    assert writeback == f"/api/agent/memory-briefs/{brief['brief_id']}/events"
    await api.post(writeback, {"summary": "deploy planned", "event_type": "decision"})
    read = await api.get(f"/api/agent/memory-briefs/{brief['brief_id']}")
    assert read["carry_in"] == brief["carry_in"] and read["carry_in"]
    assert read["source_counts"] == brief["source_counts"]
    assert [e["summary"] for e in read["events"]] == ["deploy planned"]


async def _gated(api, tmp_path) -> tuple[World, str]:
    world = World(api, tmp_path)
    return world, await world["gated_key"]


async def test_a_held_back_delta_resumes_once_and_the_interrupt_has_both_shapes(api, tmp_path):
    world, key = await _gated(api, tmp_path)
    pack = await api.post("/api/agent/bootstrap/context", {}, key=key)
    headers = {"X-AMP-Context-Receipt": pack["receipt_id"], "X-MemoryCloud-Runtime-Version": "old.1"}
    blocked = await api.post(
        "/api/agent/memory-delta",
        {"summary": "freeze main", "importance": 5},
        key=key,
        headers=headers,
        status=409,
    )
    # The seed shows the interrupt at the top level, the reference under detail: both work.
    assert blocked["schema"] == "amp.sync-interrupt.v1" == blocked["detail"]["schema"]
    interrupt = blocked["detail"]
    assert interrupt["resume"]["after_ack"].startswith("http://")
    assert interrupt["required_updates"][0]["id"]
    intent = await api.get(f"/api/agent/sync-intents/{interrupt['sync_intent_id']}", key=key)
    assert intent["sync_intent"]["headers"] == {"runtime_version": "old.1", "applied_updates": []}
    before = api.store.conn.execute("select count(*) from memory_deltas").fetchone()[0]
    await api.post("/api/agent/updates/ack", {}, key=key)
    resumed = await api.post(f"/api/agent/sync-intents/{interrupt['sync_intent_id']}/resume", key=key)
    assert resumed["resumed"] is True and resumed["result"]["delta"]["summary"] == "freeze main"
    await api.post(f"/api/agent/sync-intents/{interrupt['sync_intent_id']}/resume", key=key, status=409)
    assert api.store.conn.execute("select count(*) from memory_deltas").fetchone()[0] == before + 1
    # Discarding a resumed intent changes nothing and says so.
    discarded = await api.post(f"/api/agent/sync-intents/{interrupt['sync_intent_id']}/discard", key=key)
    assert discarded["discarded"] is False and discarded["sync_intent"]["status"] == "resumed"


async def test_a_less_important_write_goes_through_with_the_references_warning(api, tmp_path):
    world, key = await _gated(api, tmp_path)
    brief = await api.post("/api/agent/memory-brief", {"task": "small things"}, key=key)
    written = await api.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        {"summary": "renamed a variable", "importance": 2},
        key=key,
    )
    notice = written["update_notice"]
    assert notice["status"] == "recommended_update_available" and notice["required_updates"] == []
    assert notice["recommended_updates"] and notice["check_url"].endswith("/api/agent/updates/check")


async def test_discarding_twice_is_not_an_error(api, tmp_path):
    world = World(api, tmp_path)
    intent_id = await world["sync_intent"]
    key = await world.key("gated_key")
    first = await api.post(f"/api/agent/sync-intents/{intent_id}/discard", key=key)
    second = await api.post(f"/api/agent/sync-intents/{intent_id}/discard", key=key)
    assert first["discarded"] is second["discarded"] is True
    listed = await api.get("/api/agent/sync-intents", key=key)
    assert [i["id"] for i in listed["items"]] == [intent_id]


async def test_a_delta_names_its_project_binding_or_gets_404(api):
    pack = await api.bootstrap()
    await api.post(
        "/api/agent/memory-delta",
        {"summary": "x", "project_binding_id": "pbind_nope"},
        headers={"X-AMP-Context-Receipt": pack["receipt_id"]},
        status=404,
    )
    probe = await api.post("/api/agent/project/probe", {"project_key": "bound"})
    written = await api.post(
        "/api/agent/memory-delta",
        {"summary": "x", "project_binding_id": probe["project_binding_id"]},
        headers={"X-AMP-Context-Receipt": pack["receipt_id"]},
    )
    assert written["delta"]["project_key"] == "bound"


async def test_an_unknown_field_with_control_or_non_ascii_characters_is_escaped_in_the_header(api):
    """Found by the fuzz test: a header must not carry a control character."""
    response = await api.client.post(
        "/api/agent/bootstrap/context", headers=api.auth(), json={"\u001f": None, "größe": 1}
    )
    data = await response.json()
    assert response.status == 200
    assert data["warnings"] == ["ignored field '\u001f'", "ignored field 'größe'"]
    assert response.headers["X-MemoryCloud-Warnings"] == "\\u001f, gr\\u00f6\\u00dfe"
