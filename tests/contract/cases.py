"""One request per contract endpoint that succeeds, and one per (endpoint, status) that
brings about the sheet's condition for that status.

A success request is the sheet's required fields (sheet.required_body) plus what only this
daemon's state can give (ids from the World). The error requests are derived from it: no key
(401), a key without the endpoint's scope (403), an unknown id in the path (404), a field that
breaks the sheet's limits (422). Conditions that no derivation reaches have a builder here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable

from tests.contract import sheet
from tests.contract.world import World, legacy_zip


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    json: dict[str, Any] | None = None
    data: bytes | None = None
    multipart: dict[str, bytes] | None = None
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    key: str = "agent"  # a World.key role


Build = Callable[[World, dict[str, Any]], Awaitable[Request]]
SUCCESS: dict[str, Build] = {}
CONDITIONS: dict[tuple[str, str], Build] = {}


def success(*endpoint_ids: str) -> Callable[[Build], Build]:
    def register(function: Build) -> Build:
        for endpoint_id in endpoint_ids:
            SUCCESS[endpoint_id] = function
        return function
    return register


def condition(status: str, *endpoint_ids: str) -> Callable[[Build], Build]:
    """The builder of ``status``'s condition for each of these endpoints (an alias path, such
    as native-hooks for startup-items, shares its original's)."""
    def register(function: Build) -> Build:
        for endpoint_id in endpoint_ids:
            CONDITIONS[(endpoint_id, status)] = function
        return function
    return register


def _request(entry: dict[str, Any], path: dict[str, str] | None = None, *,
             body: dict[str, Any] | None = None, **kwargs: Any) -> Request:
    """The entry's method and path (placeholders filled), with the required body merged."""
    url = entry["path"].format(**(path or {}))
    json_body = None
    if entry.get("request_body", {}) and entry["request_body"].get("content_type") == "application/json":
        json_body = {**sheet.required_body(entry), **(body or {})}
    return Request(entry["method"], url, json=json_body, **kwargs)


async def default_success(world: World, entry: dict[str, Any]) -> Request:
    return _request(entry)


# -- success requests that need the daemon's state ------------------------------------------

@success("context_pack_get")
async def _pack_get(world, entry):
    return _request(entry, {"context_pack_id": await world["context_pack_id"]})


@success("memory_get")
async def _memory_get(world, entry):
    return _request(entry, {"memory_id": await world["memory"]})


@success("installed_open_memory_get")
async def _imem_get(world, entry):
    return _request(entry, {"installed_memory_id": await world["installed_memory"]})


@success("memory_brief_get")
async def _brief_get(world, entry):
    return _request(entry, {"brief_id": await world["brief"]})


@success("memory_brief_event")
async def _brief_event(world, entry):
    return _request(entry, {"brief_id": await world["brief"]},
                    body={"event_type": "decision", "importance": 3, "payload": {"files": ["a.py"]}})


@success("memory_delta")
async def _delta(world, entry):
    return _request(entry, body={"delta_type": "decision", "importance": 3},
                    headers={"X-AMP-Context-Receipt": await world["receipt"]})


@success("bootstrap_verify")
async def _verify(world, entry):
    return _request(entry, body={"receipt_id": await world["receipt"]})


@success("bootstrap_context", "bootstrap_refresh")
async def _bootstrap(world, entry):
    return _request(entry, body={"project_key": "contract", "runtime": "codex"})


@success("project_probe")
async def _probe(world, entry):
    return _request(entry, body={"project_key": "contract", "repo_root": str(world.repo)})


@success("startup_items_install_plan", "native_hooks_install_plan")
async def _plan(world, entry):
    return _request(entry, body={"runtime": "codex", "project_binding_id": await world["binding"]})


@success("startup_items_confirm", "native_hooks_confirm")
async def _confirm(world, entry):
    plan = await world["approved_plan"]
    return _request(entry, body={"startup_item_id": plan["plan_id"], "status": "installed",
                                 "observed_signature": plan["signature"]})


@success("sync_intents_list")
async def _intents(world, entry):
    await world["sync_intent"]
    return _request(entry, key="gated_key")


@success("sync_intent_get", "sync_intent_discard")
async def _intent(world, entry):
    return _request(entry, {"sync_intent_id": await world["sync_intent"]}, key="gated_key")


@success("sync_intent_resume")
async def _resume(world, entry):
    intent = await world["sync_intent"]
    await world.api.post("/api/agent/updates/ack", {}, key=await world.key("gated_key"))
    return _request(entry, {"sync_intent_id": intent}, key="gated_key")


@success("memories_create")
async def _create(world, entry):
    from tests.contract.world import SUITE
    return _request(entry, body={**SUITE, "title": "Contract Created"})


@success("memories_validate")
async def _validate(world, entry):
    from tests.contract.world import SUITE
    return Request("POST", entry["path"], json=dict(SUITE))


@success("memories_import")
async def _import(world, entry):
    return Request("POST", entry["path"], multipart={"file": legacy_zip()}, query={"visibility": "public"})


@success("memories_import_validate")
async def _import_validate(world, entry):
    return Request("POST", entry["path"], multipart={"file": legacy_zip()})


@success("catalog_suite", "catalog_download", "catalog_install_openclaw", "catalog_get",
         "catalog_versions")
async def _catalog(world, entry):
    return _request(entry, {"slug": await world["suite"]})


@success("memories_sync")
async def _sync(world, entry):
    return _request(entry, {"slug": await world["suite"]},
                    body={"event_type": "work_memory", "importance": 3, "tags": ["release"]})


@success("skill_manifest", "skill_pull", "skill_md")
async def _skill(world, entry):
    return _request(entry, {"skill_id": await world["skill"]})


@success("memory_router_select")
async def _select(world, entry):
    return _request(entry, body={"task": "record a decision", "what_i_remember": "we chose WAL"})


@success("memory_form_get")
async def _form(world, entry):
    return _request(entry, {"run_id": await world["run"]})


@success("memory_form_submit")
async def _submit(world, entry):
    return _request(entry, {"run_id": await world["run"]}, body={
        "payload": {"title": "Use WAL", "decision": "SQLite runs in WAL mode",
                    "context": "many readers, one writer", "rationale": "readers never wait",
                    "retrieval_triggers": ["sqlite"]},
        "visibility": "private"})


@success("workspace_memory_query", "workspace_memory_map")
async def _workspace(world, entry):
    await world["memory"]
    return _request(entry, {"workspace_id": await world["workspace"]}, query={"q": "sqlite"})


@success("code_memory_context")
async def _code(world, entry):
    return _request(entry, {"project_key": "contract"})


@success("agent_register")
async def _register(world, entry):
    solved = await world["challenge"]
    return _request(entry, body={**solved, "handle": "contract-registered",
                                 "pairing_code": await world["pairing_code"]}, key="none")


# -- conditions no derivation reaches ---------------------------------------------------------

@condition("400", "agent_register")
async def _register_bad_pow(world, entry):
    request = await _register(world, entry)
    return replace(request, json={**request.json, "nonce": "not-a-solution"})


@condition("422", "agent_register")
async def _register_short_handle(world, entry):
    request = await _register(world, entry)
    return replace(request, json={**request.json, "handle": "ab"})


@condition("422", "memories_validate")
async def _validate_no_title(world, entry):
    request = await _validate(world, entry)
    return replace(request, json={k: v for k, v in request.json.items() if k != "title"})


@condition("403", "skill_pull", "skill_md")
async def _skill_pull_scopeless(world, entry):
    return replace(await _skill(world, entry), key="scopeless_key")


@condition("403", "memory_form_get")
async def _form_foreign(world, entry):
    """An agent of another workspace reads the run: it has no reader role there."""
    return replace(await _form(world, entry), key="foreign_key")


@condition("400", "updates_ack")
async def _ack_unknown(world, entry):
    return _request(entry, body={"update_ids": ["upd_does_not_exist"]})


@condition("428", "memory_delta")
async def _delta_no_receipt(world, entry):
    return _request(entry, body={"delta_type": "decision"})


@condition("409", "memory_delta")
async def _delta_gated(world, entry):
    key = await world.key("gated_key")
    pack = await world.api.post("/api/agent/bootstrap/context", {}, key=key)
    return _request(entry, body={"importance": 5}, key="gated_key",
                    headers={"X-AMP-Context-Receipt": pack["receipt_id"]})


@condition("409", "memory_brief_event")
async def _event_gated(world, entry):
    await world["gated_key"]
    return _request(entry, {"brief_id": "brief_unknown"}, body={"importance": 5}, key="gated_key")


@condition("409", "memories_sync")
async def _sync_gated(world, entry):
    await world["gated_key"]
    return _request(entry, {"slug": "no-such-suite"}, body={"importance": 5}, key="gated_key")


@condition("409", "memory_form_submit")
async def _submit_gated(world, entry):
    await world["gated_key"]
    return _request(entry, {"run_id": "route_unknown"}, body={"payload": {"title": "x"}},
                    key="gated_key")


@condition("400", "memories_sync")
async def _sync_blank(world, entry):
    return _request(entry, {"slug": await world["suite"]}, body={"text": "   "})


@condition("400", "memories_create")
async def _create_bad_visibility(world, entry):
    request = await _create(world, entry)
    return replace(request, json={**request.json, "visibility": "everyone"})


@condition("400", "memories_validate")
async def _validate_bad_visibility(world, entry):
    request = await _validate(world, entry)
    return replace(request, json={**request.json, "visibility": "everyone"})


@condition("400", "memory_form_submit")
async def _submit_bad_visibility(world, entry):
    request = await _submit(world, entry)
    return replace(request, json={**request.json, "visibility": "everyone"})


@condition("400", "memories_import", "memories_import_validate")
async def _import_unsafe(world, entry):
    return Request("POST", entry["path"], multipart={"file": b"this is not a zip"})


@condition("413", "memories_import", "memories_import_validate")
async def _import_too_large(world, entry):
    return Request("POST", entry["path"], multipart={"file": b"PK" + b"\0" * (16 << 20)})


@condition("422", "memories_import", "memories_import_validate")
async def _import_no_file(world, entry):
    return Request("POST", entry["path"], multipart={"not_file": legacy_zip()})


@condition("409", "sync_intent_resume")
async def _resume_unacked(world, entry):
    return _request(entry, {"sync_intent_id": await world["sync_intent"]}, key="gated_key")


@condition("410", "sync_intent_resume")
async def _resume_expired(world, entry):
    intent = await world["sync_intent"]
    store = world.api.store
    with store.transaction():
        store.conn.execute("update sync_intents set created_at = ?, expires_at = ? where id = ?",
                           ("2000-01-01T00:00:00.000Z", "2000-01-02T00:00:00.000Z", intent))
    await world.api.post("/api/agent/updates/ack", {}, key=await world.key("gated_key"))
    return _request(entry, {"sync_intent_id": intent}, key="gated_key")


@condition("422", "sync_intent_resume")
async def _resume_form_missing(world, entry):
    """A held-back form submit whose payload misses the template's required fields."""
    key = await world.key("gated_key")
    run = await world.api.post("/api/memory/router/select", {
        "task": "record a decision", "what_i_remember": "we chose WAL",
        "memory_type": "decision_memory"}, key=key)
    blocked = await world.api.post(f"/api/memory/forms/{run['run_id']}/submit",
                                   {"payload": {"title": "only a title"}, "visibility": "workspace"},
                                   key=key, status=409)
    interrupt = blocked["detail"] if isinstance(blocked.get("detail"), dict) else blocked
    await world.api.post("/api/agent/updates/ack", {}, key=key)
    return _request(entry, {"sync_intent_id": interrupt["sync_intent_id"]}, key="gated_key")


@condition("404", "memory_brief_create")
async def _brief_unknown_workspace(world, entry):
    return _request(entry, body={"workspace_id": "wsp_00000000000000000000000000000000"})


@condition("404", "memory_router_select")
async def _select_unknown_workspace(world, entry):
    request = await _select(world, entry)
    return replace(request, json={**request.json, "workspace_id": "wsp_00000000000000000000000000000000"})


@condition("404", "project_probe")
async def _probe_unknown_workspace(world, entry):
    return _request(entry, body={"workspace_id": "wsp_00000000000000000000000000000000"})


@condition("404", "bootstrap_context", "bootstrap_refresh")
async def _bootstrap_unknown_binding(world, entry):
    return _request(entry, body={"project_binding_id": "pbind_00000000000000000000000000000000"})


@condition("404", "bootstrap_verify")
async def _verify_unknown(world, entry):
    return _request(entry, body={"receipt_id": "amp_receipt_00000000000000000000000000000000"})


@condition("404", "memory_delta")
async def _delta_unknown_binding(world, entry):
    request = await _delta(world, entry)
    return replace(request, json={**request.json,
                                  "project_binding_id": "pbind_00000000000000000000000000000000"})


@condition("404", "startup_items_install_plan", "native_hooks_install_plan")
async def _plan_unknown_binding(world, entry):
    return _request(entry, body={"runtime": "codex",
                                 "project_binding_id": "pbind_00000000000000000000000000000000"})


@condition("404", "startup_items_confirm", "native_hooks_confirm")
async def _confirm_unknown(world, entry):
    return _request(entry, body={"startup_item_id": "hook_00000000000000000000000000000000"})


@condition("422", "startup_items_confirm", "native_hooks_confirm")
async def _confirm_no_id(world, entry):
    return _request(entry, body={"status": "installed"})


@condition("404", "memories_sync")
async def _sync_unknown(world, entry):
    return _request(entry, {"slug": "no-such-suite"})


@condition("403", "workspace_memory_query", "workspace_memory_map")
async def _query_foreign(world, entry):
    return _request(entry, {"workspace_id": await world["foreign_workspace"]})
