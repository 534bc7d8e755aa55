"""Happy paths of the AMP runtime endpoints, over the real app and store."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from tests.daemon.neighbours import QUERY, only_matches, write_matches_and_neighbours

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines


def _path(url: str) -> str:
    """The path and query of an absolute URL, exactly as returned (no re-encoding)."""
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


async def test_protocol_schema_lists_every_endpoint(api):
    response = await api.client.get("/api/protocol/schema")
    data = await response.json()
    assert response.status == 200
    assert data["schema"] == "amp.memory.v1"  # the reference's (the seed names none)
    described = {(e["method"], e["path"]) for e in data["endpoints"]}
    for route in (
        "/api/agent/bootstrap/context",
        "/api/agent/memory-delta",
        "/api/agent/memory-brief",
        "/api/memory/router/select",
    ):
        assert ("POST", route) in described
    delta = next(e for e in data["endpoints"] if e["path"] == "/api/agent/memory-delta")
    assert {"name": "summary", "type": "string", "required": True, "max_length": 4000} in [
        {k: f[k] for k in ("name", "type", "required", "max_length")}
        for f in delta["request"]["fields"]
        if f["name"] == "summary"
    ]
    assert "amp.context-pack.v1" in data["schemas"]


async def test_identity_endpoints(api):
    me = await api.get("/api/me")
    assert me["user"]["auth_type"] == "agent" and me["user"]["handle"] == "test-agent"
    owner = await api.get("/api/me", key=api.owner_key)
    assert owner["user"]["auth_type"] == "human"
    session = await (await api.client.get("/api/session")).json()
    assert session == {"schema": "amp.session.v1", "authenticated": False, "user": None}
    session = await api.get("/api/session")
    assert session["authenticated"] is True
    bindings = await api.get("/api/agent/bindings/me")
    assert bindings["schema"] == "amp.agent-bindings.v1" and bindings["bindings"] == []


async def test_profile_and_probe_are_idempotent(api):
    profile = await api.post(
        "/api/agent/runtime/profile",
        {"runtime": "Claude", "repo_root": "/home/u/demo", "supports_files": True},
    )
    assert profile["schema"] == "amp.agent-runtime-profile.v1"
    assert profile["runtime"]["type"] == "claude_code"
    # What the claude_code plan writes: the SessionStart hook (startup_items/runtimes.py)
    assert profile["recommended_startup_item"]["install_path"] == ".claude/settings.json"
    again = await api.post("/api/agent/runtime/profile", {"runtime": "claude", "repo_root": "/home/u/demo"})
    assert again["profile_id"] == profile["profile_id"]

    body = {"runtime": "codex", "repo_root": "/home/u/demo", "git_remote": "git@github.com:org/demo.git"}
    first = await api.post("/api/agent/project/probe", body)
    assert first["schema"] == "amp.project-binding.v1"
    assert first["project_key"] == "demo"
    second = await api.post(
        "/api/agent/project/probe", {"runtime": "gemini", "git_remote": "https://github.com/org/demo"}
    )
    assert second["project_binding_id"] == first["project_binding_id"]
    assert second["project_binding"]["reason"] == "matched git remote"
    bindings = await api.get("/api/agent/bindings/me")
    assert [b["id"] for b in bindings["bindings"]] == [first["project_binding_id"]]


async def test_bootstrap_delta_and_next_pack(api):
    probe = await api.post("/api/agent/project/probe", {"project_key": "demo"})
    pack = await api.bootstrap(project_binding_id=probe["project_binding_id"], runtime="codex")
    assert pack["schema"] == "amp.context-pack.v1"
    assert pack["receipt"]["schema"] == "amp.bootstrap-receipt.v1"
    assert pack["receipt"]["receipt_id"] == pack["receipt_id"]
    assert pack["memory_policy"]["detail_on_demand"] is True
    assert pack["project_key"] == "demo"
    assert len(pack["summary_markdown"]) <= pack["summary_budget_chars"]

    delta = await api.delta(
        pack["receipt_id"],
        summary="Use WAL mode",
        delta_type="decision",
        why_it_matters="crash safety",
        retrieval_triggers=["sqlite 配置"],
        importance=5,
    )
    assert delta["schema"] == "amp.memory-delta.v1"
    assert delta["delta"]["context_receipt_id"] == pack["receipt_id"]
    assert delta["delta"]["project_key"] == "demo"

    # The receipt may also come in the body as context_receipt_id.
    await api.post(
        "/api/agent/memory-delta", {"summary": "Second change", "context_receipt_id": pack["receipt_id"]}
    )

    nxt = await api.bootstrap(project_key="demo")
    assert "Use WAL mode" in nxt["summary_markdown"] and "Second change" in nxt["summary_markdown"]
    assert nxt["source_counts"]["memory_delta"] == 2
    for handle in nxt["retrieval_handles"]:
        assert " " not in handle["detail_endpoint"]
        detail = await api.get(_path(handle["detail_endpoint"]))
        assert detail["schema"] in ("amp.memory-detail.v1", "amp.memory-search.v1")
    search = next(h for h in nxt["retrieval_handles"] if h["kind"] == "search")
    found = await api.get(_path(search["detail_endpoint"]))
    assert found["query"] == "sqlite 配置" and found["items"][0]["title"] == "Use WAL mode"

    stored = await api.get(f"/api/agent/context-packs/{nxt['context_pack_id']}")
    assert stored["summary_markdown"] == nxt["summary_markdown"]


@pytest.mark.parametrize(
    "notes",
    [
        [
            "Decision: keep SQLite in WAL mode for crash safety",
            "Decision: the billing export runs every Friday night after the backup",
            "Decision: deploy checklist is run migrations, warm the cache, flip the flag",
            "Open loop: the billing export misses refunds",
        ],
        [  # a header's label (tokenizer 10)
            "Project: storage. Keep SQLite in WAL mode for crash safety",
            "Project: billing. The billing export runs every Friday night after the backup",
            "Title: deploy checklist. Run migrations, warm the cache, flip the flag",
            "Topic: the billing export misses refunds",
        ],
    ],
)
async def test_deltas_that_start_with_a_label_are_found_by_their_own_words(api, notes):
    """An agent's deltas that say what they are ("Decision: ...", "Project: ...") are notes,
    not a conversation's turns: none holds the words of the ones written before it
    (tokenizers 9 and 10)."""
    pack = await api.bootstrap()
    for summary in notes:
        await api.delta(pack["receipt_id"], summary=summary, delta_type="decision")
    api.store.search.vector_weight = 0.0  # words alone: what each note's own text holds
    found = await api.get("/api/agent/search?q=billing%20export%20Friday")
    assert [item["title"] for item in found["items"]] == [notes[1], notes[3]]


async def test_verify_and_refresh(api):
    pack = await api.bootstrap(project_key="demo")
    verified = await api.post("/api/agent/bootstrap/verify", {"receipt_id": pack["receipt_id"]})
    assert verified["schema"] == "amp.bootstrap-verify.v1"
    assert verified["valid"] is True and verified["status"] == "active"
    mismatch = await api.post(
        "/api/agent/bootstrap/verify", {"receipt_id": pack["receipt_id"], "project_key": "other"}
    )
    assert mismatch["valid"] is False and mismatch["status"] == "mismatch"
    refreshed = await api.post("/api/agent/bootstrap/refresh", {"project_key": "demo"})
    assert refreshed["reason"] == "refresh"
    assert refreshed["receipt_id"] != pack["receipt_id"]


async def test_verify_checks_the_project_binding_of_the_receipts_pack(api):
    """A receipt names its pack, and the pack its binding: verify compares with that (it
    compared with the receipt row, which has none, so every binding was a mismatch)."""
    probe = await api.post("/api/agent/project/probe", {"project_key": "bound"})
    binding_id = probe["project_binding_id"]
    pack = await api.bootstrap(project_binding_id=binding_id)
    assert pack["receipt"]["project_binding_id"] == binding_id
    verify = "/api/agent/bootstrap/verify"
    same = await api.post(verify, {"receipt_id": pack["receipt_id"], "project_binding_id": binding_id})
    assert same["valid"] is True and same["status"] == "active"
    other = await api.post(verify, {"receipt_id": pack["receipt_id"], "project_binding_id": "pbind_other"})
    assert other["valid"] is False and other["status"] == "mismatch"


async def test_summary_respects_the_budget_and_keeps_the_most_important(api):
    pack = await api.bootstrap(project_key="big")
    for i in range(60):
        await api.delta(pack["receipt_id"], summary=f"routine note {i} " + "x" * 200, importance=2)
    await api.delta(pack["receipt_id"], summary="THE critical decision", importance=5)
    nxt = await api.bootstrap(project_key="big")
    assert len(nxt["summary_markdown"]) <= nxt["summary_budget_chars"]
    assert nxt["truncated"] is True
    assert "THE critical decision" in nxt["summary_markdown"].split("## Memory", 1)[1].splitlines()[1]


async def test_brief_events_are_mirrored_into_deltas_and_packs(api):
    brief = await api.post(
        "/api/agent/memory-brief",
        {"task": "continue frontend redesign", "project_key": "demo", "environment": {"runtime": "codex"}},
    )
    assert brief["schema"] == "amp.memory-brief.v1"
    assert brief["context_pack"]["schema"] == "amp.context-pack.v1"
    assert brief["receipt_id"] == brief["context_pack"]["receipt_id"]
    # The reference's counts and ours.
    assert set(brief["source_counts"]) == {
        "workspace",
        "project",
        "handoff",
        "events",
        "carry_in",
        "project_state",
        "recent_events",
        "active_installed_memory_lenses",
    }
    assert brief["next"]["writeback"].endswith(f"/api/agent/memory-briefs/{brief['brief_id']}/events")

    event = await api.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        {
            "event_type": "handoff_ready",
            "summary": "Header redesign done; footer next",
            "importance": 4,
            "payload": {"files": ["app/header.tsx"]},
        },
    )
    assert event["schema"] == "amp.memory-brief-event.v1"
    delta_id = event["memory_delta"]["id"]
    row = api.store.conn.execute("select source from memory_deltas where id = ?", (delta_id,)).fetchone()
    assert row["source"] == "brief_event"
    assert (
        api.store.conn.execute(
            "select count(*) from summary_cards where source_id = ?", (delta_id,)
        ).fetchone()[0]
        == 1
    )

    stream = await api.get(f"/api/agent/memory-briefs/{brief['brief_id']}")
    assert [e["summary"] for e in stream["events"]] == ["Header redesign done; footer next"]
    assert stream["events"][0]["payload"] == {"files": ["app/header.tsx"]}

    pack = await api.bootstrap(project_key="demo")
    assert "Header redesign done" in pack["summary_markdown"]
    nxt = await api.post("/api/agent/memory-brief", {"task": "footer work", "project_key": "demo"})
    assert nxt["source_counts"]["handoff"] == 1
    assert "## Hand-off" in nxt["brief_markdown"]


async def test_a_briefs_project_state_and_pack_are_each_their_own_top_memories(api):
    # A brief reads the project's standing memories once for its project state (max_items)
    # and its context pack (the configured max_items, 24): each must be what reading it
    # alone gives, whichever of the two asks for more.
    pack = await api.bootstrap(project_key="many")
    for i in range(40):
        await api.delta(pack["receipt_id"], summary=f"standing note {i}", importance=1 + i % 5)
    await api.delta(pack["receipt_id"], summary="a workspace-wide note", importance=5, project_key=None)
    alone = await api.bootstrap(project_key="many")
    alone_ids = [c["id"] for c in alone["summary_cards"]]
    for max_items in (3, 8, 30, 50):
        brief = await api.post(
            "/api/agent/memory-brief",
            {"task": "zzz nothing matches this", "project_key": "many", "max_items": max_items},
        )
        top = api.store.memories.top_for_context(
            brief["workspace"]["id"], "many", max_items, ("memory_delta", "adaptive_memory", "brief_event")
        )
        carried = {m["id"] for m in brief["carry_in"]}
        assert len(top) == min(max_items, 41)
        assert [m["id"] for m in brief["project_state"]] == [m["id"] for m in top if m["id"] not in carried]
        assert [c["id"] for c in brief["context_pack"]["summary_cards"]] == alone_ids


async def test_adaptive_memory_enters_context_packs(api):
    run = await api.post(
        "/api/memory/router/select",
        {
            "task": "pick a database",
            "project_key": "demo",
            "what_i_remember": "We decided on SQLite instead of Postgres: one file, no server.",
        },
    )
    assert run["schema"] == "amp.memory-route.v1"
    assert run["selected_memory_type"] == "decision_memory"
    assert "decision" in run["form_schema"]["required"]
    stored = await api.post(
        f"/api/memory/forms/{run['run_id']}/submit",
        {
            "payload": {
                "decision": "SQLite instead of Postgres",
                "context": "local daemon",
                "rationale": "one file, no server",
                "retrieval_triggers": ["database choice"],
            }
        },
    )
    assert stored["memory"]["memory_type"] == "decision_memory"
    pack = await api.bootstrap(project_key="demo")
    assert "SQLite instead of Postgres" in pack["summary_markdown"]
    assert pack["source_counts"]["adaptive_memory"] == 1


async def test_memory_detail_and_search(api):
    pack = await api.bootstrap(project_key="demo")
    delta = await api.delta(pack["receipt_id"], summary="部署前先跑迁移 (run migrations before deploy)")
    memory_id = delta["delta"]["memory_id"]
    detail = await api.get(f"/api/agent/memories/{memory_id}")
    assert detail["memory"]["content"].startswith("部署前先跑迁移")
    assert detail["memory"]["written_by"] == api.agent["id"]
    wsp = pack["workspace_id"]
    found = await api.get(f"/api/workspaces/{wsp}/memory/query?q=%E8%BF%81%E7%A7%BB")
    assert found["items"][0]["id"] == memory_id


async def test_a_filtered_memory_query_ranks_as_an_unfiltered_page_would(api):
    """Filtering by kind fetches 4 x the page; those extra hits are the same ranking
    continued (search(page=...)), not vector neighbours mixed into the first ten."""
    workspace = api.store.identities.default_workspace()["id"]
    write_matches_and_neighbours(api.store, workspace)
    found = await api.get(f"/api/workspaces/{workspace}/memory/query?q={QUERY}&memory_type=decision&limit=10")
    contents = [item["content"] for item in found["items"]]
    assert len(contents) == 10 and only_matches(contents), contents


@pytest.mark.parametrize("code_ok", [True, False])
async def test_registration_requires_an_owner_pairing_code(api, code_ok):
    if not code_ok:
        response = await api.client.post("/api/agent/register", json={"handle": "sneaky"})
        assert response.status == 403
        assert "pairing code" in (await response.json())["error"]["message"]
        assert len(api.store.identities.agents()) == 1
        return
    with api.store.transaction():
        code = api.store.identities.create_pairing_code("cursor-1", "cursor")["pairing_code"]
    response = await api.client.post("/api/agent/register", json={"pairing_code": code})
    data = await response.json()
    assert response.status == 200 and data["api_key"].startswith("mca_")
    me = await api.get("/api/me", key=data["api_key"])
    assert me["user"]["handle"] == "cursor-1" and me["user"]["runtime"] == "cursor"
    again = await api.client.post("/api/agent/register", json={"pairing_code": code})
    assert again.status == 410  # one use only


async def test_only_deltas_events_and_adaptive_memories_enter_packs(api):
    """Seed 000: a memory suite that is only published does not enter context packs."""
    from state.memories import NewMemory

    workspace = api.store.identities.default_workspace()["id"]
    with api.store.transaction():
        api.store.memories.create(
            NewMemory(
                namespace=workspace,
                project_key="demo",
                kind="suite",
                importance=5,
                content="Published suite: Kubernetes cheat sheet",
                source="suite_publish",
            )
        )
    pack = await api.bootstrap(project_key="demo")
    assert "Kubernetes cheat sheet" not in pack["summary_markdown"]
    assert pack["source_counts"] == {"memory_delta": 0, "adaptive_memory": 0, "brief_event": 0}
    await api.delta(pack["receipt_id"], summary="Cluster runs on k3s", importance=3)
    nxt = await api.bootstrap(project_key="demo")
    assert "Cluster runs on k3s" in nxt["summary_markdown"]
    assert "Kubernetes cheat sheet" not in nxt["summary_markdown"]


async def test_the_body_receipt_wins_over_the_header_as_in_the_reference(api):
    """The reference's contract sheet (memory_delta, request headers): context_receipt_id in the
    body wins when both are sent."""
    pack = await api.bootstrap()
    body = {"summary": "which receipt counts", "context_receipt_id": "amp_receipt_nope"}
    refused = await api.post(
        "/api/agent/memory-delta", body, headers={"X-AMP-Context-Receipt": pack["receipt_id"]}, status=428
    )
    assert "amp_receipt_nope" in json.dumps(refused)
    body = {"summary": "which receipt counts", "context_receipt_id": pack["receipt_id"]}
    kept = await api.post(
        "/api/agent/memory-delta", body, headers={"X-AMP-Context-Receipt": "amp_receipt_nope"}
    )
    assert kept["delta"]["context_receipt_id"] == pack["receipt_id"]
