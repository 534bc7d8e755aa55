"""Shared by the API error tests (test_api_errors.py, test_startup_api_errors.py,
test_updates_api_errors.py, test_suites_api_errors.py, test_tools_api_errors.py,
test_dialects_api_errors.py).

Each test file declares its endpoints once as ``Ep`` rows holding a request that succeeds;
an error test sends a variation of it (``send``) and ``expect_error`` checks the status, the
envelope (amp.error.v1 unless told otherwise: ``assert_stores_envelope`` for Memory Stores,
``assert_mem1_detail`` for agent-memory1.0), and that neither the store nor the files of the
test's repositories changed.

A module's world (the resources its requests name) is built once per test process and copied
into each test's home: ``world_fixtures`` below.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from state.paths import Paths
from tests.conftest import Api, seed_database, start_api

READ, WRITE, OWNER = "memory:read", "memory:write", "owner"
DEFAULT = object()  # in send(): the declared body; the key the endpoint is for
ERROR_TYPES = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    410: "gone",
    413: "payload_too_large",
    422: "validation_error",
    428: "bootstrap_required",
}

# What a failed request must leave as it was: row counts, plus a few states a row can move
# through without the count changing.
ROW_COUNTS = {
    table: f"select count(*) from {table}"
    for table in (
        "memory_records",
        "memory_versions",
        "memory_deltas",
        "summary_cards",
        "memory_briefs",
        "brief_events",
        "adaptive_runs",
        "context_packs",
        "receipts",
        "runtime_profiles",
        "project_bindings",
        "identities",
        "api_keys",
        "startup_plans",
        "managed_regions",
        "conflicts",
        "platform_updates",
        "update_acks",
        "sync_intents",
        "suites",
        "suite_versions",
        "suite_files",
        "suite_fts",
        "installed_open_memories",
        "claims",
        "distill_jobs",
        "memory_stores",
        "mem1_messages",
        "mem1_variables",
    )
} | {
    "submitted_runs": "select count(*) from adaptive_runs where status = 'submitted'",
    "used_pairing_codes": "select count(*) from pairing_codes where used_at is not null",
    # string_agg with its order: both engines have it (SQLite from 3.44).
    "plan_statuses": "select string_agg(id || ':' || status, ' ' order by id) from startup_plans",
    "region_records": "select string_agg(record || owners, ' ' order by id) from managed_regions",
    "open_conflicts": "select count(*) from conflicts where status = 'open'",
    "intent_statuses": "select string_agg(id || ':' || status, ' ' order by id) from sync_intents",
    "suite_latest": "select string_agg(slug || ':' || latest_version, ' ' order by slug) from suites",
    # a claim extended by its holder or released keeps the row count
    "claim_states": "select string_agg(id || ':' || expires_at || ':' || coalesce(released_at, '-'),"
    " ' ' order by id) from claims",
    "distill_progress": "select string_agg(id || ':' || status || ':' || done_chunks, ' ' order by id)"
    " from distill_jobs",
    # Memory Stores: archiving and updating a store, redacting a version keep the counts
    "store_states": "select string_agg(id || ':' || status || ':' || updated_at, ' ' order by id)"
    " from memory_stores",
    "redacted_versions": "select count(*) from memory_versions where redacted_at is not null",
    # agent-memory1.0: updating a variable keeps the count
    "variable_values": "select string_agg(namespace || ':' || name || '=' || value, ' '"
    " order by namespace, name) from mem1_variables",
}


@dataclass(frozen=True)
class Ep:
    method: str
    path: str  # may hold {placeholders} filled from `world`
    body: dict[str, Any] | None = None  # a body that succeeds (None: no body)
    scope: str | None = None  # READ, WRITE, OWNER or None (any key)
    headers: dict[str, str] = field(default_factory=dict)


# -- variations every endpoint gets -------------------------------------------------------

AUTH_VARIANTS = {
    "no-key": None,
    "wrong-key": "mca_not-a-real-key",
    "basic-scheme": "Basic abc",
    "empty-bearer": "Bearer  ",
    "revoked-key": "{revoked_key}",
}

GUARD = {
    "foreign-host": ({"Host": "evil.example"}, "evil.example"),
    "foreign-host-port": ({"Host": "localhost.evil.example:8517"}, "localhost.evil.example"),
    "foreign-origin": ({"Origin": "https://evil.example"}, "https://evil.example"),
    "null-origin": ({"Origin": "null"}, "'null'"),
}

MALFORMED = {
    "truncated-json": (b'{"summary": ', "malformed JSON"),
    "trailing-comma": (b'{"summary": "x",}', "malformed JSON"),
    "json-array": (b'[{"summary": "x"}]', "must be a JSON object"),
    "json-string": (b'"summary"', "must be a JSON object"),
    "not-utf8": (b'{"summary": "\xff\xfe"}', "UTF-8"),
}

OVER_ONE_MIB = b'{"summary": "' + b"x" * (1 << 20) + b'"}'


# -- sending and checking -----------------------------------------------------------------


def fill(value: Any, world: dict[str, str]) -> Any:
    if isinstance(value, str):
        return value.format(**world)
    if isinstance(value, dict):
        return {k: fill(v, world) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, world) for v in value]
    return value


# All of them in one statement: one round trip to PostgreSQL instead of ~45 (a snapshot of
# test_sync_api_errors.py's team server took 16 ms), and one statement for SQLite.
ROW_COUNTS_SQL = "select " + ", ".join(f"({sql})" for sql in ROW_COUNTS.values())


def row_counts(api) -> dict[str, Any]:
    return dict(zip(ROW_COUNTS, api.store.conn.execute(ROW_COUNTS_SQL).fetchone(), strict=True))


def repo_files(root: str | Path) -> dict[str, bytes | None]:
    """Everything under root: relative path -> bytes (None for a directory)."""
    root = Path(root)
    if not root.exists():
        return {}
    found: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            found[os.path.relpath(os.path.join(dirpath, name), root) + "/"] = None
        for name in filenames:
            path = os.path.join(dirpath, name)
            found[os.path.relpath(path, root)] = Path(path).read_bytes()
    return found


def snapshot(api, world: dict[str, str]) -> tuple[dict[str, Any], dict[str, bytes | None]]:
    """The store's row counts and, if the world has repositories ({repos}), their files."""
    return row_counts(api), repo_files(world["repos"]) if "repos" in world else {}


def assert_unchanged(before: tuple[dict, dict], after: tuple[dict, dict]) -> None:
    (rows, files), (rows_now, files_now) = before, after
    changed_rows = {k: (rows[k], rows_now[k]) for k in rows if rows[k] != rows_now[k]}
    assert not changed_rows, f"a failed request changed the store: {changed_rows}"
    changed_files = sorted(
        k
        for k in files.keys() | files_now.keys()
        if (k in files, files.get(k)) != (k in files_now, files_now.get(k))
    )
    assert not changed_files, f"a failed request changed files in the repository: {changed_files}"


async def send(
    api,
    world,
    ep: Ep,
    *,
    body: Any = DEFAULT,
    raw: bytes | None = None,
    key: Any = DEFAULT,
    headers: dict[str, str] | None = None,
    path: str | None = None,
    method: str | None = None,
) -> tuple[int, Any]:
    """Send `ep`'s valid request with the given parts replaced; (status, JSON body).

    The default key is the owner's for OWNER endpoints, else the fixture's agent's."""
    all_headers = fill({**ep.headers, **(headers or {})}, world)
    if key is DEFAULT:
        key = api.owner_key if ep.scope == OWNER else api.agent_key
    if key is not None:
        all_headers["Authorization"] = key if " " in key else f"Bearer {key}"
    kwargs: dict[str, Any] = {}
    if raw is not None:
        kwargs["data"] = raw
    elif ep.method == "POST":
        kwargs["json"] = fill(ep.body if body is DEFAULT else body, world)
    response = await api.client.request(
        method or ep.method, fill(path or ep.path, world), headers=all_headers, **kwargs
    )
    text = await response.text()
    try:  # a 204 has no body; a few answers are plain text
        return response.status, json.loads(text) if text else None
    except ValueError:
        return response.status, text


def assert_envelope(data: dict[str, Any], status: int, path: str) -> None:
    error = data["error"]
    # A 428 body is amp.bootstrap-required.v1, merged at the top level (see middleware).
    assert data["schema"] == ("amp.bootstrap-required.v1" if status == 428 else "amp.error.v1")
    assert set(error) >= {"id", "type", "status", "message", "detail", "path", "time"}
    assert error["status"] == status
    assert error["type"] == ERROR_TYPES[status]
    assert error["id"].startswith("err_") and error["time"]
    assert error["path"] == path.split("?")[0]
    assert isinstance(error["message"], str) and error["message"].strip()
    assert "detail" in data and error["detail"] == data["detail"]


# Memory Stores (seed 001) errors: {"type": "error", "error": {"type", "message"[, "details"]}}
STORES_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    409: "conflict_error",
    413: "request_too_large",
    422: "invalid_request_error",
}


def assert_stores_envelope(data: dict[str, Any], status: int, path: str) -> None:
    assert set(data) == {"type", "error"} and data["type"] == "error", data
    assert set(data["error"]) <= {"type", "message", "details"}, data
    assert data["error"]["type"] == STORES_ERROR_TYPES[status]
    assert isinstance(data["error"]["message"], str) and data["error"]["message"].strip()


def assert_mem1_detail(data: dict[str, Any], status: int, path: str) -> None:
    """agent-memory1.0 (FastAPI) errors: {"detail": "..."}, or for bad fields (422)
    {"detail": [{"loc": ["body", field], "msg": ..., "type": ...}, ...]}."""
    assert set(data) == {"detail"}, data
    detail = data["detail"]
    if isinstance(detail, list):
        assert status == 422 and detail, data
        for item in detail:
            assert set(item) == {"loc", "msg", "type"} and item["loc"][0] == "body", item
            assert len(item["loc"]) == 2 and item["msg"].strip() and item["type"], item
    else:
        assert isinstance(detail, str) and detail.strip(), data


def message_of(data: dict[str, Any]) -> str:
    """The human message of any dialect's error body."""
    if "error" in data:
        return data["error"]["message"]
    detail = data["detail"]
    return detail if isinstance(detail, str) else " ".join(item["msg"] for item in detail)


async def expect_error(
    api,
    world,
    ep: Ep,
    status: int | tuple[int, ...],
    *,
    mentions: tuple[str, ...] = (),
    envelope=assert_envelope,
    **parts: Any,
) -> dict[str, Any]:
    """Send a variation of `ep`; check status (or one of several), envelope and that nothing
    changed, in the store or on disk."""
    before = snapshot(api, world)
    got, data = await send(api, world, ep, **parts)
    assert got in (status if isinstance(status, tuple) else (status,)), data
    envelope(data, got, fill(parts.get("path") or ep.path, world))
    for word in mentions:
        assert fill(word, world) in message_of(data), message_of(data)
    assert_unchanged(before, snapshot(api, world))
    return data


def bug(reason: str):
    return pytest.mark.xfail(reason=f"BUG: {reason}", strict=True)


# -- the world every test starts from ------------------------------------------------------


async def base_world(api) -> dict[str, str]:
    """Resources of the fixture's agent, another agent, an agent of a foreign workspace, and
    keys with partial scopes, all as strings for the {placeholders}."""
    store = api.store
    pack = await api.bootstrap()
    delta = await api.delta(pack["receipt_id"], summary="seed memory about sqlite")
    brief = await api.post("/api/agent/memory-brief", {"task": "seed task"})
    run = await api.post(
        "/api/memory/router/select",
        {"task": "seed task", "what_i_remember": "w", "memory_type": "decision_memory"},
    )
    binding = await api.post("/api/agent/project/probe", {"project_key": "demo"})
    other_key = api.new_agent("other-agent")
    other_pack = await api.post("/api/agent/bootstrap/context", {}, key=other_key)
    with store.transaction():
        foreign_ws = store.identities.create_workspace("Foreign", owner_id=None)
        _, foreign_key = store.identities.create_agent(
            "foreign-agent", "codex", workspace_id=foreign_ws["id"]
        )
        revoked, revoked_key = store.identities.create_agent("revoked-agent", "codex")
        store.identities.disable_agent(revoked["id"])
        pairing = store.identities.create_pairing_code("paired-agent", "codex")
    return {
        "receipt": pack["receipt_id"],
        "pack": pack["context_pack_id"],
        "memory": delta["delta"]["memory_id"],
        "brief": brief["brief_id"],
        "run": run["run_id"],
        "workspace": pack["workspace_id"],
        "binding": binding["project_binding_id"],
        "other_key": other_key,
        "other_receipt": other_pack["receipt_id"],
        "other_pack": other_pack["context_pack_id"],
        "foreign_key": foreign_key,
        "foreign_workspace": foreign_ws["id"],
        "revoked_key": revoked_key,
        "pairing_code": pairing["pairing_code"],
        "read_key": api.new_agent("reader", scopes=[READ]),
        "write_key": api.new_agent("writer", scopes=[WRITE]),
    }


# -- each module's world, built once per test process ---------------------------------------

# Building a world over HTTP took 25-60 ms of every test's 60-110 ms setup (pytest
# --durations, 2026-12-03), and the modules below hold ~2,000 tests. So a module's world is
# built once per test process, in its first test's home; the closed home (store file and
# secrets) is kept as a template, and every later test starts its own app on a copy of it.
# Each test still has its own store, files and app: only the HTTP calls that built the world
# are saved.

# A world holds pairing codes (valid 10 minutes) and claims (15 minutes by default): a
# template older than this is built again, so none of them lapses before a test uses it.
TEMPLATE_MAX_AGE_SECONDS = 300.0

WorldBuilder = Callable[[Api], Awaitable[dict[str, str]]]


@dataclass(frozen=True)
class _Template:
    home: Path  # a copy of the closed MEMORYCLOUD_HOME the world was built in
    world: dict[str, str]
    agent: tuple[dict[str, Any], str]  # the test agent's record and key
    built_at: float


_templates: dict[WorldBuilder, _Template] = {}


def _assert_relocatable(home: Path) -> None:
    """A copied home must not point back at the one it was built in: a world that records
    its home's path (repositories under tmp_path, say) cannot be a template."""
    needle = str(home).encode()
    for path in home.rglob("*"):
        if path.is_file() and needle in path.read_bytes():
            raise AssertionError(f"{path} records its home's path {home}: build this world per test")


async def open_world(
    build: WorldBuilder, aiohttp_client, home: Path, paths: Paths, migrated_database: Path, scratch: Path
) -> tuple[Api, dict[str, str]]:
    """The app of this test on a store holding `build`'s world, and that world's
    {placeholders}. `home` is the test's MEMORYCLOUD_HOME; `scratch` a directory of the
    session where the template is kept."""
    template = _templates.get(build)
    if template is not None and time.monotonic() - template.built_at < TEMPLATE_MAX_AGE_SECONDS:
        shutil.copytree(template.home, home, dirs_exist_ok=True)
        api = await start_api(aiohttp_client, paths, template.agent)
        return api, dict(template.world)
    seed_database(paths, migrated_database)
    builder = await start_api(aiohttp_client, paths)
    world = await build(builder)
    await builder.client.close()  # the store folds its WAL in and closes: the home is complete
    _assert_relocatable(home)
    kept = scratch / f"world-{len(_templates)}-{time.monotonic_ns()}"
    shutil.copytree(home, kept)
    template = _Template(kept, world, (builder.agent, builder.agent_key), time.monotonic())
    _templates[build] = template
    api = await start_api(aiohttp_client, paths, template.agent)
    return api, dict(world)


def world_fixtures(build: WorldBuilder):
    """The `api` and `world` fixtures of a module whose world `build` makes (see open_world):
    ``built_world, api, world = world_fixtures(build_world)`` at module level."""

    @pytest.fixture
    async def built_world(aiohttp_client, isolated_home, paths, migrated_database, tmp_path_factory):
        scratch = tmp_path_factory.getbasetemp()
        return await open_world(build, aiohttp_client, isolated_home, paths, migrated_database, scratch)

    @pytest.fixture
    def api(built_world) -> Api:
        return built_world[0]

    @pytest.fixture
    def world(built_world) -> dict[str, str]:
        return built_world[1]

    return built_world, api, world
