"""Bad input on the memory-suite endpoints (daemon/api/suites.py): status, amp.error.v1
envelope, and nothing stored (helpers.py; its row counts include suites, suite_versions,
suite_files, the catalog index and every suite's latest version).

Same scheme as test_api_errors.py: every endpoint is declared once (SUITES) with a request
that succeeds in the world below, and each error test sends a variation of it. Two
exceptions to "a variation of the declared body": the import takes the zip itself as the body
(``send`` below sends IMPORT_ZIP unless told otherwise), and the download answers a zip, not
JSON, so its success is checked on its own. POSTs need memory:write, GETs catalog:read
(/api/me/memories memory:read); the two validations take an optional key (never 401), as in
the MemoryCloud reference. The malicious-archive corpus is in test_suites.py, the reference's
rejection table in test_suites_reference.py.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest

from daemon.runtime.suite_archive import MAX_UPLOAD_BYTES
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
    base_world,
    fill,
    row_counts,
    world_fixtures,
)
from tests.daemon.test_suites import seal, valid_files, valid_zip, zip_entries
from tests.daemon.test_updates_and_sync import publish

CATALOG = "catalog:read"
IMPORT_ZIP = valid_zip(slug="declared-import")

SUITES = {
    "create": Ep(
        "POST", "/api/memories", {"title": "Declared Suite", "summary": "declared", "license": "MIT"}, WRITE
    ),
    "import": Ep("POST", "/api/memories/import", {}, WRITE),  # the body is IMPORT_ZIP
    "sync": Ep("POST", "/api/memories/{slug}/sync", {"text": "declared"}, WRITE),
    "validate": Ep(
        "POST",
        "/api/memories/validate",
        {"title": "Declared Suite", "summary": "declared", "memory_md": "- m\n"},
    ),
    "import_validate": Ep("POST", "/api/memories/import/validate", {}),  # IMPORT_ZIP
    "mine": Ep("GET", "/api/me/memories", scope=READ),
    "catalog": Ep("GET", "/api/catalog?q=world"),
    "detail": Ep("GET", "/api/catalog/{slug}"),
    "suite": Ep("GET", "/api/catalog/{slug}/suite"),
    "download": Ep("GET", "/api/catalog/{slug}/download?version=1.0.0"),
    "openclaw": Ep("GET", "/api/catalog/{slug}/install/openclaw"),
    "versions": Ep("GET", "/api/catalog/{slug}/versions"),
    "diff": Ep("GET", "/api/catalog/{slug}/diff?from=1.0.0&to=1.0.1"),
}
# An optional key, as in the reference: never 401 or 403 (the validations and the reads).
OPTIONAL = [
    "validate",
    "import_validate",
    "catalog",
    "detail",
    "suite",
    "download",
    "openclaw",
    "versions",
    "diff",
]
AUTHED = [name for name in SUITES if name not in OPTIONAL]
UPLOADS = ["import", "import_validate"]
POSTS = [name for name, ep in SUITES.items() if ep.method == "POST"]
JSON_POSTS = ["create", "sync", "validate"]
SLUGGED = ["sync", "detail", "suite", "download", "openclaw", "versions", "diff"]


def _parts(name: str, parts: dict[str, Any]) -> dict[str, Any]:
    if name in UPLOADS and parts.get("raw") is None and parts.get("body", DEFAULT) is DEFAULT:
        parts = {
            **parts,
            "raw": IMPORT_ZIP,
            "headers": {"Content-Type": "application/zip", **(parts.get("headers") or {})},
        }
    return parts


async def send(api, world, name: str, **parts: Any) -> tuple[int, Any]:
    return await helpers.send(api, world, SUITES[name], **_parts(name, parts))


async def expect_error(api, world, name: str, status: int | tuple[int, ...], **parts) -> dict:
    return await helpers.expect_error(api, world, SUITES[name], status, **_parts(name, parts))


async def build_world(api) -> dict[str, str]:
    """The base world plus our suite {slug} at versions 1.0.0 and 1.0.1 (one sync), and a key
    with catalog:read only ({catalog_key})."""
    world = await base_world(api)
    suite = await api.post(
        "/api/memories", {"title": "World Suite", "summary": "the world's suite", "license": "MIT"}
    )
    synced = await api.post(f"/api/memories/{suite['slug']}/sync", {"events": [{"summary": "first sync"}]})
    assert synced["version"]["version"] == "1.0.1"
    return world | {"slug": suite["slug"], "catalog_key": api.new_agent("cataloger", scopes=[CATALOG])}


built_world, api, world = world_fixtures(build_world)
# -- the baseline: the declared requests succeed -------------------------------------------


@pytest.mark.parametrize("name", list(SUITES))
async def test_declared_request_succeeds(api, world, name):
    if name == "download":
        response = await api.client.get(fill(SUITES[name].path, world), headers=api.auth())
        assert response.status == 200, await response.text()
        with zipfile.ZipFile(io.BytesIO(await response.read())) as archive:
            assert "manifest.json" in archive.namelist()
        return
    status, data = await send(api, world, name)
    assert status == 200, data
    if name == "catalog":
        assert [s["slug"] for s in data["suites"]] == [world["slug"]]


@pytest.mark.parametrize("name", ["create", "import", "validate", "import_validate"])
async def test_declared_writes_are_idempotent(api, world, name):
    assert (await send(api, world, name))[0] == 200
    rows = row_counts(api)
    assert (await send(api, world, name))[0] == 200
    assert row_counts(api) == rows


# -- authentication, authorization and the Host/Origin guard --------------------------------


@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", AUTHED)
async def test_missing_or_invalid_key_is_401(api, world, name, variant):
    key = fill(AUTH_VARIANTS[variant], world)
    await expect_error(api, world, name, 401, key=key, mentions=("API key",))


@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", OPTIONAL)
async def test_optional_key_endpoints_need_no_key(api, world, name, variant):
    """As in the reference: missing or invalid credentials are anonymous, never 401."""
    key = fill(AUTH_VARIANTS[variant], world)
    if name == "download":
        headers = {} if key is None else {"Authorization": key if " " in key else f"Bearer {key}"}
        response = await api.client.get(fill(SUITES[name].path, world), headers=headers)
        assert response.status == 200 and response.content_type == "application/zip"
        return
    status, data = await send(api, world, name, key=key)
    assert status == 200, data


SCOPE_KEYS = {
    WRITE: {"read-only": "{read_key}", "catalog-only": "{catalog_key}"},
    CATALOG: {"read-only": "{read_key}", "write-only": "{write_key}"},
    READ: {"catalog-only": "{catalog_key}", "write-only": "{write_key}"},
}
SCOPE_CASES = [
    pytest.param(name, key, id=f"{name}-{label}")
    for name, ep in SUITES.items()
    if ep.scope
    for label, key in SCOPE_KEYS[ep.scope].items()
]


@pytest.mark.parametrize("name,key", SCOPE_CASES)
async def test_missing_scope_is_403(api, world, name, key):
    scope = SUITES[name].scope
    data = await expect_error(api, world, name, 403, key=fill(key, world), mentions=(scope,))
    assert data["detail"]["required_scope"] == scope


@pytest.mark.parametrize("name", list(SUITES))
async def test_the_scope_alone_is_enough(api, world, name):
    """Control for the test above: a key with only the endpoint's scope gets through."""
    key = {WRITE: world["write_key"], READ: world["read_key"]}.get(SUITES[name].scope, world["catalog_key"])
    if name == "download":
        response = await api.client.get(fill(SUITES[name].path, world), headers=api.auth(key))
        assert response.status == 200
        return
    path = None
    if name == "sync":  # only a suite's creator (or the owner) syncs it: the key makes one
        own = await api.post("/api/memories", {"title": "Write Key Suite", "summary": "its own"}, key=key)
        path = f"/api/memories/{own['slug']}/sync"
    status, data = await send(api, world, name, key=key, path=path)
    assert status == 200, data


async def test_sync_of_another_keys_suite_is_404(api, world):
    """As in the reference: another key's suite is not among yours (no 403 that says it exists)."""
    await expect_error(api, world, "sync", 404, key=world["write_key"], mentions=("{slug}",))


@pytest.mark.parametrize("variant", list(GUARD))
@pytest.mark.parametrize("name", list(SUITES))
async def test_foreign_host_or_origin_is_403(api, world, name, variant):
    headers, mention = GUARD[variant]
    await expect_error(api, world, name, 403, headers=headers, mentions=(mention,))


@pytest.mark.parametrize(
    "method,name",
    [
        ("GET", "create"),
        ("PUT", "create"),
        ("DELETE", "create"),
        ("GET", "import"),
        ("PUT", "import"),
        ("GET", "sync"),
        ("POST", "catalog"),
        ("DELETE", "suite"),
        ("POST", "download"),
        ("DELETE", "openclaw"),
        ("PUT", "versions"),
        ("POST", "diff"),
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


@pytest.mark.parametrize("variant", list(MALFORMED))
@pytest.mark.parametrize("name", UPLOADS)
async def test_import_of_json_instead_of_a_zip_is_400(api, world, name, variant):
    raw, _ = MALFORMED[variant]
    await expect_error(
        api, world, name, 400, raw=raw, headers={"Content-Type": "application/json"}, mentions=("not a zip",)
    )


@pytest.mark.parametrize(
    "raw,content_type,status,mention",
    [
        (b"", "application/zip", 422, "send the suite zip"),
        (b"PK\x03\x04 not really", "application/zip", 400, "not a zip"),
        (
            b'--b\r\nContent-Disposition: form-data; name="other"\r\n\r\nx\r\n--b--\r\n',
            "multipart/form-data; boundary=b",
            422,
            "'file'",
        ),
        (b"--b--\r\n", "multipart/form-data; boundary=b", 422, "'file'"),
    ],
    ids=["empty", "zip-magic-only", "multipart-without-file", "multipart-empty"],
)
@pytest.mark.parametrize("name", UPLOADS)
async def test_import_without_an_archive_is_refused(api, world, name, raw, content_type, status, mention):
    """No file at all is the reference's 422 (a missing field); a file that is no zip, 400."""
    data = await expect_error(
        api, world, name, status, raw=raw, headers={"Content-Type": content_type}, mentions=(mention,)
    )
    if status == 422:
        assert data["detail"]["missing_fields"] == ["file"]


@pytest.mark.parametrize(
    "raw,content_type",
    [
        pytest.param(b"x" * 10, "multipart/form-data", id="multipart-without-boundary"),
        pytest.param(b"--b\r\nbroken", "multipart/form-data; boundary=b", id="multipart-truncated"),
    ],
)
async def test_import_of_a_broken_multipart_form_is_400(api, world, raw, content_type):
    await expect_error(api, world, "import", 400, raw=raw, headers={"Content-Type": content_type})


@pytest.mark.parametrize("name", JSON_POSTS)
async def test_body_over_one_mib_is_413(api, world, name):
    await expect_error(api, world, name, 413, raw=OVER_ONE_MIB, mentions=("1048576",))


@pytest.mark.parametrize("name", UPLOADS)
async def test_upload_over_15_mib_is_413(api, world, name):
    """Uploads have the reference's limit (15 MiB), not the 1 MiB of JSON bodies."""
    await expect_error(
        api,
        world,
        name,
        413,
        raw=b"\0" * (MAX_UPLOAD_BYTES + 1),
        headers={"Content-Type": "application/zip"},
        mentions=(str(MAX_UPLOAD_BYTES),),
    )


@pytest.mark.parametrize(
    "name,body",
    [
        ("create", {"title": "\ud800 broken", "summary": "s", "license": "MIT"}),
        ("sync", {"events": [{"summary": "\ud800 broken"}]}),
        ("sync", {"text": "\ud800 broken"}),
    ],
    ids=["create-title", "sync-event", "sync-text"],
)
async def test_lone_surrogate_is_400(api, world, name, body):
    await expect_error(api, world, name, 400, body=body, mentions=("Unicode",))


# -- field validation (422) -----------------------------------------------------------------

C = {"title": "tt", "summary": "s"}
E = [{"summary": "e"}]
INVALID = [
    # (endpoint, body, offending field, missing_fields or None)
    ("create", {}, "title", ["title", "summary"]),
    ("create", {"title": "tt"}, "summary", ["summary"]),
    ("create", {**C, "title": None}, "title", ["title"]),
    ("create", {**C, "title": ""}, "title", None),
    ("create", {**C, "title": "   "}, "title", None),
    ("create", {**C, "title": "t"}, "title", None),
    ("create", {**C, "title": "t" * 121}, "title", None),
    ("create", {**C, "title": 5}, "title", None),
    ("create", {**C, "summary": "s" * 801}, "summary", None),
    ("create", {**C, "summary": ["s"]}, "summary", None),
    ("create", {**C, "license": ""}, "license", None),
    ("create", {**C, "license": "l"}, "license", None),
    ("create", {**C, "license": "l" * 81}, "license", None),
    ("create", {**C, "license": True}, "license", None),
    ("create", {**C, "version": 1}, "version", None),
    ("create", {**C, "version": "1." * 33}, "version", None),
    ("create", {**C, "slug": 5}, "slug", None),
    ("create", {**C, "slug": "s" * 65}, "slug", None),
    ("create", {**C, "tags": "release"}, "tags", None),
    ("create", {**C, "tags": [1]}, "tags", None),
    ("create", {**C, "persona_type": 5}, "persona_type", None),
    ("create", {**C, "price_cents": "5"}, "price_cents", None),
    ("create", {**C, "price_cents": -1}, "price_cents", None),
    ("create", {**C, "provenance": "tests"}, "provenance", None),
    ("create", {**C, "provenance": ["tests"]}, "provenance", None),
    ("create", {**C, "manifest": "tests"}, "manifest", None),
    ("create", {**C, "work_memory": "x"}, "work_memory", None),
    ("create", {**C, "work_memory": ["x"]}, "work_memory[0]", None),
    ("create", {**C, "memory_md": 5}, "memory_md", None),
    ("create", {**C, "long_term_markdown": 5}, "memory_md", None),
    ("create", {**C, "memory_md": "x" * 500_001}, "memory_md", None),
    ("create", {**C, "dreams_md": []}, "dreams_md", None),
    ("create", {**C, "dreams_markdown": []}, "dreams_md", None),
    ("create", {**C, "instructions_md": 5}, "instructions_md", None),
    ("create", {**C, "instructions_markdown": 5}, "instructions_md", None),
    ("create", {**C, "readme_markdown": True}, "readme_markdown", None),
    ("create", {**C, "memory_md": "a", "long_term_markdown": "b"}, "memory_md", None),
    # What the suite builder refuses after the fields parsed (daemon/runtime/suite_fields.py)
    ("create", {**C, "version": "1.0"}, "version", None),
    ("create", {**C, "version": "v1.0.0"}, "version", None),
    ("create", {**C, "provenance": {"author": "me"}}, "provenance", None),
    ("create", {**C, "manifest": {"schema": "amp.memory.v1"}}, "manifest", None),
    ("sync", {}, "text", ["text"]),
    ("sync", {"text": None}, "text", ["text"]),
    ("sync", {"text": ""}, "text", None),
    ("sync", {"text": 5}, "text", None),
    ("sync", {"text": "x" * 20_001}, "text", None),
    ("sync", {"text": "t", "event_type": "e" * 61}, "event_type", None),
    ("sync", {"text": "t", "tags": "a"}, "tags", None),
    ("sync", {"text": "t", "occurred_at": "yesterday"}, "occurred_at", None),
    ("sync", {"text": "t", "occurred_at": "2026-02-30"}, "occurred_at", None),
    ("sync", {"text": "t", "changelog": "c" * 501}, "changelog", None),
    ("sync", {"text": "t", "events": E}, "text", None),
    ("sync", {"events": None}, "text", ["text"]),
    ("sync", {"events": []}, "events", None),
    ("sync", {"events": "e"}, "events", None),
    ("sync", {"events": {"summary": "e"}}, "events", None),
    ("sync", {"events": ["e"]}, "events", None),
    ("sync", {"events": [True]}, "events", None),
    ("sync", {"events": E * 201}, "events", None),
    ("sync", {"events": E, "importance": 0}, "importance", None),
    ("sync", {"events": E, "importance": 6}, "importance", None),
    ("sync", {"events": E, "importance": "5"}, "importance", None),
    ("sync", {"events": E, "importance": True}, "importance", None),
    ("sync", {"events": E, "importance": 4.5}, "importance", None),
]


def _invalid_id(case: Any) -> str:
    name, body, fieldname, _ = case
    value = repr(body.get(fieldname))[:12] if fieldname in body else "missing"
    return f"{name}-{fieldname}={value}"


@pytest.mark.parametrize("name,body,fieldname,missing", INVALID, ids=[_invalid_id(case) for case in INVALID])
async def test_invalid_field_is_422(api, world, name, body, fieldname, missing):
    data = await expect_error(api, world, name, 422, body=body, mentions=(fieldname,))
    if missing:
        assert data["detail"]["missing_fields"] == missing
    else:
        assert data["detail"]["field"] == fieldname


REFUSED = [
    # (id, endpoint, body, status(es), words in the message)
    ("create-bad-visibility", "create", {**C, "visibility": "friends"}, 400, ("visibility",)),
    ("validate-bad-visibility", "validate", {**C, "visibility": "friends"}, 400, ("visibility",)),
    ("create-bad-slug", "create", {**C, "slug": "Bad Slug"}, 422, ("slug", "Bad Slug")),
    ("create-short-slug", "create", {**C, "slug": "ab"}, 422, ("slug",)),
    ("create-work-memory-not-text", "create", {**C, "work_memory": {"2026-01-02": 5}}, 422, ("work_memory",)),
    (
        "create-aws-key",
        "create",
        {**C, "memory_md": "AKIAABCDEFGHIJKLMNOP"},
        400,
        ("secrets", "MEMORY.md", "AWS access key"),
    ),
    (
        "create-private-key",
        "create",
        {**C, "dreams_md": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n"},
        400,
        ("secrets", "DREAMS.md", "private key"),
    ),
    (
        "create-secret-in-summary",
        "create",
        {**C, "summary": "token: abcdefgh12345678"},
        400,
        ("secrets", "manifest.json"),
    ),
    (
        "create-secret-in-work-memory",
        "create",
        {**C, "work_memory": [{"date": "2026-01-02", "content": "ghp_" + "b" * 36}]},
        400,
        ("secrets", "memory/2026-01-02.md", "GitHub token"),
    ),
    ("sync-secret", "sync", {"text": "use sk-" + "c" * 30}, 400, ("secrets", "OpenAI-style API key")),
    ("sync-blank-text", "sync", {"text": "  \n "}, 400, ("blank",)),
    ("sync-event-without-summary", "sync", {"events": [{"event_type": "decision"}]}, 422, ("summary",)),
    ("sync-blank-summary", "sync", {"events": [{"summary": "  \n "}]}, 400, ("summary",)),
    (
        "sync-one-bad-event-of-two",
        "sync",
        {"events": [{"summary": "ok"}, {"summary": ""}]},
        422,
        ("summary",),
    ),
    pytest.param("create", {**C, "slug": "my-suite\n"}, 422, ("slug",), id="create-slug-trailing-newline"),
    pytest.param(
        "create", {**C, "version": "1.0.0\n"}, 422, ("version",), id="create-version-trailing-newline"
    ),
]


def _refused(case):
    return case if hasattr(case, "marks") else pytest.param(*case[1:], id=case[0])


@pytest.mark.parametrize("name,body,status,mentions", [_refused(c) for c in REFUSED])
async def test_refused_content_stores_nothing(api, world, name, body, status, mentions):
    await expect_error(api, world, name, status, body=body, mentions=mentions)


# -- query parameters -----------------------------------------------------------------------

# The reference clamps limit into 1..100 and offset to >= 0; what is not an integer is a 422
# (an empty value means the default, as with every query parameter).
NOT_INTEGERS = ["abc", "2.5", "1e2", "%205", "10_0", "%C2%B2", "%D9%A3"]


@pytest.mark.parametrize("name", ["limit", "offset"])
@pytest.mark.parametrize("value", NOT_INTEGERS)
async def test_catalog_paging_that_is_not_an_integer_is_422(api, world, name, value):
    data = await expect_error(
        api, world, "catalog", 422, path=f"/api/catalog?q=world&{name}={value}", mentions=(f"'{name}'",)
    )
    assert data["detail"]["field"] == name


@pytest.mark.parametrize(
    "query,limit,offset",
    [
        ("limit=1", 1, 0),
        ("limit=100", 100, 0),
        ("limit=0", 1, 0),
        ("limit=101", 100, 0),
        ("limit=-1", 1, 0),
        ("offset=-3", 30, 0),
        ("offset=0", 30, 0),
        ("", 30, 0),
    ],
)
async def test_catalog_paging_is_clamped(api, world, query, limit, offset):
    status, data = await send(api, world, "catalog", path="/api/catalog?" + query)
    assert status == 200 and (data["limit"], data["offset"]) == (limit, offset)
    assert len(data["suites"]) == len(data["items"]) == 1


DIFF_QUERIES = [
    ("", ["from", "to"]),
    ("?to=1.0.1", ["from"]),
    ("?from=1.0.0", ["to"]),
    ("?from=&to=1.0.1", ["from"]),
    ("?from=1.0.0&to=", ["to"]),
    ("?old=1.0.0&new=1.0.1", ["from", "to"]),
]


@pytest.mark.parametrize("query,missing", DIFF_QUERIES, ids=[q or "none" for q, _ in DIFF_QUERIES])
async def test_diff_without_from_or_to_is_422(api, world, query, missing):
    data = await expect_error(
        api, world, "diff", 422, path="/api/catalog/{slug}/diff" + query, mentions=("'from'", "'to'")
    )
    assert data["detail"]["missing_fields"] == missing


# -- unknown suites and versions --------------------------------------------------------------

NOT_FOUND = [
    # (id, endpoint, path, text the message must contain)
    *[
        (f"{name}-unknown-slug", name, SUITES[name].path.replace("{slug}", "no-such-suite"), "no-such-suite")
        for name in SLUGGED
    ],
    ("download-unknown-version", "download", "/api/catalog/{slug}/download?version=9.9.9", "9.9.9"),
    ("diff-unknown-from", "diff", "/api/catalog/{slug}/diff?from=9.9.9&to=1.0.1", "9.9.9"),
    ("diff-unknown-to", "diff", "/api/catalog/{slug}/diff?from=1.0.0&to=0.0.1", "0.0.1"),
    ("download-empty-slug-version", "download", "/api/catalog/{slug}/download?version=1.0", "1.0"),
    ("unknown-catalog-action", "suite", "/api/catalog/{slug}/delete", "/api/catalog/{slug}/delete"),
    ("unknown-suite-action", "sync", "/api/memories/{slug}/publish", "/api/memories/{slug}/publish"),
]


@pytest.mark.parametrize("name,path,mention", [c[1:] for c in NOT_FOUND], ids=[c[0] for c in NOT_FOUND])
async def test_unknown_suite_or_version_is_404(api, world, name, path, mention):
    await expect_error(api, world, name, 404, path=path, mentions=(mention,))


async def test_sync_of_an_unknown_suite_is_held_back_when_gated(api, world):
    """The gate comes before the suite is looked up (the reference's order): an important
    sync of a gated agent is kept as an intent even for a slug that does not exist."""
    await publish(api)
    before = api.store.conn.execute("select count(*) from sync_intents").fetchone()[0]
    status, data = await send(
        api, world, "sync", path="/api/memories/no-such-suite/sync", body={"text": "e", "importance": 4}
    )
    assert status == 409 and data["detail"]["schema"] == "amp.sync-interrupt.v1", data
    assert api.store.conn.execute("select count(*) from sync_intents").fetchone()[0] == before + 1
    # A less important one is let through, and finds no suite.
    await expect_error(
        api,
        world,
        "sync",
        404,
        path="/api/memories/no-such-suite/sync",
        body={"text": "e", "importance": 3},
        mentions=("no-such-suite",),
    )


# -- conflicts ---------------------------------------------------------------------------------


async def test_create_naming_a_taken_version_with_other_content_is_409(api, world):
    """Naming the slug (ours) publishes a version of that suite; without a slug the same title
    would make a new package (world-suite-2), as in the reference."""
    data = await expect_error(
        api,
        world,
        "create",
        409,
        body={
            "title": "World Suite",
            "summary": "other",
            "license": "MIT",
            "slug": world["slug"],
            "version": "1.0.1",
        },
        mentions=("{slug} 1.0.1",),
    )
    assert data["detail"]["slug"] == world["slug"] and data["detail"]["version"] == "1.0.1"


async def test_create_naming_another_keys_slug_is_409(api, world):
    await expect_error(
        api,
        world,
        "create",
        409,
        key=world["other_key"],
        body={"title": "World Suite", "summary": "mine", "slug": world["slug"], "version": "2.0.0"},
        mentions=("{slug}",),
    )


async def test_import_of_a_taken_version_with_other_content_is_409(api, world):
    assert (await send(api, world, "import"))[0] == 200
    other = zip_entries(
        seal(
            {**valid_files(slug="declared-import"), "MEMORY.md": "# other\n"},
            manifest={
                "schema": "amp.memory.v1",
                "slug": "declared-import",
                "title": "tt",
                "summary": "s",
                "version": "1.0.0",
                "license": "MIT",
                "provenance": {"source": "tests"},
            },
        )
    )
    await expect_error(
        api,
        world,
        "import",
        409,
        raw=other,
        headers={"Content-Type": "application/zip"},
        mentions=("declared-import 1.0.0",),
    )
