"""What a contract case needs to exist before its request: made on first use, once per test.

Each entry is a coroutine of the ``World``; ``await world["brief"]`` makes a memory brief the
first time and returns its id after that. Everything is made through the daemon's own HTTP
API (and the owner's local endpoints), never by writing rows.
"""

from __future__ import annotations

import asyncio
import io
import time
import zipfile
from pathlib import Path
from typing import Any, Awaitable, Callable

from state.ids import now_iso

Maker = Callable[["World"], Awaitable[Any]]
MAKERS: dict[str, Maker] = {}

SUITE = {
    "title": "Contract Handbook", "summary": "a suite made by the contract suite",
    "license": "CC-BY-4.0", "memory_md": "# Handbook\n\n- Deploys happen on Tuesdays\n",
    "dreams_md": "Calm releases.\n", "work_memory": [{"date": "2026-11-30", "content": "- shipped v2\n"}],
    "instructions_md": "Read MEMORY.md first.\n", "visibility": "public",
}


def maker(name: str) -> Callable[[Maker], Maker]:
    def register(function: Maker) -> Maker:
        MAKERS[name] = function
        return function
    return register


class World:
    """Lazily made resources of one test's daemon, by name."""

    def __init__(self, api: Any, repo: Path) -> None:
        self.api = api
        self.repo = repo
        self._made: dict[str, Any] = {}

    async def get(self, name: str) -> Any:
        if name not in self._made:
            self._made[name] = await MAKERS[name](self)
        return self._made[name]

    def __getitem__(self, name: str) -> Awaitable[Any]:
        return self.get(name)

    async def key(self, name: str) -> str | None:
        """An API key by role: agent, owner, none (no key), or a made one (read_key ...)."""
        if name == "agent":
            return self.api.agent_key
        if name == "owner":
            return self.api.owner_key
        if name == "none":
            return None
        return await self.get(name)


# -- keys ---------------------------------------------------------------------------------

@maker("read_key")
async def _read_key(world: World) -> str:
    return world.api.new_agent("contract-reader", scopes=["memory:read"])


@maker("scopeless_key")
async def _scopeless_key(world: World) -> str:
    return world.api.new_agent("contract-scopeless", scopes=[])


@maker("foreign_key")
async def _foreign_key(world: World) -> str:
    store = world.api.store
    workspace = await world.get("foreign_workspace")
    with store.transaction():
        _, key = store.identities.create_agent("contract-foreign", "codex", workspace_id=workspace)
    return key


@maker("foreign_workspace")
async def _foreign_workspace(world: World) -> str:
    store = world.api.store
    with store.transaction():
        return store.identities.create_workspace("Contract Foreign", owner_id=None)["id"]


@maker("gated_key")
async def _gated_key(world: World) -> str:
    """An agent from before a required update that this installation then learned of."""
    store = world.api.store
    key = world.api.new_agent("contract-gated")
    with store.transaction():
        store.conn.execute("update identities set created_at = ? where name = ?",
                           ("2000-01-01T00:00:00.000Z", "contract-gated"))
    await world.get("required_update")
    return key


@maker("required_update")
async def _required_update(world: World) -> str:
    newest = world.api.store.conn.execute("select max(created_at) from identities").fetchone()[0]
    deadline = time.monotonic() + 2
    while now_iso() <= newest and time.monotonic() < deadline:
        await asyncio.sleep(0.001)
    update = await world.api.post("/api/local/updates", {
        "title": "contract update", "summary": "apply it", "severity": "required"},
        key=world.api.owner_key)
    return update["update_id"]


# -- AMP resources of the fixture's agent -----------------------------------------------------

@maker("pack")
async def _pack(world: World) -> dict[str, Any]:
    return await world.api.bootstrap(project_key="contract")


@maker("receipt")
async def _receipt(world: World) -> str:
    return (await world.get("pack"))["receipt_id"]


@maker("context_pack_id")
async def _context_pack_id(world: World) -> str:
    return (await world.get("pack"))["context_pack_id"]


@maker("workspace")
async def _workspace(world: World) -> str:
    return (await world.get("pack"))["workspace_id"]


@maker("memory")
async def _memory(world: World) -> str:
    receipt = await world.get("receipt")
    delta = await world.api.delta(receipt, summary="contract memory about sqlite", importance=3)
    return delta["delta"]["memory_id"]


@maker("brief")
async def _brief(world: World) -> str:
    return (await world.api.post("/api/agent/memory-brief", {"task": "contract task"}))["brief_id"]


@maker("run")
async def _run(world: World) -> str:
    run = await world.api.post("/api/memory/router/select", {
        "task": "record a decision", "what_i_remember": "we chose WAL mode",
        "memory_type": "decision_memory"})
    return run["run_id"]


@maker("binding")
async def _binding(world: World) -> str:
    probe = await world.api.post("/api/agent/project/probe",
                                 {"project_key": "contract", "repo_root": str(world.repo)})
    return probe["project_binding_id"]


@maker("plan")
async def _plan(world: World) -> dict[str, Any]:
    binding = await world.get("binding")
    return await world.api.post("/api/agent/startup-items/install-plan",
                                {"runtime": "codex", "project_binding_id": binding})


@maker("approved_plan")
async def _approved_plan(world: World) -> dict[str, Any]:
    """A plan the person approved (the daemon wrote its files), ready to be confirmed."""
    plan = await world.get("plan")
    await world.api.post(f"/api/local/startup/plans/{plan['plan_id']}/approve", {},
                         key=world.api.owner_key)
    return plan


@maker("suite")
async def _suite(world: World) -> str:
    created = await world.api.post("/api/memories", SUITE)
    return created["package"]["slug"]


@maker("installed_memory")
async def _installed_memory(world: World) -> str:
    slug = await world.get("suite")
    activation = await world.api.post("/api/agent/open-memories/install", {"slug": slug})
    return activation["installed_memory_id"]


@maker("skill")
async def _skill(world: World) -> str:
    skills = await world.api.get("/api/agent/skills")
    items = skills.get("skills") or skills.get("items") or skills.get("tools")
    return items[0]["id"] if "id" in items[0] else items[0]["skill_id"]


@maker("sync_intent")
async def _sync_intent(world: World) -> str:
    """A brief event of the gated agent, held back by the required update."""
    key = await world.get("gated_key")
    brief = await world.api.post("/api/agent/memory-brief", {"task": "gated task"}, key=key)
    blocked = await world.api.post(f"/api/agent/memory-briefs/{brief['brief_id']}/events",
                                   {"summary": "freeze main", "importance": 5}, key=key, status=409)
    interrupt = blocked.get("detail") if isinstance(blocked.get("detail"), dict) else blocked
    return interrupt["sync_intent_id"]


@maker("pairing_code")
async def _pairing_code(world: World) -> str:
    store = world.api.store
    with store.transaction():
        return store.identities.create_pairing_code("contract-paired", "codex")["pairing_code"]


@maker("challenge")
async def _challenge(world: World) -> dict[str, Any]:
    """A challenge and a nonce that solves it, as the reference's registration rule says."""
    import hashlib

    challenge = await world.api.post("/api/agent/challenge", {"intent": "register"})
    prefix = "0" * challenge["difficulty"]
    nonce = 0
    while not hashlib.sha256(f"{challenge['challenge_id']}:{challenge['server_nonce']}:{nonce}"
                             .encode()).hexdigest().startswith(prefix):
        nonce += 1
    return {"challenge_id": challenge["challenge_id"], "nonce": str(nonce)}


def legacy_zip() -> bytes:
    """The smallest archive the reference imports: manifest.json and MEMORY.md, no files map."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", '{"schema": "amp.memory.v1", "title": "Legacy Notes",'
                         ' "version": "1.0.0", "license": "CC-BY-4.0",'
                         ' "provenance": {"source_type": "self_authored"}}')
        archive.writestr("MEMORY.md", "# Legacy\n\n- the old capsule format\n")
    return buffer.getvalue()
