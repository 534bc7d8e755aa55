"""The sync client against an upstream that behaves like MemoryCloud's public reference
implementation (YMX899/MemoryCloud), which is not ours and cannot run here: a small stand-in
that answers exactly what that server documents (notes in the README's upstream section):

* registration by proof of work (``/api/agent/challenge`` then ``/api/agent/register``);
* no sync extension (``/api/sync/*`` is 404), so the client pushes with memory-delta only;
* errors as FastAPI ``{"detail": ...}``, the sync interrupt inside ``detail``;
* memory-delta is gated for important writes and its sync intent cannot be resumed (400):
  after the ack the client must send the write again, exactly once;
* its read endpoints: ``/api/me/workspaces``, the workspace memory map (memory deltas as
  assets: the summary cut to 96 characters, why it matters to 220, no detail endpoint; a
  summary card beside each) and the memory query (adaptive memories only: none here).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from daemon import keys
from state.config import Settings
from tests.daemon.test_upstream_sync import Side, start_side, write_delta

WORKSPACE = "wsp_reference"


def cut(text: str, limit: int) -> str:
    """The reference's shortening of map texts: one line, an ellipsis when cut."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


UPDATE = {
    "id": "upd_reference_required",
    "version": "2026.06.07-startup-item-primary.1",
    "severity": "required",
    "title": "Use startup items",
    "requires_repull": [],
}


class ReferenceUpstream:
    """State of the stand-in: one registered agent, its deltas, intents and acks."""

    def __init__(self) -> None:
        self.challenges: dict[str, str] = {}
        self.key: str | None = None
        self.deltas: list[dict[str, Any]] = []
        self.intents: dict[str, dict[str, Any]] = {}
        self.acked = False
        self.gate = False
        self.resume_calls = 0

    def app(self) -> web.Application:
        app = web.Application()
        r = app.router
        r.add_post("/api/agent/challenge", self.challenge)
        r.add_post("/api/agent/register", self.register)
        r.add_get("/api/me", self.me)
        r.add_get("/api/agent/updates/manifest", self.manifest)
        r.add_get("/api/agent/updates/check", self.check)
        r.add_post("/api/agent/updates/ack", self.ack)
        r.add_post("/api/agent/bootstrap/context", self.context)
        r.add_post("/api/agent/memory-delta", self.delta)
        r.add_post("/api/agent/sync-intents/{id}/resume", self.resume)
        r.add_get("/api/agent/sync-intents/{id}", self.intent)
        r.add_get("/api/me/workspaces", self.workspaces)
        r.add_get("/api/workspaces/{id}/memory-map", self.memory_map)
        r.add_get("/api/workspaces/{id}/memory/query", self.memory_query)
        return app

    def _authorized(self, request: web.Request) -> None:
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            raise web.HTTPUnauthorized(text='{"detail": "invalid api key"}', content_type="application/json")

    async def challenge(self, request: web.Request) -> web.Response:
        challenge_id = "pow_" + secrets.token_urlsafe(18)
        self.challenges[challenge_id] = secrets.token_urlsafe(24)
        return web.json_response(
            {
                "challenge_id": challenge_id,
                "server_nonce": self.challenges[challenge_id],
                "difficulty": 3,
                "algorithm": "sha256(challenge_id + ':' + server_nonce + ':' + nonce)",
                "expires_at": "2099-01-01 00:00:00",
            }
        )

    async def register(self, request: web.Request) -> web.Response:
        body = await request.json()
        server_nonce = self.challenges.pop(body["challenge_id"], None)
        if server_nonce is None:
            return web.json_response({"detail": "challenge not found or expired"}, status=400)
        digest = hashlib.sha256(f"{body['challenge_id']}:{server_nonce}:{body['nonce']}".encode()).hexdigest()
        if not digest.startswith("000"):
            return web.json_response({"detail": "invalid proof of work"}, status=400)
        self.key = "amp_live_" + secrets.token_urlsafe(32)
        return web.json_response(
            {
                "user": {
                    "id": "agt_ref",
                    "handle": body["handle"],
                    "username": body["handle"],
                    "auth_type": "agent",
                },
                "api_key": self.key,
                "next": {},
            }
        )

    async def me(self, request: web.Request) -> web.Response:
        self._authorized(request)
        return web.json_response({"id": "agt_ref", "handle": "laptop", "auth_type": "agent"})

    async def manifest(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"schema": "amp.platform-updates.v1", "runtime_version": UPDATE["version"], "updates": [UPDATE]}
        )

    def _check_body(self) -> dict[str, Any]:
        pending = [] if self.acked or not self.gate else [UPDATE]
        return {
            "schema": "amp.platform-update-check.v1",
            "has_pending_updates": bool(pending),
            "pending_updates": pending,
            "acked_updates": {},
            "next_actions": [],
        }

    async def check(self, request: web.Request) -> web.Response:
        self._authorized(request)
        return web.json_response(self._check_body())

    async def ack(self, request: web.Request) -> web.Response:
        self._authorized(request)
        self.acked = True
        return web.json_response(self._check_body())

    async def context(self, request: web.Request) -> web.Response:
        self._authorized(request)
        return web.json_response({"schema": "amp.context-pack.v1", "receipt_id": "amp_receipt_x"})

    async def delta(self, request: web.Request) -> web.Response:
        self._authorized(request)
        body = await request.json()
        if request.headers.get("X-AMP-Context-Receipt") != "amp_receipt_x":
            return web.json_response({"detail": {"schema": "amp.bootstrap-required.v1"}}, status=428)
        if self.gate and not self.acked and body.get("importance", 3) >= 4:
            intent_id = "syncint_" + secrets.token_urlsafe(8)
            self.intents[intent_id] = {"status": "blocked", "body": body}
            return web.json_response(
                {
                    "detail": {
                        "schema": "amp.sync-interrupt.v1",
                        "status": "blocked_for_runtime_update",
                        "sync_intent_id": intent_id,
                        "importance": body["importance"],
                        "required_updates": [UPDATE],
                        "recommended_updates": [],
                        "update_check": "/api/agent/updates/check",
                        "ack": "/api/agent/updates/ack",
                        "resume": {
                            "after_ack": f"/api/agent/sync-intents/{intent_id}/resume",
                            "method": "POST",
                            "expires_in": "24h",
                        },
                    }
                },
                status=409,
            )
        delta_id = "delta_" + secrets.token_urlsafe(8)
        self.add_delta(delta_id, body)
        return web.json_response({"schema": "amp.memory-delta.v1", "delta": {"id": delta_id}})

    def add_delta(self, delta_id: str, body: dict[str, Any]) -> None:
        """A stored delta, with the reference's database timestamp (seconds, no T/Z)."""
        self.deltas.append(
            {"id": delta_id, "created_at": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), **body}
        )

    async def workspaces(self, request: web.Request) -> web.Response:
        self._authorized(request)
        return web.json_response(
            {
                "items": [
                    {
                        "id": WORKSPACE,
                        "owner_id": "agt_ref",
                        "slug": "laptop-personal",
                        "name": "laptop personal workspace",
                        "description": "",
                        "visibility": "private",
                        "created_at": "2026-06-01 00:00:00",
                        "updated_at": "2026-06-01 00:00:00",
                        "role": "owner",
                        "owner_username": "laptop",
                        "owner_auth_type": "agent",
                        "owned_by_current_user": True,
                    }
                ]
            }
        )

    async def memory_map(self, request: web.Request) -> web.Response:
        self._authorized(request)
        assets = []
        for delta in sorted(self.deltas, key=lambda d: d["created_at"], reverse=True):
            common = {
                "workspace_id": WORKSPACE,
                "workspace_name": "laptop personal workspace",
                "project_key": delta.get("project_key") or "laptop-personal",
                "status": "active",
                "visibility": "workspace",
                "detail_endpoint": "/api/agent/bootstrap/context",
            }
            assets.append(
                {
                    **common,
                    "id": f"memory_delta:{delta['id']}",
                    "source_id": delta["id"],
                    "kind": "memory_delta",
                    "type": delta.get("delta_type", "task_event"),
                    "type_label": "变化",
                    "title": cut(delta["summary"], 96),
                    "summary": cut(delta.get("why_it_matters") or delta["summary"], 220),
                    "topic": "laptop-personal",
                    "triggers": [],
                    "updated_at": delta["created_at"],
                }
            )
            assets.append(
                {
                    **common,
                    "id": f"summary_card:sum_{delta['id']}",
                    "source_id": f"sum_{delta['id']}",
                    "kind": "summary_card",
                    "type": "recent_delta",
                    "type_label": "摘要",
                    "title": cut(delta["summary"], 96),
                    "summary": cut(delta["summary"], 220),
                    "topic": "laptop-personal",
                    "triggers": [],
                    "updated_at": delta["created_at"],
                }
            )
        return web.json_response(
            {
                "schema": "amp.memory-lens-map.v1",
                "user": {"id": "agt_ref"},
                "workspace_id": request.match_info["id"],
                "stats": {"assets": len(assets)},
                "workspaces": [],
                "assets": assets,
                "primary_assets": [],
                "secondary_assets": assets,
                "nodes": [],
                "edges": [],
                "default_agent_view": {},
            }
        )

    async def memory_query(self, request: web.Request) -> web.Response:
        self._authorized(request)
        return web.json_response(
            {
                "items": [],
                "context": "",
                "active_memory_view": None,
                "call_instructions": "Inject only relevant memories.",
            }
        )

    async def resume(self, request: web.Request) -> web.Response:
        self._authorized(request)
        self.resume_calls += 1
        return web.json_response({"detail": "endpoint memory_delta is not resumable"}, status=400)

    async def intent(self, request: web.Request) -> web.Response:
        self._authorized(request)
        return web.json_response(
            {"id": request.match_info["id"], **self.intents.get(request.match_info["id"], {})}
        )


@pytest.fixture
async def reference(tmp_path):
    upstream = ReferenceUpstream()
    server = TestServer(upstream.app())
    await server.start_server()
    local = await start_side(tmp_path / "local", Settings(sync_upstream_seconds=3600), "coder")
    yield upstream, server, local
    await local.client.close()
    await server.close()


async def connect(local: Side, server: TestServer) -> dict[str, Any]:
    return await local.local(
        "POST",
        "/api/local/upstream/connect",
        {"url": str(server.make_url("")).rstrip("/"), "handle": "laptop"},
    )


async def test_registers_by_proof_of_work_and_pushes_with_memory_delta(reference):
    upstream, server, local = reference
    status = await connect(local, server)
    assert status["connected"] and not status["sync_extension"]
    assert local.services.upstream.secrets.get(status["credential_ref"]) == upstream.key
    # The key is only in the secret store (keyring, or its 0600 file here): not in the
    # config, the database or any other file of the installation.
    paths = local.client.app[keys.PATHS]
    local.store.conn.execute("pragma wal_checkpoint(truncate)")
    for root in (paths.config_dir, paths.data_dir, paths.state_dir, paths.cache_dir):
        for file in root.rglob("*"):
            if file.is_file() and file != paths.secrets_file:
                assert upstream.key.encode() not in file.read_bytes(), file
    await write_delta(local, "use the reference server", importance=3)
    status = await local.local("POST", "/api/local/upstream/sync")
    assert status["last_error"] is None and status["backlog"] == 0
    assert [d["summary"] for d in upstream.deltas] == ["use the reference server"]
    assert upstream.deltas[0]["detail_payload"]["origin_memory_id"]


async def test_a_non_resumable_interrupted_write_is_sent_again_once_after_the_ack(reference):
    upstream, server, local = reference
    await connect(local, server)
    await local.local("POST", "/api/local/upstream/sync")
    upstream.gate = True  # a required update appears upstream
    await write_delta(local, "important decision", importance=5)
    status = await local.local("POST", "/api/local/upstream/sync")
    assert [e["title"] for e in status["interrupted"]] == ["important decision"]
    assert [u["id"] for u in status["pending_updates"]] == ["upd_reference_required"]
    assert upstream.deltas == []
    # The update has no skill to re-pull: it waits for the person, who acks it.
    await local.local("POST", "/api/local/upstream/sync")
    assert upstream.deltas == [] and not upstream.acked
    await local.local("POST", "/api/local/upstream/updates/ack", {})
    assert upstream.acked
    status = await local.local("POST", "/api/local/upstream/sync")
    assert upstream.resume_calls == 1  # refused (400): the write is sent again instead
    assert [d["summary"] for d in upstream.deltas] == ["important decision"]
    assert status["interrupted"] == [] and status["backlog"] == 0
    await local.local("POST", "/api/local/upstream/sync")
    assert len(upstream.deltas) == 1


async def test_edits_without_a_sync_extension_are_reported_not_lost(reference):
    upstream, server, local = reference
    await connect(local, server)
    memory_id = (await write_delta(local, "first wording"))["delta"]["memory_id"]
    await local.local("POST", "/api/local/upstream/sync")
    with local.store.transaction():
        local.store.memories.update(memory_id, content="second wording")
    status = await local.local("POST", "/api/local/upstream/sync")
    assert [e["last_error"] for e in status["skipped"]] == [
        "this upstream has no endpoint to edit or delete a record"
    ]
    assert local.store.memories.get(memory_id)["content"] == "second wording"


async def test_pulls_deltas_from_the_memory_map_and_knows_its_own(reference):
    """No sync extension and no changes feed: a teammate's memory delta arrives through the
    memory map (its text as far as the map gives it); our own pushed delta, listed there too,
    is recognised by its upstream id and not pulled back."""
    upstream, server, local = reference
    await connect(local, server)
    await write_delta(local, "use the reference server")
    status = await local.local("POST", "/api/local/upstream/sync")
    assert status["last_error"] is None and status["pull"]["via"] == "read_endpoints"
    long_summary = "teammate: " + "the staging database is rebuilt every night " * 4
    upstream.add_delta(
        "delta_teammate",
        {
            "summary": long_summary,
            "why_it_matters": "plan around it",
            "delta_type": "project_state",
            "importance": 3,
        },
    )
    status = await local.local("POST", "/api/local/upstream/sync")
    assert status["last_error"] is None, status
    found = local.store.conn.execute(
        "select id from memory_records where content like 'teammate: %'"
    ).fetchall()
    assert len(found) == 1
    memory = local.store.memories.get(found[0][0])
    assert memory["content"] == f"{cut(long_summary, 96)}\n\nWhy it matters: plan around it"
    assert memory["provenance"]["truncated"] and memory["provenance"]["upstream_id"] == "delta_teammate"
    assert memory["kind"] == "project_state" and memory["source"] == "memory_delta"
    await local.local("POST", "/api/local/upstream/sync")
    contents = [r[0] for r in local.store.conn.execute("select content from memory_records")]
    assert contents.count("use the reference server") == 1
    assert sum(c.startswith("teammate: ") for c in contents) == 1
    assert [d["summary"] for d in upstream.deltas].count("use the reference server") == 1
    pack = await local.bootstrap()
    assert "staging database is rebuilt" in pack["summary_markdown"]
