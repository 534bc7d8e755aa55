"""Every route the router serves, enumerated from the router itself (so a route added later
is covered without anyone listing it): no request without a valid key reads or writes
anything, agent keys never reach a person's endpoints, and foreign Hosts and Origins are
refused before anything else happens.

The per-dialect error tables (tests/daemon/test_*errors.py) check the envelopes of the
declared endpoints; this file checks the router as a whole, with a canary memory in every
dialect that no refused or public answer may show.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from daemon import keys
from tests.daemon.helpers import GUARD, row_counts

CANARY = "canarysecretwordqv"
# Routes that answer without a key, and why (the registry says auth none or optional).
# The reference serves the same without a key (tests/contract); none holds memory.
PUBLIC = {
    "/healthz",
    "/health",
    "/agent/start",
    "/api/protocol/schema",
    "/api/openapi.json",
    "/api/session",
    "/api/agent/register",
    "/api/agent/updates/manifest",
    "/api/agent/autostart",
    "/api/agent/discovery",
    "/api/agent/navigation",
    "/agent/start.json",
    "/agent/discovery.json",
    "/api/agent/challenge",
    "/api/agent/methods",
    "/api/agent/methods/query",
    "/api/agent/skills",
    "/api/agent/skills/{skill_id}",
    "/api/memories/import/validate",
    "/api/memories/validate",
    "/api/memory/templates",
    # public suites only, as the reference's catalog; a private one is 404 without its key
    "/api/catalog",
    "/api/catalog/{slug}",
    "/api/catalog/{slug}/suite",
    "/api/catalog/{slug}/versions",
    "/api/catalog/{slug}/download",
    "/api/catalog/{slug}/install/openclaw",
    "/api/catalog/{slug}/diff",
}


def routes(api) -> list[tuple[str, str]]:
    """(method, path template) of every route in the router (HEAD and * excluded)."""
    found = set()
    for route in api.client.app.router.routes():
        info = route.resource.get_info() if route.resource else {}
        path = info.get("path") or info.get("formatter")
        if route.method not in ("HEAD", "*") and path:
            found.add((route.method, path))
    return sorted(found)


async def seed(api) -> dict[str, str]:
    """A canary memory in every dialect, and ids to put into path templates."""
    pack = await api.bootstrap()
    delta = await api.delta(pack["receipt_id"], summary=f"the {CANARY} lives here")
    store = await api.post("/api/v1/cloud/memory_stores", {"name": "canary"})
    document = await api.post(
        f"/api/v1/cloud/memory_stores/{store['id']}/memories",
        {"path": "canary.md", "content": f"{CANARY} in a document"},
    )
    await api.post(
        "/add_messages/",
        {"user_id": "u", "scope_id": "s", "messages": [{"role": "user", "content": f"{CANARY} message"}]},
    )
    return {
        "memory_id": delta["delta"]["memory_id"],
        "workspace_id": pack["workspace_id"],
        "context_pack_id": pack["context_pack_id"],
        "store_id": store["id"],
        "document_id": document["id"],
    }


def fill(path: str, ids: dict[str, str]) -> str:
    def value(match: re.Match) -> str:
        name = match.group(1)
        if name == "memory_id" and path.startswith("/api/v1/cloud/"):
            return ids["document_id"]
        return ids.get(name, f"{name}_unknown")

    return re.sub(r"\{(\w+)\}", value, path)


def leaks(body: str) -> bool:
    return CANARY in body


@pytest.fixture
async def world(api) -> dict[str, Any]:
    ids = await seed(api)
    with api.store.transaction():
        revoked, revoked_key = api.store.identities.create_agent("revoked", "codex")
        api.store.identities.disable_agent(revoked["id"])
    return {"ids": ids, "revoked_key": revoked_key}


async def test_the_router_serves_only_registered_routes(api):
    registered = {(e.method, e.path) for e in api.client.app[keys.ENDPOINTS]}
    assert set(routes(api)) == registered
    assert {p for p in PUBLIC} == {e.path for e in api.client.app[keys.ENDPOINTS] if e.auth != "required"}


@pytest.mark.parametrize("credential", ["none", "malformed", "unknown", "revoked"])
async def test_no_route_reads_or_writes_without_a_valid_key(api, world, credential):
    header = {
        "none": None,
        "malformed": "Token abc",
        "unknown": "Bearer mca_unknown_key_000",
        "revoked": f"Bearer {world['revoked_key']}",
    }[credential]
    checked = 0
    for method, template in routes(api):
        before = row_counts(api)
        response = await api.client.request(
            method,
            fill(template, world["ids"]),
            json={"content": CANARY, "summary": CANARY},
            headers={"Authorization": header} if header else {},
        )
        body = await response.text()
        assert row_counts(api) == before, f"{method} {template} changed the store"
        assert not leaks(body), f"{method} {template} showed a memory without a valid key"
        if template not in PUBLIC:
            assert response.status == 401, (method, template, response.status, body[:200])
        else:
            assert response.status < 500, (method, template, body[:200])
        checked += 1
    assert checked > 100


async def test_agent_keys_never_reach_a_persons_endpoints(api, world):
    """Everything owner-only in the registry, and everything under /api/local/ whatever the
    registry says, refuses every agent key (all agent scopes) and changes nothing."""
    owner_only = {(e.method, e.path) for e in api.client.app[keys.ENDPOINTS] if e.owner_only}
    local = {(m, p) for m, p in routes(api) if p.startswith("/api/local/")}
    assert local <= owner_only
    named = {
        "approve setup": ("POST", "/api/local/startup/plans/{plan_id}/approve"),
        "revoke keys": ("POST", "/api/local/agents/{agent}/revoke"),
        "redact": ("POST", "/api/local/memories/{memory_id}/redact"),
        "redact a store version": (
            "POST",
            "/api/v1/cloud/memory_stores/{store_id}/memory_versions/{version_id}/redact",
        ),
        "publish updates": ("POST", "/api/local/updates"),
    }
    assert set(named.values()) <= owner_only, "a person's action is open to agents"
    bodies = {
        "/api/local/updates": {"title": "t", "summary": "s"},
        "/api/local/memories/{memory_id}/redact": {"version": 1},
        "/api/local/startup/plans/{plan_id}/approve": {},
        "/api/local/agents": {"name": "intruder"},
    }
    for method, template in sorted(owner_only):
        before = row_counts(api)
        response = await api.client.request(
            method, fill(template, world["ids"]), json=bodies.get(template, {}), headers=api.auth()
        )
        body = await response.text()
        assert response.status == 403, (method, template, response.status, body[:200])
        assert "owner" in body and not leaks(body)
        assert row_counts(api) == before


@pytest.mark.parametrize("variant", list(GUARD))
async def test_foreign_host_or_origin_is_refused_on_every_route(api, world, variant):
    headers, mention = GUARD[variant]
    for method, template in routes(api):
        before = row_counts(api)
        response = await api.client.request(
            method,
            fill(template, world["ids"]),
            json={"summary": CANARY},
            headers={**api.auth(api.owner_key), **headers},
        )
        body = await response.text()
        assert response.status == 403 and mention in body, (method, template, response.status)
        assert not leaks(body) and row_counts(api) == before
