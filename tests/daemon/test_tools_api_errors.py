"""Bad input on the agent-tool endpoints: suite installation and installed open memories,
persona distillation jobs and a suite's vector collection (daemon/api/suites.py), the method
registry and collaboration claims (daemon/api/amp_methods.py): status, amp.error.v1 envelope,
and nothing stored (helpers.py; its row counts include installed open memories, claims with
their expiry and release, and distill jobs with their progress).

Same scheme as test_api_errors.py: every endpoint is declared once (TOOLS) with a request
that succeeds in the world below, and each error test sends a variation of it. The upload
takes a multipart form as its body (``send`` below sends UPLOAD_FORM unless told otherwise).
A distill job runs in a background task: the world waits for its own job, and every test
that starts one waits for it before comparing the store.
"""

from __future__ import annotations

from typing import Any

import pytest

from daemon import keys
from tests.daemon import helpers
from tests.daemon.helpers import (
    AUTH_VARIANTS,
    DEFAULT,
    GUARD,
    MALFORMED,
    OVER_ONE_MIB,
    READ,
    WRITE,
    Ep,
    assert_unchanged,
    base_world,
    fill,
    row_counts,
    snapshot,
    world_fixtures,
)
from tests.daemon.test_updates_and_sync import publish

CATALOG, SKILL = "catalog:read", "skill:install"
BOUNDARY = "tools-form-boundary"
MULTIPART = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}


def form(*parts: tuple[str, str | None, bytes]) -> bytes:
    """A multipart/form-data body of (field name, file name or None, content) parts."""
    out = b""
    for name, filename, content in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode()
        out += content + b"\r\n"
    return out + f"--{BOUNDARY}--\r\n".encode()


UPLOAD_FORM = form(("file", "grading.md", b"Grading: rubric first, then comments."))
SUITE_MARKDOWN = "# Ops\n\n- Rollbacks use the blue-green switch\n- Deploys wait for review\n"

TOOLS = {
    "install": Ep("POST", "/api/agent/open-memories/install", {"slug": "{slug}"}, SKILL),
    "installed": Ep("GET", "/api/agent/installed-open-memories/{installed}", scope=READ),
    "distill": Ep(
        "POST",
        "/api/memories/{slug}/persona-distill",
        {"documents": [{"text": "Office hours are on Thursdays."}]},
        WRITE,
    ),
    "upload": Ep("POST", "/api/memories/{slug}/persona-distill/upload", {}, WRITE),  # UPLOAD_FORM
    "jobs": Ep("GET", "/api/memories/{slug}/distill-jobs", scope=READ),
    "job": Ep("GET", "/api/distill-jobs/{job}", scope=READ),
    "search": Ep("GET", "/api/catalog/{slug}/search?q=thursdays", scope=CATALOG),
    "methods": Ep("GET", "/api/agent/methods"),
    "methods_query": Ep("POST", "/api/agent/methods/query", {"message": "install a memory suite"}),
    "claim": Ep("POST", "/api/agent/claims", {"resource": "service:billing"}, WRITE),
    "release": Ep("POST", "/api/agent/claims/{claim}/release", {}, WRITE),
    "claims": Ep("GET", "/api/agent/claims?resource=branch:main", scope=READ),
}
POSTS = [name for name, ep in TOOLS.items() if ep.method == "POST"]
JSON_POSTS = [name for name in POSTS if name != "upload"]
STARTS_A_JOB = ("distill", "upload")


def _parts(name: str, parts: dict[str, Any]) -> dict[str, Any]:
    if name == "upload" and parts.get("raw") is None and parts.get("body", DEFAULT) is DEFAULT:
        parts = {**parts, "raw": UPLOAD_FORM, "headers": {**MULTIPART, **(parts.get("headers") or {})}}
    return parts


async def send(api, world, name: str, **parts: Any) -> tuple[int, Any]:
    return await helpers.send(api, world, TOOLS[name], **_parts(name, parts))


async def expect_error(api, world, name: str, status: int | tuple[int, ...], **parts) -> dict:
    return await helpers.expect_error(api, world, TOOLS[name], status, **_parts(name, parts))


async def drain(api) -> None:
    await api.client.app[keys.SERVICES].distill.drain()


async def expect_typed_error(
    api, world, name: str, status: int, error_type: str, *, mentions: tuple[str, ...] = (), **parts
) -> dict:
    """expect_error for the statuses whose envelope has its own type (claim_held,
    sync_interrupted): status, envelope, message and that nothing changed."""
    before = snapshot(api, world)
    got, data = await send(api, world, name, **parts)
    await drain(api)
    assert got == status, data
    error = data["error"]
    assert data["schema"] in ("amp.error.v1", "amp.sync-interrupt.v1")
    assert (error["status"], error["type"]) == (status, error_type)
    assert error["id"].startswith("err_") and error["message"].strip()
    assert error["path"] == fill(parts.get("path") or TOOLS[name].path, world).split("?")[0]
    for word in mentions:
        assert fill(word, world) in error["message"], error["message"]
    assert_unchanged(before, snapshot(api, world))
    return data


async def build_world(api) -> dict[str, str]:
    """The base world plus: our suite {slug} (with MEMORY.md facts), installed in our workspace
    as {installed}; a finished distill job {job} on it; our claim {claim} on branch:main and
    other-agent's {other_claim} on branch:other (same workspace); the foreign agent's own
    installation {foreign_installed} and claim {foreign_claim}; keys with only catalog:read
    ({catalog_key}) and only skill:install ({skill_key})."""
    world = await base_world(api)
    suite = await api.post(
        "/api/memories",
        {
            "title": "Tools Suite",
            "summary": "the tools' suite",
            "license": "MIT",
            "long_term_markdown": SUITE_MARKDOWN,
        },
    )
    slug = suite["slug"]
    installed = await api.post("/api/agent/open-memories/install", {"slug": slug})
    job = await api.post(
        f"/api/memories/{slug}/persona-distill",
        {"documents": [{"text": "Office hours are on Thursdays.", "source_path": "notes/schedule.md"}]},
    )
    await drain(api)
    assert (await api.get(f"/api/distill-jobs/{job['job_id']}"))["status"] == "done"
    claim = await api.post("/api/agent/claims", {"resource": "branch:main", "purpose": "release"})
    other_claim = await api.post("/api/agent/claims", {"resource": "branch:other"}, key=world["other_key"])
    foreign_installed = await api.post(
        "/api/agent/open-memories/install", {"slug": slug}, key=world["foreign_key"]
    )
    foreign_claim = await api.post("/api/agent/claims", {"resource": "branch:main"}, key=world["foreign_key"])
    return world | {
        "slug": slug,
        "installed": installed["installed_memory_id"],
        "job": job["job_id"],
        "claim": claim["claim_id"],
        "other_claim": other_claim["claim_id"],
        "foreign_installed": foreign_installed["installed_memory_id"],
        "foreign_claim": foreign_claim["claim_id"],
        "catalog_key": api.new_agent("cataloger", scopes=[CATALOG]),
        "skill_key": api.new_agent("installer", scopes=[SKILL]),
    }


built_world, api, world = world_fixtures(build_world)
# -- the baseline: the declared requests succeed -------------------------------------------


@pytest.mark.parametrize("name", list(TOOLS))
async def test_declared_request_succeeds(api, world, name):
    status, data = await send(api, world, name)
    assert status == 200, data
    if name in STARTS_A_JOB:
        await drain(api)
        done = await api.get(f"/api/distill-jobs/{data['job_id']}")
        assert done["status"] == "done" and done["progress"]["done_chunks"] == 1
    if name == "search":
        assert [i["metadata"]["source_path"] for i in data["items"]] == ["notes/schedule.md"]
    if name == "claims":
        assert [c["claim_id"] for c in data["claims"]] == [world["claim"]]
    if name == "installed":
        assert data["memory_count"] == 2 and data["workspace_id"] == world["workspace"]


async def test_a_second_release_changes_nothing(api, world):
    """Control for the row counts: a released claim stays released at its first time."""
    status, first = await send(api, world, "release")
    assert status == 200 and first["released_at"]
    rows = row_counts(api)
    status, again = await send(api, world, "release")
    assert (status, again["released_at"]) == (200, first["released_at"])
    assert row_counts(api) == rows


# -- authentication, authorization and the Host/Origin guard --------------------------------

# The method registry is public, as the reference's is: no key, or a bad one, is no 401.
PUBLIC = ("methods", "methods_query")


@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", [name for name in TOOLS if name not in PUBLIC])
async def test_missing_or_invalid_key_is_401(api, world, name, variant):
    key = fill(AUTH_VARIANTS[variant], world)
    await expect_error(api, world, name, 401, key=key, mentions=("API key",))


@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", PUBLIC)
async def test_public_endpoints_need_no_key(api, world, name, variant):
    rows = row_counts(api)
    status, data = await send(api, world, name, key=fill(AUTH_VARIANTS[variant], world))
    assert status == 200, data
    assert row_counts(api) == rows


PARTIAL_KEYS = {READ: "{read_key}", WRITE: "{write_key}", CATALOG: "{catalog_key}", SKILL: "{skill_key}"}
SCOPE_CASES = [
    pytest.param(name, key, id=f"{name}-{scope}-only")
    for name, ep in TOOLS.items()
    if ep.scope
    for scope, key in PARTIAL_KEYS.items()
    if scope != ep.scope
]


@pytest.mark.parametrize("name,key", SCOPE_CASES)
async def test_missing_scope_is_403(api, world, name, key):
    scope = TOOLS[name].scope
    data = await expect_error(api, world, name, 403, key=fill(key, world), mentions=(scope,))
    assert data["detail"]["required_scope"] == scope


ALONE_CASES = [pytest.param(name, PARTIAL_KEYS[ep.scope], id=name) for name, ep in TOOLS.items() if ep.scope]
ALONE_CASES += [
    pytest.param(name, key, id=f"{name}-{scope}-only")
    for name, ep in TOOLS.items()
    if not ep.scope
    for scope, key in PARTIAL_KEYS.items()
]


@pytest.mark.parametrize("name,key", ALONE_CASES)
async def test_the_scope_alone_is_enough(api, world, name, key):
    """Control for the test above: a key with only the endpoint's scope gets through (the
    method registry takes any key). Only the holder releases a claim: the key's own."""
    key, path = fill(key, world), None
    if name == "release":
        own = await api.post("/api/agent/claims", {"resource": "branch:writer"}, key=key)
        path = f"/api/agent/claims/{own['claim_id']}/release"
    status, data = await send(api, world, name, key=key, path=path)
    await drain(api)
    assert status == 200, data


@pytest.mark.parametrize("variant", list(GUARD))
@pytest.mark.parametrize("name", list(TOOLS))
async def test_foreign_host_or_origin_is_403(api, world, name, variant):
    headers, mention = GUARD[variant]
    await expect_error(api, world, name, 403, headers=headers, mentions=(mention,))


@pytest.mark.parametrize(
    "method,name",
    [
        ("GET", "install"),
        ("DELETE", "installed"),
        ("POST", "installed"),
        ("GET", "distill"),
        ("PUT", "distill"),
        ("GET", "upload"),
        ("POST", "jobs"),
        ("DELETE", "job"),
        ("POST", "search"),
        ("POST", "methods"),
        ("GET", "methods_query"),
        ("DELETE", "claims"),
        ("PUT", "claim"),
        ("GET", "release"),
        ("DELETE", "release"),
    ],
)
async def test_wrong_method_is_405(api, world, method, name):
    await expect_error(api, world, name, 405, method=method, mentions=(method,))


# -- malformed and oversized bodies ----------------------------------------------------------


@pytest.mark.parametrize("variant", list(MALFORMED))
@pytest.mark.parametrize("name", JSON_POSTS)
async def test_malformed_body_is_400(api, world, name, variant):
    raw, mention = MALFORMED[variant]
    await expect_error(
        api, world, name, 400, raw=raw, headers={"Content-Type": "application/json"}, mentions=(mention,)
    )


@pytest.mark.parametrize("name", JSON_POSTS)
async def test_body_over_one_mib_is_413(api, world, name):
    await expect_error(api, world, name, 413, raw=OVER_ONE_MIB, mentions=("1048576",))


@pytest.mark.parametrize(
    "parts",
    [
        pytest.param([("file", "big.md", b"x" * ((1 << 20) + 1))], id="one-file-over"),
        pytest.param(
            [("file", "a.md", b"x" * (600 << 10)), ("file", "b.md", b"y" * (600 << 10))],
            id="two-files-together-over",
        ),
    ],
)
async def test_upload_over_one_mib_is_413(api, world, parts):
    try:
        await expect_error(
            api, world, "upload", 413, raw=form(*parts), headers=MULTIPART, mentions=("1048576",)
        )
    finally:
        await drain(api)


@pytest.mark.parametrize(
    "name,body",
    [
        ("install", {"slug": "\ud800 broken"}),
        ("distill", {"documents": [{"text": "\ud800 broken"}]}),
        ("methods_query", {"message": "\ud800 broken"}),
        ("claim", {"resource": "\ud800 broken"}),
    ],
    ids=["install-slug", "distill-text", "methods-query-message", "claim-resource"],
)
async def test_lone_surrogate_is_400(api, world, name, body):
    await expect_error(api, world, name, 400, body=body, mentions=("Unicode",))


UPLOAD_NOT_A_FORM = [
    # (id, raw body, content type, text in the message)
    ("json-body", b'{"documents": [{"text": "t"}]}', "application/json", "multipart/form-data"),
    ("plain-text", b"just text", "text/plain", "multipart/form-data"),
    ("empty-body", b"", "application/octet-stream", "multipart/form-data"),
    ("no-file-part", form(("chunk_chars", None, b"500")), MULTIPART["Content-Type"], "'file'"),
    ("wrong-part-name", form(("files", "a.md", b"text")), MULTIPART["Content-Type"], "'file'"),
    ("empty-form", f"--{BOUNDARY}--\r\n".encode(), MULTIPART["Content-Type"], "'file'"),
    ("without-boundary", b"x" * 10, "multipart/form-data", "multipart"),
    ("truncated", f"--{BOUNDARY}\r\nbroken".encode(), MULTIPART["Content-Type"], "multipart"),
]


@pytest.mark.parametrize(
    "raw,content_type,mention", [c[1:] for c in UPLOAD_NOT_A_FORM], ids=[c[0] for c in UPLOAD_NOT_A_FORM]
)
async def test_upload_without_a_usable_form_is_400(api, world, raw, content_type, mention):
    await expect_error(
        api, world, "upload", 400, raw=raw, headers={"Content-Type": content_type}, mentions=(mention,)
    )
    await drain(api)


# -- field validation (422) -----------------------------------------------------------------

D = [{"text": "a document"}]
INVALID = [
    # (endpoint, body, offending field, missing_fields or None)
    ("install", {}, "slug", ["slug"]),
    ("install", {"slug": None}, "slug", ["slug"]),
    ("install", {"slug": ""}, "slug", None),
    ("install", {"slug": "   "}, "slug", None),
    ("install", {"slug": 5}, "slug", None),
    ("install", {"slug": ["{slug}"]}, "slug", None),
    ("install", {"slug": "s" * 65}, "slug", None),
    ("install", {"slug": "{slug}", "version": 1}, "version", None),
    ("install", {"slug": "{slug}", "version": "1." * 21}, "version", None),
    ("install", {"slug": "{slug}", "workspace_id": 7}, "workspace_id", None),
    ("install", {"slug": "{slug}", "workspace_id": "w" * 81}, "workspace_id", None),
    ("install", {"slug": "{slug}", "project_key": {"key": "ops"}}, "project_key", None),
    ("install", {"slug": "{slug}", "project_key": "p" * 161}, "project_key", None),
    ("distill", {}, "documents", ["documents"]),
    ("distill", {"documents": None}, "documents", ["documents"]),
    ("distill", {"documents": "text"}, "documents", None),
    ("distill", {"documents": {"text": "t"}}, "documents", None),
    ("distill", {"documents": ["text"]}, "documents", None),
    ("distill", {"documents": [True]}, "documents", None),
    ("distill", {"documents": D * 501}, "documents", None),
    ("distill", {"documents": D, "chunk_chars": 99}, "chunk_chars", None),
    ("distill", {"documents": D, "chunk_chars": 8001}, "chunk_chars", None),
    ("distill", {"documents": D, "chunk_chars": "800"}, "chunk_chars", None),
    ("distill", {"documents": D, "chunk_chars": 800.5}, "chunk_chars", None),
    ("distill", {"documents": D, "importance": 0}, "importance", None),
    ("distill", {"documents": D, "importance": 6}, "importance", None),
    ("distill", {"documents": D, "importance": True}, "importance", None),
    ("distill", {"documents": D, "importance": "5"}, "importance", None),
    ("distill", {"documents": [{}]}, "documents[0].text", None),
    ("distill", {"documents": [{"source_path": "a.md"}]}, "documents[0].text", None),
    ("distill", {"documents": [{"text": ""}]}, "documents[0].text", None),
    ("distill", {"documents": [{"text": " \n\n \t"}]}, "documents[0].text", None),
    ("distill", {"documents": [{"text": 5}]}, "documents[0].text", None),
    ("distill", {"documents": [{"text": ["t"]}]}, "documents[0].text", None),
    ("distill", {"documents": [{"text": "ok"}, {"text": "  "}]}, "documents[1].text", None),
    # The reference's names (user_message, max_results) and our earlier ones (message, limit)
    # are one field each; an empty message and task is a 200 with no results, not an error.
    ("methods_query", {"message": 5}, "user_message", None),
    ("methods_query", {"user_message": 5}, "user_message", None),
    ("methods_query", {"message": "m" * 4001}, "user_message", None),
    ("methods_query", {"message": "a", "user_message": "b"}, "user_message", None),
    ("methods_query", {"task": ["t"]}, "task", None),
    ("methods_query", {"task": "t" * 1001}, "task", None),
    ("methods_query", {"message": "m", "runtime": 5}, "runtime", None),
    ("methods_query", {"message": "m", "runtime": "r" * 81}, "runtime", None),
    ("methods_query", {"message": "m", "runtime": ["codex"]}, "runtime", None),
    ("methods_query", {"message": "m", "limit": 0}, "max_results", None),
    ("methods_query", {"message": "m", "limit": 9}, "max_results", None),
    ("methods_query", {"message": "m", "max_results": 9}, "max_results", None),
    ("methods_query", {"message": "m", "limit": "3"}, "max_results", None),
    ("methods_query", {"message": "m", "limit": True}, "max_results", None),
    ("methods_query", {"message": "m", "limit": 2.5}, "max_results", None),
    ("methods_query", {"message": "m", "installed_skills": "x"}, "installed_skills", None),
    ("claim", {}, "resource", ["resource"]),
    ("claim", {"resource": None}, "resource", ["resource"]),
    ("claim", {"resource": ""}, "resource", None),
    ("claim", {"resource": "  \t"}, "resource", None),
    ("claim", {"resource": 5}, "resource", None),
    ("claim", {"resource": ["branch:main"]}, "resource", None),
    ("claim", {"resource": "r" * 501}, "resource", None),
    ("claim", {"resource": "r", "ttl_seconds": 9}, "ttl_seconds", None),
    ("claim", {"resource": "r", "ttl_seconds": 86_401}, "ttl_seconds", None),
    ("claim", {"resource": "r", "ttl_seconds": -60}, "ttl_seconds", None),
    ("claim", {"resource": "r", "ttl_seconds": "600"}, "ttl_seconds", None),
    ("claim", {"resource": "r", "ttl_seconds": 60.5}, "ttl_seconds", None),
    ("claim", {"resource": "r", "ttl_seconds": True}, "ttl_seconds", None),
    ("claim", {"resource": "r", "purpose": 5}, "purpose", None),
    ("claim", {"resource": "r", "purpose": "p" * 501}, "purpose", None),
    ("claim", {"resource": "r", "workspace_id": 5}, "workspace_id", None),
    ("claim", {"resource": "r", "workspace_id": "w" * 81}, "workspace_id", None),
    # Documents the JSON schema lets through but the handler cannot use.
    pytest.param("distill", {"documents": []}, "documents", None, id="distill-documents=[]"),
    pytest.param(
        "distill",
        {"documents": [{"text": "t", "retrieval_triggers": 5}]},
        "documents[0].retrieval_triggers",
        None,
        id="distill-documents[0].retrieval_triggers=5",
    ),
]


def _invalid_id(case: Any) -> str:
    name, body, fieldname, _ = case
    value = repr(body.get(fieldname))[:12] if fieldname in body else "missing"
    return f"{name}-{fieldname}={value}"


@pytest.mark.parametrize(
    "name,body,fieldname,missing",
    [case if hasattr(case, "marks") else pytest.param(*case, id=_invalid_id(case)) for case in INVALID],
)
async def test_invalid_field_is_422(api, world, name, body, fieldname, missing):
    try:
        data = await expect_error(api, world, name, 422, body=body, mentions=(fieldname,))
    finally:
        await drain(api)  # a wrongly accepted distill must not outlive the test
    if missing:
        assert data["detail"]["missing_fields"] == missing
    else:
        assert data["detail"]["field"] == fieldname


UPLOAD_INVALID = [
    # (id, form parts, text in the message)
    ("file-not-utf8", [("file", "latin1.md", "Grüße".encode("latin-1"))], "UTF-8"),
    ("empty-file", [("file", "empty.md", b"")], "documents[0].text"),
    ("blank-file", [("file", "blank.md", b" \n\n ")], "documents[0].text"),
    ("second-file-blank", [("file", "a.md", b"text"), ("file", "b.md", b"  ")], "documents[1].text"),
    ("importance-not-a-number", [("file", "a.md", b"text"), ("importance", None, b"high")], "importance"),
    ("importance-decimal", [("file", "a.md", b"text"), ("importance", None, b"4.5")], "importance"),
    ("chunk-chars-not-a-number", [("file", "a.md", b"text"), ("chunk_chars", None, b"x")], "chunk_chars"),
    pytest.param(
        [("file", "a.md", b"text"), ("importance", None, b"9")], "importance", id="importance-out-of-range"
    ),
]


@pytest.mark.parametrize(
    "parts,mention", [c if hasattr(c, "marks") else pytest.param(*c[1:], id=c[0]) for c in UPLOAD_INVALID]
)
async def test_upload_with_invalid_content_is_422(api, world, parts, mention):
    try:
        await expect_error(
            api, world, "upload", 422, raw=form(*parts), headers=MULTIPART, mentions=(mention,)
        )
    finally:
        await drain(api)


# -- query parameters -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    ["", "?q=", "?q=%20%20", "?query=thursdays"],
    ids=["no-q", "empty-q", "blank-q", "other-parameter"],
)
async def test_search_without_a_query_is_400(api, world, query):
    await expect_error(
        api, world, "search", 400, path="/api/catalog/{slug}/search" + query, mentions=("'q'",)
    )


# -- unknown ids, suites, versions and workspaces ---------------------------------------------

NOT_FOUND = [
    # (id, endpoint, path or None, body or None, text the message must contain)
    ("installed-unknown", "installed", "/api/agent/installed-open-memories/imem_nope", None, "imem_nope"),
    ("install-unknown-slug", "install", None, {"slug": "no-such-suite"}, "no-such-suite"),
    ("install-unknown-version", "install", None, {"slug": "{slug}", "version": "9.9.9"}, "9.9.9"),
    (
        "install-unknown-workspace",
        "install",
        None,
        {"slug": "{slug}", "workspace_id": "wsp_nope"},
        "wsp_nope",
    ),
    ("distill-unknown-slug", "distill", "/api/memories/no-such-suite/persona-distill", None, "no-such-suite"),
    (
        "upload-unknown-slug",
        "upload",
        "/api/memories/no-such-suite/persona-distill/upload",
        None,
        "no-such-suite",
    ),
    ("jobs-unknown-slug", "jobs", "/api/memories/no-such-suite/distill-jobs", None, "no-such-suite"),
    ("job-unknown", "job", "/api/distill-jobs/djob_nope", None, "djob_nope"),
    ("search-unknown-slug", "search", "/api/catalog/no-such-suite/search?q=x", None, "no-such-suite"),
    ("release-unknown", "release", "/api/agent/claims/claim_nope/release", None, "claim_nope"),
    ("claim-unknown-workspace", "claim", None, {"resource": "r", "workspace_id": "wsp_nope"}, "wsp_nope"),
    ("claims-unknown-workspace", "claims", "/api/agent/claims?workspace_id=wsp_nope", None, "wsp_nope"),
    (
        "unknown-claim-action",
        "release",
        "/api/agent/claims/{claim}/renew",
        None,
        "/api/agent/claims/{claim}/renew",
    ),
    ("unknown-job-action", "job", "/api/distill-jobs/{job}/cancel", None, "/api/distill-jobs/{job}/cancel"),
    (
        "unknown-method",
        "methods",
        "/api/agent/methods/start_session",
        None,
        "/api/agent/methods/start_session",
    ),
]


@pytest.mark.parametrize("name,path,body,mention", [c[1:] for c in NOT_FOUND], ids=[c[0] for c in NOT_FOUND])
async def test_unknown_id_is_404(api, world, name, path, body, mention):
    await expect_error(
        api, world, name, 404, path=path, body=DEFAULT if body is None else body, mentions=(mention,)
    )
    await drain(api)


async def test_distill_of_an_unknown_suite_keeps_no_intent_even_when_gated(api, world):
    """The 404 comes before the sync gate: no sync intent for a suite that does not exist."""
    await publish(api)
    await expect_error(
        api,
        world,
        "distill",
        404,
        path="/api/memories/no-such-suite/persona-distill",
        body={"documents": D, "importance": 5},
        mentions=("no-such-suite",),
    )


async def test_invalid_distill_is_refused_not_held_back_when_gated(api, world):
    """An invalid write is refused (422), never kept in a sync intent to fail at resume."""
    await publish(api)
    await expect_error(
        api,
        world,
        "distill",
        422,
        body={"documents": [{"text": " "}], "importance": 5},
        mentions=("documents[0].text",),
    )


async def test_gated_upload_is_refused_and_nothing_is_kept(api, world):
    """An important upload with a required update pending: 409, no sync intent, no job."""
    await publish(api)
    data = await expect_typed_error(
        api,
        world,
        "upload",
        409,
        "sync_interrupted",
        raw=form(("file", "a.md", b"text"), ("importance", None, b"5")),
        headers=MULTIPART,
        mentions=("upload the files again",),
    )
    assert data["sync_intent_id"] is None and data["endpoint"] == "persona_distill_job_json"


# -- other callers' resources -----------------------------------------------------------------

O, F, ME = "{other_key}", "{foreign_key}", DEFAULT  # same-workspace agent, foreign workspace, us
CLAIMS = "/api/agent/claims"
CROSS = [
    # (id, endpoint, caller, path or None, body or None, status, text in the message)
    ("foreign-reads-our-installation", "installed", F, None, None, 404, "{installed}"),
    (
        "we-read-foreign-installation",
        "installed",
        ME,
        "/api/agent/installed-open-memories/{foreign_installed}",
        None,
        404,
        "{foreign_installed}",
    ),
    (
        "foreign-installs-into-our-workspace",
        "install",
        F,
        None,
        {"slug": "{slug}", "workspace_id": "{workspace}"},
        403,
        "{workspace}",
    ),
    (
        "we-install-into-foreign-workspace",
        "install",
        ME,
        None,
        {"slug": "{slug}", "workspace_id": "{foreign_workspace}"},
        403,
        "{foreign_workspace}",
    ),
    ("foreign-releases-our-claim", "release", F, None, None, 404, "{claim}"),
    (
        "we-release-foreign-claim",
        "release",
        ME,
        CLAIMS + "/{foreign_claim}/release",
        None,
        404,
        "{foreign_claim}",
    ),
    ("other-releases-our-claim", "release", O, None, None, 409, "test-agent"),
    ("we-release-others-claim", "release", ME, CLAIMS + "/{other_claim}/release", None, 409, "other-agent"),
    (
        "foreign-claims-in-our-workspace",
        "claim",
        F,
        None,
        {"resource": "r", "workspace_id": "{workspace}"},
        403,
        "{workspace}",
    ),
    (
        "we-claim-in-foreign-workspace",
        "claim",
        ME,
        None,
        {"resource": "r", "workspace_id": "{foreign_workspace}"},
        403,
        "{foreign_workspace}",
    ),
    ("foreign-lists-our-claims", "claims", F, CLAIMS + "?workspace_id={workspace}", None, 403, "{workspace}"),
    (
        "we-list-foreign-claims",
        "claims",
        ME,
        CLAIMS + "?workspace_id={foreign_workspace}",
        None,
        403,
        "{foreign_workspace}",
    ),
]


@pytest.mark.parametrize(
    "name,key,path,body,status,mention", [c[1:] for c in CROSS], ids=[c[0] for c in CROSS]
)
async def test_other_callers_resources_are_refused(api, world, name, key, path, body, status, mention):
    key = key if key is DEFAULT else fill(key, world)
    await expect_error(
        api,
        world,
        name,
        status,
        key=key,
        path=path,
        body=DEFAULT if body is None else body,
        mentions=(mention,),
    )


async def test_claims_are_per_workspace(api, world):
    """Controls for the table above: the foreign agent holds its own branch:main, and neither
    listing shows the other workspace's claim; an agent of our workspace reads our
    installation."""
    for key, mine, _theirs in (
        (api.agent_key, "claim", "foreign_claim"),
        (world["foreign_key"], "foreign_claim", "claim"),
    ):
        status, data = await send(api, world, "claims", key=key)
        assert status == 200, data
        assert [c["claim_id"] for c in data["claims"]] == [world[mine]]
    status, data = await send(api, world, "installed", key=world["other_key"])
    assert (status, data["installed_memory_id"]) == (200, world["installed"])


# -- state-dependent refusals -----------------------------------------------------------------


async def test_claiming_a_held_resource_is_409_naming_the_holder(api, world):
    data = await expect_typed_error(
        api,
        world,
        "claim",
        409,
        "claim_held",
        key=world["other_key"],
        body={"resource": "branch:main", "ttl_seconds": 60},
        mentions=("'branch:main'", "test-agent"),
    )
    assert data["detail"]["holder"] == "test-agent"
    assert data["detail"]["claim_id"] == world["claim"]


async def test_a_padded_resource_is_the_same_resource(api, world):
    """The resource is compared trimmed: '  branch:main ' is still held by us."""
    await expect_typed_error(
        api,
        world,
        "claim",
        409,
        "claim_held",
        key=world["other_key"],
        body={"resource": "  branch:main "},
        mentions=("test-agent",),
    )


async def test_owner_is_refused_a_held_resource_too(api, world):
    await expect_typed_error(
        api,
        world,
        "claim",
        409,
        "claim_held",
        key=api.owner_key,
        body={"resource": "branch:main", "workspace_id": "{workspace}"},
        mentions=("test-agent",),
    )
