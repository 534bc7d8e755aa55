"""Bad input on the other dialects: Memory Stores (daemon/api/stores.py), agent-memory1.0
(daemon/api/mem1.py), the cross-dialect search (GET /api/agent/search) and MCP over HTTP
(daemon/api/mcp_http.py): status, each dialect's own error body, and nothing stored
(helpers.py; its row counts include memory stores and their states, redactions, mem1
messages and variables).

Same scheme as test_api_errors.py: every endpoint is declared once (STORES, MEM1, SEARCH,
MCP) with a request that succeeds in the world below, and each error test sends a variation
of it. Error bodies: Memory Stores ``{"type": "error", "error": {"type", "message"}}``;
agent-memory1.0 FastAPI's ``{"detail": "..."}`` or, for bad fields, ``{"detail": [{"loc":
["body", field], ...}]}``; the search and /mcp's auth errors amp.error.v1; /mcp's
transport and JSON-RPC errors (the MCP SDK's sessions included) ``{"jsonrpc", "id", "error":
{"code", "message"}}``. Failed requests must not open MCP sessions either.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from daemon import keys
from tests.daemon import helpers
from tests.daemon.helpers import (
    AUTH_VARIANTS, DEFAULT, GUARD, MALFORMED, OVER_ONE_MIB, OWNER, READ, WRITE, Ep, assert_envelope,
    assert_mem1_detail, assert_stores_envelope, assert_unchanged, base_world, fill,
    row_counts, snapshot, world_fixtures,
)

S = "/api/v1/cloud/memory_stores"
SM, SV = S + "/{store}/memories", S + "/{store}/memory_versions"
STORES = {
    "store_create": Ep("POST", S, {"name": "declared store"}, WRITE),
    "store_list": Ep("GET", S + "?limit=5", scope=READ),
    "store_get": Ep("GET", S + "/{store}", scope=READ),
    "store_update": Ep("POST", S + "/{store}", {"description": "updated"}, WRITE),
    "store_archive": Ep("POST", S + "/{store}/archive", {}, WRITE),
    "store_delete": Ep("DELETE", S + "/{store}", scope=WRITE),
    "memory_create": Ep("POST", SM, {"path": "notes/new.md", "content": "new"}, WRITE),
    "memory_list": Ep("GET", SM + "?path_prefix=notes/", scope=READ),
    "memory_get": Ep("GET", SM + "/{store_mem}", scope=READ),
    "memory_update": Ep("POST", SM + "/{store_mem}", {"content": "v2", "content_sha256": "{store_sha}"}, WRITE),
    "memory_delete": Ep("DELETE", SM + "/{store_mem}", scope=WRITE),
    "version_list": Ep("GET", SV + "?memory_id={store_mem}", scope=READ),
    "version_get": Ep("GET", SV + "/{store_version}", scope=READ),
    # Redaction destroys history for good: a person's decision (the owner key), not an agent's.
    "version_redact": Ep("POST", SV + "/{store_version}/redact", {}, OWNER),
}
A = {"user_id": "alice", "scope_id": "edp_agent"}
M = [{"role": "user", "content": "I like tea"}]
MEM1 = {
    "health": Ep("GET", "/health"),
    "add": Ep("POST", "/add_messages/", {**A, "messages": M}, WRITE),
    "search": Ep("POST", "/search_memory/", {**A, "query": "green tea", "threshold": 0.0}, READ),
    "summary": Ep("POST", "/search_user_history_summary/", {**A, "query": "tea"}, READ),
    "page": Ep("POST", "/get_user_mem_by_page/", dict(A), READ),
    "page_total": Ep("POST", "/get_user_mem_by_page_with_total/", dict(A), READ),
    "update": Ep("POST", "/update_mem_by_id/", {**A, "mem_id": "{mem1}", "memory": "I like coffee"},
                 WRITE),
    "delete": Ep("POST", "/delete_mem_by_id/", {**A, "mem_id": "{mem1}"}, WRITE),
    "batch": Ep("POST", "/batch_delete_mem/", {**A, "mem_ids": ["{mem1}"]}, WRITE),
    "get_vars": Ep("POST", "/get_variables/", {**A, "names": ["mood"]}, READ),
    "set_vars": Ep("POST", "/update_variables/", {**A, "variables": {"mood": "happy"}}, WRITE),
    "del_vars": Ep("POST", "/delete_variables/", {**A, "names": ["mood"]}, WRITE),
    "message": Ep("POST", "/get_message_by_id/", {"message_id": "{message}"}, READ),
    "del_scope": Ep("POST", "/delete_mem_by_scope/", {"scope_id": "edp_agent"}, WRITE),
}
SEARCH = {"search_all": Ep("GET", "/api/agent/search?q=seed", scope=READ)}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "tests", "version": "0"}}}
SESSION = {"Mcp-Session-Id": "{session}"}
MCP = {
    "mcp_post": Ep("POST", "/mcp", PING, READ, SESSION),
    "mcp_delete": Ep("DELETE", "/mcp", scope=READ, headers=SESSION),
    "mcp_get": Ep("GET", "/mcp", scope=READ, headers=SESSION),  # "succeeds" with its 405
}
ALL = {**STORES, **MEM1, **SEARCH, **MCP}
AUTHED = [name for name in ALL if name != "health"]
POSTS = [name for name, ep in ALL.items() if ep.method == "POST"]
JSON_POSTS = [name for name in POSTS if name != "mcp_post"]
DECLARED_STATUS = {"mcp_delete": 200, "mcp_get": 405}


def envelope_of(name: str):
    return (assert_stores_envelope if name in STORES else
            assert_mem1_detail if name in MEM1 else assert_envelope)


def mcp_sessions(api) -> list[str]:
    return list(api.client.app[keys.MCP_HTTP].states)


async def send(api, world, name: str, **parts: Any) -> tuple[int, Any]:
    return await helpers.send(api, world, ALL[name], **parts)


async def expect_error(api, world, name: str, status: int | tuple[int, ...], **parts) -> Any:
    """helpers.expect_error with the endpoint's dialect envelope; no MCP session opened or
    closed either."""
    sessions = mcp_sessions(api)
    data = await helpers.expect_error(api, world, ALL[name], status, envelope=envelope_of(name),
                                      **parts)
    assert mcp_sessions(api) == sessions
    return data


def details(data: dict[str, Any]) -> dict[str, Any]:
    """The structured part of an error: Memory Stores' error.details, AMP's detail."""
    return data["error"]["details"] if "type" in data else data["detail"]


async def build_world(api) -> dict[str, str]:
    """The base world plus: our Memory Store {store} with one memory {store_mem} (content_sha256
    {store_sha}, first version {store_version}); another store's {other_mem} and
    {other_version}; an archived store {archived} holding {archived_mem} ({archived_sha});
    alice's mem1 memory {mem1} from message {message}, her variable mood=calm."""
    world = await base_world(api)
    for label in ("store", "other", "archived"):
        store = await api.post(S, {"name": f"{label} store"})
        memory = await api.post(f"{S}/{store['id']}/memories",
                                {"path": f"notes/{label}.md", "content": f"{label} content"})
        versions = await api.get(f"{S}/{store['id']}/memory_versions")
        world |= {label: store["id"], f"{label}_mem": memory["id"],
                  f"{label}_sha": memory["content_sha256"], f"{label}_version": versions["data"][0]["id"]}
    await api.post(f"{S}/{world['archived']}/archive", {})
    added = await api.post("/add_messages/", {**A, "session_id": "s1", "messages": [
        {"role": "user", "content": "I drink green tea every morning"}]})
    profile = await api.post("/get_user_mem_by_page/", {**A, "memory_type": "user_profile"})
    await api.post("/update_variables/", {**A, "variables": {"mood": "calm"}})
    return world | {"mem1": profile["results"][0]["mem_id"], "message": added["message_ids"][0]}


# Built once per test process and copied (helpers.open_world): building it took ~50 of each
# test's ~85 ms (pytest --durations, 2026-12-07).
built_world, api = world_fixtures(build_world)[:2]


@pytest.fixture
async def world(built_world) -> dict[str, str]:
    """build_world's placeholders and an MCP session {session} opened with our key (sessions
    live in the app, so each test opens its own)."""
    api, world = built_world
    response = await api.client.post("/mcp", json=INIT, headers=api.auth())
    assert response.status == 200
    return world | {"session": response.headers["Mcp-Session-Id"]}


# -- the baseline: the declared requests succeed -------------------------------------------

@pytest.mark.parametrize("name", list(ALL))
async def test_declared_request_succeeds(api, world, name):
    status, data = await send(api, world, name)
    assert status == DECLARED_STATUS.get(name, 200), data
    if name in ("search", "page"):  # the world's memory is there to be found
        assert world["mem1"] in [r["mem_id"] for r in data["results"]]
    if name == "get_vars":
        assert data["variables"] == {"mood": "calm"}
    if name == "message":
        assert (data["found"], data["content"]) == (True, "I drink green tea every morning")


# -- authentication, authorization and the Host/Origin guard --------------------------------

@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", AUTHED)
async def test_missing_or_invalid_key_is_401(api, world, name, variant):
    key = fill(AUTH_VARIANTS[variant], world)
    await expect_error(api, world, name, 401, key=key, mentions=("API key",))


@pytest.mark.parametrize("name", AUTHED)
async def test_missing_scope_is_403(api, world, name):
    scope = ALL[name].scope
    key = world["read_key"] if scope == WRITE else world["write_key"]
    data = await expect_error(api, world, name, 403, key=key, mentions=(scope,))
    if name not in MEM1 and scope != OWNER:
        assert details(data)["required_scope"] == scope


@pytest.mark.parametrize("name", [n for n in AUTHED if n not in MCP and ALL[n].scope != OWNER])
async def test_the_scope_alone_is_enough(api, world, name):
    """Control for the test above: a key with only the endpoint's scope gets through."""
    key = world["read_key"] if ALL[name].scope == READ else world["write_key"]
    status, data = await send(api, world, name, key=key)
    assert status == 200, data


@pytest.mark.parametrize("variant", list(GUARD))
@pytest.mark.parametrize("name", list(ALL))
async def test_foreign_host_or_origin_is_403(api, world, name, variant):
    headers, mention = GUARD[variant]
    await expect_error(api, world, name, 403, headers=headers, mentions=(mention,))


@pytest.mark.parametrize("method,name", [
    ("PUT", "store_create"), ("PATCH", "store_get"), ("GET", "store_archive"), ("PUT", "memory_get"),
    ("POST", "version_list"), ("DELETE", "version_get"), ("GET", "version_redact"),
    ("GET", "add"), ("PUT", "search"), ("DELETE", "del_scope"), ("POST", "health"),
    ("GET", "message"), ("POST", "search_all"), ("PUT", "mcp_post"), ("PATCH", "mcp_post"),
])
async def test_wrong_method_is_405(api, world, method, name):
    await expect_error(api, world, name, 405, method=method, mentions=(method,))


# -- malformed and oversized bodies ----------------------------------------------------------

@pytest.mark.parametrize("variant", list(MALFORMED))
@pytest.mark.parametrize("name", JSON_POSTS)
async def test_malformed_body_is_400(api, world, name, variant):
    raw, mention = MALFORMED[variant]
    await expect_error(api, world, name, 400, raw=raw,
                       headers={"Content-Type": "application/json"}, mentions=(mention,))


@pytest.mark.parametrize("name", POSTS)
async def test_body_over_one_mib_is_413(api, world, name):
    await expect_error(api, world, name, 413, raw=OVER_ONE_MIB, mentions=("1048576",))


@pytest.mark.parametrize("name,body", [
    ("store_create", {"name": "\ud800 broken"}),
    ("memory_create", {"path": "a.md", "content": "\ud800 broken"}),
    ("add", {**A, "messages": [{"role": "user", "content": "\ud800 broken"}]}),
    ("set_vars", {**A, "variables": {"mood": "\ud800"}}),
], ids=["store-name", "memory-content", "mem1-message", "mem1-variable"])
async def test_lone_surrogate_is_400(api, world, name, body):
    await expect_error(api, world, name, 400, body=body, mentions=("Unicode",))


# -- field validation (422) -----------------------------------------------------------------

INVALID = [
    # (endpoint, body, offending field, missing_fields or None)
    ("store_create", {}, "name", ["name"]), ("store_create", {"name": None}, "name", ["name"]),
    ("store_create", {"name": ""}, "name", None), ("store_create", {"name": "  "}, "name", None),
    ("store_create", {"name": 5}, "name", None), ("store_create", {"name": "n" * 201}, "name", None),
    ("store_create", {"name": "n", "description": "d" * 2001}, "description", None),
    ("store_create", {"name": "n", "metadata": []}, "metadata", None),
    ("store_update", {"name": ""}, "name", None), ("store_update", {"name": 5}, "name", None),
    ("store_update", {"metadata": "x"}, "metadata", None),
    ("memory_create", {}, "path", ["path", "content"]),
    ("memory_create", {"path": "a.md"}, "content", ["content"]),
    ("memory_create", {"path": 5, "content": "c"}, "path", None),
    ("memory_create", {"path": "p" * 1025, "content": "c"}, "path", None),
    ("memory_create", {"path": "a.md", "content": ["c"]}, "content", None),
    ("memory_create", {"path": "a.md", "content": "c", "metadata": "m"}, "metadata", None),
    ("memory_update", {}, "content", ["content"]), ("memory_update", {"content": 5}, "content", None),
    ("memory_update", {"content": "c", "content_sha256": 5}, "content_sha256", None),
    ("memory_update", {"content": "c", "content_sha256": "f" * 65}, "content_sha256", None),
    ("memory_update", {"content": "c", "metadata": []}, "metadata", None),
    ("add", {}, "messages", ["messages"]), ("add", {**A, "messages": "hi"}, "messages", None),
    ("add", {**A, "messages": ["hi"]}, "messages", None),
    ("add", {**A, "messages": M * 1001}, "messages", None),
    ("add", {**A, "messages": M, "user_id": 5}, "user_id", None),
    ("add", {**A, "messages": M, "scope_id": "s" * 129}, "scope_id", None),
    ("add", {**A, "messages": M, "session_id": 5}, "session_id", None),
    ("add", {**A, "messages": M, "enable_long_term_mem": "yes"}, "enable_long_term_mem", None),
    ("add", {**A, "messages": M, "mem_variables": [1]}, "mem_variables", None),
    ("search", dict(A), "query", ["query"]), ("search", {**A, "query": "q", "num": 0}, "num", None),
    ("search", {**A, "query": "q", "num": 201}, "num", None),
    ("search", {**A, "query": "q", "num": "5"}, "num", None),
    ("search", {**A, "query": "q", "threshold": "high"}, "threshold", None),
    ("summary", {**A, "query": 5}, "query", None), ("page", {**A, "page_size": "10"}, "page_size", None),
    ("page_total", {**A, "memory_type": 5}, "memory_type", None),
    ("update", dict(A), "mem_id", ["mem_id", "memory"]),
    ("update", {**A, "mem_id": "{mem1}"}, "memory", ["memory"]),
    ("update", {**A, "mem_id": 5, "memory": "m"}, "mem_id", None),
    ("delete", dict(A), "mem_id", ["mem_id"]), ("batch", dict(A), "mem_ids", ["mem_ids"]),
    ("batch", {**A, "mem_ids": "{mem1}"}, "mem_ids", None), ("batch", {**A, "mem_ids": [5]}, "mem_ids", None),
    ("get_vars", {**A, "names": "mood"}, "names", None), ("set_vars", dict(A), "variables", ["variables"]),
    ("set_vars", {**A, "variables": [["mood", "x"]]}, "variables", None),
    ("del_vars", dict(A), "names", ["names"]), ("del_vars", {**A, "names": [1]}, "names", None),
    ("message", {}, "message_id", ["message_id"]), ("message", {"message_id": 5}, "message_id", None),
    ("del_scope", {}, "scope_id", ["scope_id"]), ("del_scope", {"scope_id": 5}, "scope_id", None),
]


@pytest.mark.parametrize("name,body,fieldname,missing", INVALID, ids=[
    f"{n}-{f}=" + (repr(b[f])[:12] if f in b else "missing") for n, b, f, _ in INVALID])
async def test_invalid_field_is_422(api, world, name, body, fieldname, missing):
    data = await expect_error(api, world, name, 422, body=body, mentions=(fieldname,))
    if name in MEM1:
        assert [i["loc"] for i in data["detail"]] == [["body", f] for f in missing or [fieldname]]
    elif missing:
        assert details(data)["missing_fields"] == missing
    else:
        assert details(data)["field"] == fieldname


# -- Memory Stores: paths, content, archive, redaction, concurrency, paging ------------------

BAD_PATHS = ["/notes/a.md", "../secrets", "a/../b", "a//b", "a\\b", "", "   ", "a/./b", "notes/",
             ".", "a\x00b"]


@pytest.mark.parametrize("path", BAD_PATHS, ids=[repr(p) for p in BAD_PATHS])
async def test_memory_path_rules_are_400(api, world, path):
    data = await expect_error(api, world, "memory_create", 400, body={"path": path, "content": "c"},
                              mentions=("path",))
    assert details(data)["field"] == "path"


async def test_a_taken_path_is_409(api, world):
    await expect_error(api, world, "memory_create", 409,
                       body={"path": "notes/store.md", "content": "again"}, mentions=("notes/store.md",))


BAD_CONTENT = {"empty": ("", "empty"), "blank": (" \n\t", "empty"),
               "over-100-kb": ("x" * (100 * 1024 + 1), "102400"),
               "over-100-kb-in-utf8": ("记" * 34134, "102400")}


@pytest.mark.parametrize("name", ["memory_create", "memory_update"])
@pytest.mark.parametrize("variant", list(BAD_CONTENT))
async def test_bad_content_is_400(api, world, name, variant):
    """For an update with a stale content_sha256 too: refused content is no conflict to keep."""
    content, mention = BAD_CONTENT[variant]
    body = ({"path": "notes/big.md", "content": content} if name == "memory_create"
            else {"content": content, "content_sha256": "0" * 64})
    data = await expect_error(api, world, name, 400, body=body, mentions=(mention,))
    assert details(data)["field"] == "content"


@pytest.mark.parametrize("name", ["memory_create", "memory_update"])
async def test_content_of_exactly_100_kb_is_accepted(api, world, name):
    status, data = await send(api, world, name, body={"path": "notes/big.md", "content": "x" * 102400})
    assert status == 200 and data["content_size_bytes"] == 102400, data


ARCHIVED = [("memory_create", SM, {"path": "notes/late.md", "content": "late"}),
            ("memory_update", SM + "/{archived_mem}", {"content": "late", "content_sha256": "{archived_sha}"}),
            ("memory_update", SM + "/{archived_mem}", {"content": "late", "content_sha256": "0" * 64}),
            ("memory_delete", SM + "/{archived_mem}", None)]


@pytest.mark.parametrize("name,path,body", ARCHIVED,
                         ids=["create", "update", "update-stale-sha", "delete"])
async def test_archived_store_refuses_writes_with_409(api, world, name, path, body):
    await expect_error(api, world, name, 409, path=path.replace("{store}", "{archived}"),
                       body=DEFAULT if body is None else body, mentions=("{archived}", "archived"))


async def test_archived_store_stays_readable(api, world):
    status, data = await send(api, world, "memory_get", path=SM.replace("{store}", "{archived}")
                              + "/{archived_mem}")
    assert (status, data["content"]) == (200, "archived content")


async def test_redacting_twice_is_409(api, world):
    status, data = await send(api, world, "version_redact")
    assert (status, data["redacted"], data["content"]) == (200, True, None)
    await expect_error(api, world, "version_redact", 409, mentions=("{store_version}", "already redacted"))


async def test_stale_content_sha256_is_409_and_the_loser_is_kept(api, world):
    before = row_counts(api)
    status, data = await send(api, world, "memory_update",
                              body={"content": "loser", "content_sha256": "0" * 64})
    assert status == 409, data
    assert_stores_envelope(data, 409, "")
    assert details(data)["current_sha256"] == world["store_sha"]
    after = row_counts(api)  # one conflict more, and nothing else changed
    assert {k for k in before if before[k] != after[k]} == {"conflicts", "open_conflicts"}
    assert after["conflicts"] == before["conflicts"] + 1
    kept = api.store.conn.execute("select * from conflicts where id = ?",
                                  (details(data)["conflict_id"],)).fetchone()
    assert kept is not None and "loser" in kept["detail"]
    assert (await send(api, world, "memory_get"))[1]["content"] == "store content"


LISTS = ["store_list", "memory_list", "version_list"]
LIMITS = ["0", "101", "-1", "abc", "2.5", "1e2", "%205", "10_0", "%C2%B2"]  # "" is the default


@pytest.mark.parametrize("limit", LIMITS, ids=[f"limit={v}" for v in LIMITS])
@pytest.mark.parametrize("name", LISTS)
async def test_limit_out_of_range_is_422(api, world, name, limit):
    path = ALL[name].path.split("?")[0] + "?limit=" + limit
    data = await expect_error(api, world, name, 422, path=path, mentions=("'limit'",))
    assert details(data)["field"] == "limit"


@pytest.mark.parametrize("name", LISTS)
async def test_limit_bounds_and_cursor_paging_work(api, world, name):
    """Controls: limit 1 and 100 are accepted, and the cursor returned pages on."""
    base = ALL[name].path.split("?")[0]
    assert (await send(api, world, name, path=base + "?limit=100"))[0] == 200
    status, first = await send(api, world, name, path=base + "?limit=1")
    assert status == 200 and len(first["data"]) == 1 and first["has_more"] is (name == "store_list")
    if first["next_cursor"]:
        status, second = await send(api, world, name, path=f"{base}?limit=1&cursor={first['next_cursor']}")
        assert status == 200 and second["data"][0]["id"] != first["data"][0]["id"]


CURSORS = ["gA", "%FF%FE", "not a cursor!", pytest.param("@@@@", id="@@@@")]


@pytest.mark.parametrize("cursor", CURSORS)
@pytest.mark.parametrize("name", LISTS)
async def test_a_cursor_this_api_never_returned_is_400(api, world, name, cursor):
    path = ALL[name].path.split("?")[0] + "?cursor=" + cursor
    data = await expect_error(api, world, name, 400, path=path, mentions=("cursor",))
    assert details(data)["field"] == "cursor"


NOT_FOUND = [
    # (id, endpoint, path, text the message must contain)
    *[(f"{name}-unknown-store", name, ALL[name].path.replace("{store}", "memstore_nope"),
       "memstore_nope") for name in STORES if "{store}" in ALL[name].path],
    *[(f"{name}-unknown-memory", name, SM + "/mem_nope", "mem_nope")
      for name in ("memory_get", "memory_update", "memory_delete")],
    *[(f"{name}-other-stores-memory", name, SM + "/{other_mem}", "{other_mem}")
      for name in ("memory_get", "memory_update", "memory_delete")],
    *[(f"{name}-unknown-version", name, SV + "/mver_nope" + tail, "mver_nope")
      for name, tail in (("version_get", ""), ("version_redact", "/redact"))],
    *[(f"{name}-other-stores-version", name, SV + "/{other_version}" + tail, "{other_version}")
      for name, tail in (("version_get", ""), ("version_redact", "/redact"))],
    ("unknown-store-action", "store_get", S + "/{store}/export", "/{store}/export"),
]


@pytest.mark.parametrize("name,path,mention", [c[1:] for c in NOT_FOUND], ids=[c[0] for c in NOT_FOUND])
async def test_unknown_store_memory_or_version_is_404(api, world, name, path, mention):
    await expect_error(api, world, name, 404, path=path, mentions=(mention,))


@pytest.mark.parametrize("name", ["memory_get", "memory_update", "memory_delete"])
async def test_a_deleted_memory_is_404(api, world, name):
    assert (await send(api, world, "memory_delete"))[0] == 200
    await expect_error(api, world, name, 404, body={"content": "back"}, mentions=("{store_mem}",))


# -- agent-memory1.0: empty messages, isolation, unknown ids, variables ---------------------

EMPTY_MESSAGES = [[{"role": "user", "content": ""}], [{"content": "  \n"}, {"content": ""}], [],
                  [{"role": "user"}], [{"content": 5}], [{"content": None}]]


@pytest.mark.parametrize("messages", EMPTY_MESSAGES, ids=[repr(m)[:30] for m in EMPTY_MESSAGES])
async def test_all_empty_content_is_422_with_the_seed_detail(api, world, messages):
    data = await expect_error(api, world, "add", 422, body={**A, "messages": messages})
    assert data == {"detail": "No valid messages (all content is empty)"}


@pytest.mark.parametrize("scope", ["", "team/a"], ids=["empty", "slash"])
async def test_add_to_an_unusable_scope_id_is_400(api, world, scope):
    await expect_error(api, world, "add", 400, body={**A, "scope_id": scope, "messages": M},
                       mentions=("scope_id",))


@pytest.mark.parametrize("memory", ["", "  \n"], ids=["empty", "blank"])
async def test_update_to_empty_memory_is_400(api, world, memory):
    await expect_error(api, world, "update", 400, body={**A, "mem_id": "{mem1}", "memory": memory},
                       mentions=("memory must not be empty",))


@pytest.mark.parametrize("variables,bad", [
    ({"mood": 1}, "mood"), ({"mood": None}, "mood"), ({"mood": True}, "mood"),
    ({"ok": "fine", "tags": ["a"]}, "tags"), ({"mood": {"v": "x"}}, "mood"),
], ids=["int", "null", "bool", "one-of-two-a-list", "object"])
async def test_variable_values_must_be_strings(api, world, variables, bad):
    await expect_error(api, world, "set_vars", (400, 422), body={**A, "variables": variables},
                       mentions=(bad, "string"))


OTHERS = {"other-user": {"user_id": "bob", "scope_id": "edp_agent"},
          "other-scope": {"user_id": "alice", "scope_id": "other_agent"},
          "default-scope": {"user_id": "alice"}, "no-ids": {}}


@pytest.mark.parametrize("name", ["update", "delete"])
@pytest.mark.parametrize("who", list(OTHERS))
async def test_another_user_or_scope_cannot_change_the_memory(api, world, who, name):
    body = {**fill(ALL[name].body, world), "user_id": None, "scope_id": None, **OTHERS[who]}
    await expect_error(api, world, name, 404, body=body, mentions=("{mem1}",))


@pytest.mark.parametrize("who", list(OTHERS))
async def test_another_user_or_scope_cannot_batch_delete_the_memory(api, world, who):
    before = snapshot(api, world)
    status, data = await send(api, world, "batch", body={"mem_ids": ["{mem1}"], **OTHERS[who]})
    assert (status, data["deleted"], data["failed"]) == (200, 0, 1), data
    assert world["mem1"] in data["errors"][0]["error"]
    assert_unchanged(before, snapshot(api, world))


@pytest.mark.parametrize("name,key,empty", [
    ("search", "results", []), ("summary", "results", []), ("page", "results", []),
    ("page_total", "total", 0), ("get_vars", "variables", {"mood": None}),
    ("del_vars", "deleted_count", 0),
])
@pytest.mark.parametrize("who", list(OTHERS))
async def test_another_user_or_scope_reads_nothing_of_alice(api, world, who, name, key, empty):
    before = snapshot(api, world)
    body = {**fill(ALL[name].body, world), "user_id": None, "scope_id": None, **OTHERS[who]}
    status, data = await send(api, world, name, body=body)
    assert (status, data[key]) == (200, empty), data
    assert_unchanged(before, snapshot(api, world))
    status, own = await send(api, world, name)  # control: alice herself gets something
    assert status == 200 and own[key] != empty, own


@pytest.mark.parametrize("who", ["other-user", "other-scope"])
async def test_another_user_or_scope_cannot_trace_alices_message(api, world, who):
    status, data = await send(api, world, "message", body={"message_id": "{message}", **OTHERS[who]})
    assert (status, data) == (200, {"found": False, "message_id": world["message"]})


@pytest.mark.parametrize("message_id", ["msg_nope", "", "{mem1}"])
async def test_unknown_message_id_is_found_false(api, world, message_id):
    before = snapshot(api, world)
    status, data = await send(api, world, "message", body={"message_id": message_id})
    assert (status, data) == (200, {"found": False, "message_id": fill(message_id, world)})
    assert_unchanged(before, snapshot(api, world))


@pytest.mark.parametrize("name", ["update", "delete"])
async def test_unknown_mem_id_is_404(api, world, name):
    await expect_error(api, world, name, 404, body={**fill(ALL[name].body, world), "mem_id": "mem_nope"},
                       mentions=("mem_nope",))


async def test_a_deleted_memory_cannot_be_updated(api, world):
    assert (await send(api, world, "delete"))[0] == 200
    await expect_error(api, world, "update", 404, mentions=("{mem1}",))


# -- the cross-dialect search ------------------------------------------------------------------

SEARCH_REFUSED = [
    # (id, caller, query, status, text in the message)
    ("no-q", DEFAULT, "", 400, "'q'"), ("empty-q", DEFAULT, "?q=", 400, "'q'"),
    ("blank-q", DEFAULT, "?q=%20%20", 400, "'q'"),
    ("limit-0", DEFAULT, "?q=x&limit=0", 422, "'limit'"),
    ("limit-51", DEFAULT, "?q=x&limit=51", 422, "'limit'"),
    ("limit-abc", DEFAULT, "?q=x&limit=abc", 422, "'limit'"),
    ("foreign-workspace", DEFAULT, "?q=x&namespace={foreign_workspace}", 403, "{foreign_workspace}"),
    ("foreign-reads-our-workspace", "{foreign_key}", "?q=x&namespace={workspace}", 403, "{workspace}"),
    ("one-refused-of-two", DEFAULT, "?q=x&namespace={store}&namespace={foreign_workspace}", 403,
     "{foreign_workspace}"),
]


@pytest.mark.parametrize("key,query,status,mention", [c[1:] for c in SEARCH_REFUSED],
                         ids=[c[0] for c in SEARCH_REFUSED])
async def test_search_refusals(api, world, key, query, status, mention):
    await expect_error(api, world, "search_all", status, path="/api/agent/search" + query,
                       key=key if key is DEFAULT else fill(key, world), mentions=(mention,))


# -- MCP over HTTP: sessions and JSON-RPC errors -----------------------------------------------

def mcp(name: str, session: str | None) -> Ep:
    """MCP[name] with the Mcp-Session-Id header `session` (None: without the header)."""
    return dataclasses.replace(MCP[name], headers={"Mcp-Session-Id": session} if session else {})


@pytest.mark.parametrize("name,session,key,status,mention", [
    ("mcp_post", None, DEFAULT, 400, "Missing session ID"),
    ("mcp_post", "deadbeef", DEFAULT, 404, "Session not found"),
    ("mcp_post", "{session}", "{other_key}", 404, "Session not found"),
    ("mcp_post", "{session}", "{read_key}", 404, "Session not found"),
    ("mcp_delete", None, DEFAULT, 400, "Missing session ID"),
    ("mcp_delete", "deadbeef", DEFAULT, 404, "Session not found"),
    ("mcp_delete", "{session}", "{other_key}", 404, "Session not found"),
], ids=["post-no-session", "post-unknown-session", "post-other-keys-session",
        "post-read-keys-session", "delete-no-session", "delete-unknown-session",
        "delete-other-keys-session"])
async def test_mcp_session_refusals(api, world, name, session, key, status, mention):
    sessions = mcp_sessions(api)
    got, data = await helpers.send(api, world, mcp(name, session),
                                   key=key if key is DEFAULT else fill(key, world))
    assert got == status and data["error"]["code"] == -32600 and mention in data["error"]["message"], data
    assert mcp_sessions(api) == sessions  # in particular, the session is still open
    assert (await send(api, world, "mcp_post"))[0] == 200


async def test_a_closed_mcp_session_is_404(api, world):
    assert (await send(api, world, "mcp_delete"))[0] == 200
    assert world["session"] not in mcp_sessions(api)  # the daemon's state for it is gone too
    for name in ("mcp_post", "mcp_delete"):
        status, data = await send(api, world, name)
        assert status == 404 and "Session not found" in data["error"]["message"], data


RPC_ERRORS = [
    # (id, raw body, HTTP status, JSON-RPC code)
    ("truncated-json", b'{"jsonrpc": "2.0", ', 400, -32700),
    ("trailing-comma", b'{"jsonrpc": "2.0", "id": 1, "method": "ping",}', 400, -32700),
    ("not-utf8", b'{"jsonrpc": "2.0", "id": 1, "method": "\xff"}', 400, -32700),
    ("deeply-nested", b"[" * 100_000 + b"]" * 100_000, 400, -32700),
    # Streamable HTTP: input the server cannot accept is an HTTP error, its JSON-RPC error
    # without an id.
    ("no-jsonrpc", b'{"id": 1, "method": "ping"}', 400, -32600),
    ("jsonrpc-1.0", b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}', 400, -32600),
    ("no-method", b'{"jsonrpc": "2.0", "id": 1}', 400, -32600),
    ("a-string", b'"ping"', 400, -32600),
    ("null", b"null", 400, -32600),
    ("unknown-method", b'{"jsonrpc": "2.0", "id": 1, "method": "memories/drop"}', 200, -32601),
    pytest.param(b"[]", 400, -32600, id="empty-batch"),
]


@pytest.mark.parametrize("raw,status,code", [c if hasattr(c, "marks") else pytest.param(*c[1:], id=c[0])
                                             for c in RPC_ERRORS])
async def test_mcp_json_rpc_errors(api, world, raw, status, code):
    before, sessions = snapshot(api, world), mcp_sessions(api)
    got, data = await helpers.send(api, world, MCP["mcp_post"], raw=raw,
                                   headers={"Content-Type": "application/json"})
    assert got == status, data
    assert set(data) == {"jsonrpc", "id", "error"} and data["jsonrpc"] == "2.0", data
    assert data["error"]["code"] == code and data["error"]["message"].strip()
    assert data["id"] == (1 if code == -32601 else None)
    if code == -32601:
        assert data["error"]["data"] == "memories/drop"
    assert_unchanged(before, snapshot(api, world))
    assert mcp_sessions(api) == sessions


async def test_mcp_notification_gets_202_without_a_body(api, world):
    status, data = await send(api, world, "mcp_post",
                              body={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (status, data) == (202, None)


async def test_mcp_get_is_405_allowing_post_and_delete(api, world):
    response = await api.client.get("/mcp", headers={**api.auth(), "Mcp-Session-Id": world["session"]})
    assert response.status == 405 and response.headers["Allow"] == "POST, DELETE"


@pytest.mark.parametrize("key,headers,status", [
    (None, {}, 401), ("{revoked_key}", {}, 401), ("{write_key}", {}, 403),
    (DEFAULT, {"Host": "evil.example"}, 403), (DEFAULT, {"Origin": "https://evil.example"}, 403),
], ids=["no-key", "revoked-key", "write-only-key", "foreign-host", "foreign-origin"])
async def test_a_refused_initialize_opens_no_session(api, world, key, headers, status):
    sessions = mcp_sessions(api)
    got, data = await helpers.send(api, world, mcp("mcp_post", None), body=INIT, headers=headers,
                                   key=key if key is DEFAULT else fill(key, world))
    assert got == status, data
    assert_envelope(data, status, "/mcp")
    assert mcp_sessions(api) == sessions
