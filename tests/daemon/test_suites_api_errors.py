"""Bad input on the memory-suite endpoints (daemon/api/suites.py): status, amp.error.v1
envelope, and nothing stored (helpers.py; its row counts include suites, suite_versions,
suite_files, the catalog index and every suite's latest version).

Same scheme as test_api_errors.py: every endpoint is declared once (SUITES) with a request
that succeeds in the world below, and each error test sends a variation of it. Two
exceptions to "a variation of the declared body": the import takes the zip itself as the body
(``send`` below sends IMPORT_ZIP unless told otherwise), and the download answers a zip, not
JSON, so its success is checked on its own. POSTs need memory:write, GETs catalog:read.
The malicious-archive corpus is in test_suites.py.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest

from tests.daemon import helpers
from tests.daemon.helpers import (
    AUTH_VARIANTS, DEFAULT, GUARD, MALFORMED, OVER_ONE_MIB, WRITE, Ep, base_world,
    fill, row_counts,
)
from tests.daemon.test_suites import seal, valid_files, valid_zip, zip_entries
from tests.daemon.test_updates_and_sync import publish

CATALOG = "catalog:read"
IMPORT_ZIP = valid_zip(slug="declared-import")

SUITES = {
    "create": Ep("POST", "/api/memories",
                 {"title": "Declared Suite", "summary": "declared", "license": "MIT"}, WRITE),
    "import": Ep("POST", "/api/memories/import", {}, WRITE),  # the body is IMPORT_ZIP
    "sync": Ep("POST", "/api/memories/{slug}/sync", {"events": [{"summary": "declared"}]}, WRITE),
    "catalog": Ep("GET", "/api/catalog?q=world", scope=CATALOG),
    "suite": Ep("GET", "/api/catalog/{slug}/suite", scope=CATALOG),
    "download": Ep("GET", "/api/catalog/{slug}/download?version=1.0.0", scope=CATALOG),
    "openclaw": Ep("GET", "/api/catalog/{slug}/install/openclaw", scope=CATALOG),
    "versions": Ep("GET", "/api/catalog/{slug}/versions", scope=CATALOG),
    "diff": Ep("GET", "/api/catalog/{slug}/diff?from=1.0.0&to=1.0.1", scope=CATALOG),
}
POSTS = [name for name, ep in SUITES.items() if ep.method == "POST"]
JSON_POSTS = ["create", "sync"]
SLUGGED = ["sync", "suite", "download", "openclaw", "versions", "diff"]


def _parts(name: str, parts: dict[str, Any]) -> dict[str, Any]:
    if name == "import" and parts.get("raw") is None and parts.get("body", DEFAULT) is DEFAULT:
        parts = {**parts, "raw": IMPORT_ZIP, "headers": {"Content-Type": "application/zip",
                                                         **(parts.get("headers") or {})}}
    return parts


async def send(api, world, name: str, **parts: Any) -> tuple[int, Any]:
    return await helpers.send(api, world, SUITES[name], **_parts(name, parts))


async def expect_error(api, world, name: str, status: int | tuple[int, ...], **parts) -> dict:
    return await helpers.expect_error(api, world, SUITES[name], status, **_parts(name, parts))


@pytest.fixture
async def world(api) -> dict[str, str]:
    """The base world plus our suite {slug} at versions 1.0.0 and 1.0.1 (one sync), and a key
    with catalog:read only ({catalog_key})."""
    world = await base_world(api)
    suite = await api.post("/api/memories", {"title": "World Suite", "summary": "the world's suite",
                                             "license": "MIT"})
    synced = await api.post(f"/api/memories/{suite['slug']}/sync",
                            {"events": [{"summary": "first sync"}]})
    assert synced["version"] == "1.0.1"
    return world | {"slug": suite["slug"],
                    "catalog_key": api.new_agent("cataloger", scopes=[CATALOG])}


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


@pytest.mark.parametrize("name", ["create", "import"])
async def test_declared_writes_are_idempotent(api, world, name):
    assert (await send(api, world, name))[0] == 200
    rows = row_counts(api)
    assert (await send(api, world, name))[0] == 200
    assert row_counts(api) == rows


# -- authentication, authorization and the Host/Origin guard --------------------------------

@pytest.mark.parametrize("variant", list(AUTH_VARIANTS))
@pytest.mark.parametrize("name", list(SUITES))
async def test_missing_or_invalid_key_is_401(api, world, name, variant):
    key = fill(AUTH_VARIANTS[variant], world)
    await expect_error(api, world, name, 401, key=key, mentions=("API key",))


SCOPE_KEYS = {WRITE: {"read-only": "{read_key}", "catalog-only": "{catalog_key}"},
              CATALOG: {"read-only": "{read_key}", "write-only": "{write_key}"}}
SCOPE_CASES = [pytest.param(name, key, id=f"{name}-{label}")
               for name, ep in SUITES.items() for label, key in SCOPE_KEYS[ep.scope].items()]


@pytest.mark.parametrize("name,key", SCOPE_CASES)
async def test_missing_scope_is_403(api, world, name, key):
    scope = SUITES[name].scope
    data = await expect_error(api, world, name, 403, key=fill(key, world), mentions=(scope,))
    assert data["detail"]["required_scope"] == scope


@pytest.mark.parametrize("name", list(SUITES))
async def test_the_scope_alone_is_enough(api, world, name):
    """Control for the test above: a key with only the endpoint's scope gets through."""
    key = world["write_key"] if SUITES[name].scope == WRITE else world["catalog_key"]
    if name == "download":
        response = await api.client.get(fill(SUITES[name].path, world), headers=api.auth(key))
        assert response.status == 200
        return
    status, data = await send(api, world, name, key=key)
    assert status == 200, data


@pytest.mark.parametrize("variant", list(GUARD))
@pytest.mark.parametrize("name", list(SUITES))
async def test_foreign_host_or_origin_is_403(api, world, name, variant):
    headers, mention = GUARD[variant]
    await expect_error(api, world, name, 403, headers=headers, mentions=(mention,))


@pytest.mark.parametrize("method,name", [
    ("GET", "create"), ("PUT", "create"), ("DELETE", "create"), ("GET", "import"),
    ("PUT", "import"), ("GET", "sync"), ("POST", "catalog"), ("DELETE", "suite"),
    ("POST", "download"), ("DELETE", "openclaw"), ("PUT", "versions"), ("POST", "diff"),
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


@pytest.mark.parametrize("variant", list(MALFORMED))
async def test_import_of_json_instead_of_a_zip_is_400(api, world, variant):
    raw, _ = MALFORMED[variant]
    await expect_error(api, world, "import", 400, raw=raw,
                       headers={"Content-Type": "application/json"}, mentions=("not a zip",))


@pytest.mark.parametrize("raw,content_type,mention", [
    (b"", "application/zip", "send the suite zip"),
    (b"PK\x03\x04 not really", "application/zip", "not a zip"),
    (b'--b\r\nContent-Disposition: form-data; name="other"\r\n\r\nx\r\n--b--\r\n',
     "multipart/form-data; boundary=b", "'file'"),
    (b"--b--\r\n", "multipart/form-data; boundary=b", "'file'"),
], ids=["empty", "zip-magic-only", "multipart-without-file", "multipart-empty"])
async def test_import_without_an_archive_is_400(api, world, raw, content_type, mention):
    await expect_error(api, world, "import", 400, raw=raw, headers={"Content-Type": content_type},
                       mentions=(mention,))


@pytest.mark.parametrize("raw,content_type", [
    pytest.param(b"x" * 10, "multipart/form-data", id="multipart-without-boundary"),
    pytest.param(b"--b\r\nbroken", "multipart/form-data; boundary=b", id="multipart-truncated"),
])
async def test_import_of_a_broken_multipart_form_is_400(api, world, raw, content_type):
    await expect_error(api, world, "import", 400, raw=raw, headers={"Content-Type": content_type})


@pytest.mark.parametrize("name", POSTS)
async def test_body_over_one_mib_is_413(api, world, name):
    await expect_error(api, world, name, 413, raw=OVER_ONE_MIB, mentions=("1048576",))


@pytest.mark.parametrize("name,body", [
    ("create", {"title": "\ud800 broken", "summary": "s", "license": "MIT"}),
    ("sync", {"events": [{"summary": "\ud800 broken"}]}),
], ids=["create-title", "sync-event"])
async def test_lone_surrogate_is_400(api, world, name, body):
    await expect_error(api, world, name, 400, body=body, mentions=("Unicode",))


# -- field validation (422) -----------------------------------------------------------------

C = {"title": "t", "summary": "s", "license": "MIT"}
E = [{"summary": "e"}]
INVALID = [
    # (endpoint, body, offending field, missing_fields or None)
    ("create", {}, "title", ["title", "summary", "license"]),
    ("create", {"title": "t"}, "summary", ["summary", "license"]),
    ("create", {"title": "t", "summary": "s"}, "license", ["license"]),
    ("create", {**C, "title": None}, "title", ["title"]),
    ("create", {**C, "title": ""}, "title", None),
    ("create", {**C, "title": "   "}, "title", None),
    ("create", {**C, "title": "t" * 201}, "title", None),
    ("create", {**C, "title": 5}, "title", None),
    ("create", {**C, "summary": "s" * 2001}, "summary", None),
    ("create", {**C, "summary": ["s"]}, "summary", None),
    ("create", {**C, "license": ""}, "license", None),
    ("create", {**C, "license": "l" * 101}, "license", None),
    ("create", {**C, "license": True}, "license", None),
    ("create", {**C, "version": 1}, "version", None),
    ("create", {**C, "version": "1." * 21}, "version", None),
    ("create", {**C, "slug": 5}, "slug", None),
    ("create", {**C, "slug": "s" * 65}, "slug", None),
    ("create", {**C, "tags": "release"}, "tags", None),
    ("create", {**C, "tags": [1]}, "tags", None),
    ("create", {**C, "tags": ["t"] * 21}, "tags", None),
    ("create", {**C, "tags": ["t" * 61]}, "tags", None),
    ("create", {**C, "provenance": "tests"}, "provenance", None),
    ("create", {**C, "provenance": ["tests"]}, "provenance", None),
    ("create", {**C, "work_memory": "x"}, "work_memory", None),
    ("create", {**C, "work_memory": ["x"]}, "work_memory", None),
    ("create", {**C, "long_term_markdown": 5}, "long_term_markdown", None),
    ("create", {**C, "long_term_markdown": "x" * 500_001}, "long_term_markdown", None),
    ("create", {**C, "dreams_markdown": []}, "dreams_markdown", None),
    ("create", {**C, "instructions_markdown": 5}, "instructions_markdown", None),
    ("create", {**C, "readme_markdown": True}, "readme_markdown", None),
    # What the suite validator refuses after the fields parsed (daemon/runtime/suite_archive.py)
    ("create", {**C, "version": "1.0"}, "version", None),
    ("create", {**C, "version": "v1.0.0"}, "version", None),
    ("create", {**C, "provenance": {"author": "me"}}, "provenance", None),
    ("sync", {}, "events", ["events"]),
    ("sync", {"events": None}, "events", ["events"]),
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


@pytest.mark.parametrize("name,body,fieldname,missing", INVALID,
                         ids=[_invalid_id(case) for case in INVALID])
async def test_invalid_field_is_422(api, world, name, body, fieldname, missing):
    data = await expect_error(api, world, name, 422, body=body, mentions=(fieldname,))
    if missing:
        assert data["detail"]["missing_fields"] == missing
    else:
        assert data["detail"]["field"] == fieldname


REFUSED = [
    # (id, endpoint, body, status(es), words in the message)
    ("create-bad-slug", "create", {**C, "slug": "Bad Slug"}, 422, ("slug", "Bad Slug")),
    ("create-short-slug", "create", {**C, "slug": "ab"}, 422, ("slug",)),
    ("create-work-memory-not-text", "create", {**C, "work_memory": {"2026-01-02": 5}}, 422,
     ("work_memory",)),
    ("create-aws-key", "create", {**C, "long_term_markdown": "AKIAABCDEFGHIJKLMNOP"}, 422,
     ("secrets", "MEMORY.md", "AWS access key")),
    ("create-private-key", "create",
     {**C, "dreams_markdown": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n"}, 422,
     ("secrets", "DREAMS.md", "private key")),
    ("create-secret-in-summary", "create", {**C, "summary": "token: abcdefgh12345678"}, 422,
     ("secrets", "manifest.json")),
    ("create-secret-in-work-memory", "create",
     {**C, "work_memory": {"2026-01-02": "ghp_" + "b" * 36}}, 422,
     ("secrets", "memory/2026-01-02.md", "GitHub token")),
    ("sync-secret", "sync", {"events": [{"summary": "use sk-" + "c" * 30}]}, 422,
     ("secrets", "OpenAI-style API key")),
    ("sync-event-without-summary", "sync", {"events": [{"event_type": "decision"}]}, (400, 422),
     ("summary",)),
    ("sync-blank-summary", "sync", {"events": [{"summary": "  \n "}]}, (400, 422), ("summary",)),
    ("sync-one-bad-event-of-two", "sync", {"events": [{"summary": "ok"}, {"summary": ""}]},
     (400, 422), ("summary",)),
    pytest.param("create", {**C, "slug": "my-suite\n"}, 422,
                 ("slug",), id="create-slug-trailing-newline"),
    pytest.param("create", {**C, "version": "1.0.0\n"}, 422,
                 ("version",), id="create-version-trailing-newline"),
]


def _refused(case):
    return case if hasattr(case, "marks") else pytest.param(*case[1:], id=case[0])


@pytest.mark.parametrize("name,body,status,mentions", [_refused(c) for c in REFUSED])
async def test_refused_content_stores_nothing(api, world, name, body, status, mentions):
    await expect_error(api, world, name, status, body=body, mentions=mentions)


# -- query parameters -----------------------------------------------------------------------

# An empty limit means the default (as with every query parameter), so it is not here.
LIMITS = ["0", "101", "-1", "abc", "2.5", "1e2", "%205", "10_0"]


@pytest.mark.parametrize("limit", LIMITS, ids=[f"limit={v or 'empty'}" for v in LIMITS])
async def test_catalog_limit_out_of_range_is_422(api, world, limit):
    data = await expect_error(api, world, "catalog", 422, path="/api/catalog?q=world&limit=" + limit,
                              mentions=("'limit'",))
    assert data["detail"]["field"] == "limit"


@pytest.mark.parametrize("limit", ["%C2%B2", "%D9%A3"], ids=["superscript-two", "arabic-three"])
async def test_catalog_limit_with_unicode_digits_is_422(api, world, limit):
    await expect_error(api, world, "catalog", 422, path="/api/catalog?limit=" + limit,
                       mentions=("'limit'",))


@pytest.mark.parametrize("limit", ["1", "100"])
async def test_catalog_limit_bounds_are_accepted(api, world, limit):
    status, data = await send(api, world, "catalog", path="/api/catalog?limit=" + limit)
    assert status == 200 and len(data["suites"]) == 1


DIFF_QUERIES = [
    ("", ["from", "to"]), ("?to=1.0.1", ["from"]), ("?from=1.0.0", ["to"]),
    ("?from=&to=1.0.1", ["from"]), ("?from=1.0.0&to=", ["to"]), ("?old=1.0.0&new=1.0.1", ["from", "to"]),
]


@pytest.mark.parametrize("query,missing", DIFF_QUERIES, ids=[q or "none" for q, _ in DIFF_QUERIES])
async def test_diff_without_from_or_to_is_422(api, world, query, missing):
    data = await expect_error(api, world, "diff", 422, path="/api/catalog/{slug}/diff" + query,
                              mentions=("'from'", "'to'"))
    assert data["detail"]["missing_fields"] == missing


# -- unknown suites and versions --------------------------------------------------------------

NOT_FOUND = [
    # (id, endpoint, path, text the message must contain)
    *[(f"{name}-unknown-slug", name, SUITES[name].path.replace("{slug}", "no-such-suite"),
       "no-such-suite") for name in SLUGGED],
    ("download-unknown-version", "download", "/api/catalog/{slug}/download?version=9.9.9", "9.9.9"),
    ("diff-unknown-from", "diff", "/api/catalog/{slug}/diff?from=9.9.9&to=1.0.1", "9.9.9"),
    ("diff-unknown-to", "diff", "/api/catalog/{slug}/diff?from=1.0.0&to=0.0.1", "0.0.1"),
    ("download-empty-slug-version", "download", "/api/catalog/{slug}/download?version=1.0",
     "1.0"),
    ("unknown-catalog-action", "suite", "/api/catalog/{slug}/delete", "/api/catalog/{slug}/delete"),
    ("unknown-suite-action", "sync", "/api/memories/{slug}/publish", "/api/memories/{slug}/publish"),
]


@pytest.mark.parametrize("name,path,mention", [c[1:] for c in NOT_FOUND], ids=[c[0] for c in NOT_FOUND])
async def test_unknown_suite_or_version_is_404(api, world, name, path, mention):
    await expect_error(api, world, name, 404, path=path, mentions=(mention,))


async def test_sync_of_an_unknown_suite_keeps_no_intent_even_when_gated(api, world):
    """The 404 comes before the sync gate: no sync intent for a suite that does not exist."""
    await publish(api)
    await expect_error(api, world, "sync", 404, path="/api/memories/no-such-suite/sync",
                       body={"events": [{"summary": "e"}], "importance": 5},
                       mentions=("no-such-suite",))


# -- conflicts ---------------------------------------------------------------------------------

async def test_create_with_a_taken_version_and_other_content_is_409(api, world):
    data = await expect_error(api, world, "create", 409,
                              body={"title": "World Suite", "summary": "other", "license": "MIT"},
                              mentions=("{slug} 1.0.0",))
    assert data["detail"]["slug"] == world["slug"] and data["detail"]["version"] == "1.0.0"


async def test_import_of_a_taken_version_with_other_content_is_409(api, world):
    assert (await send(api, world, "import"))[0] == 200
    other = zip_entries(seal({**valid_files(slug="declared-import"), "MEMORY.md": "# other\n"},
                             manifest={"schema": "amp.memory.v1", "slug": "declared-import",
                                       "title": "t", "summary": "s", "version": "1.0.0",
                                       "license": "MIT", "provenance": {"source": "tests"}}))
    await expect_error(api, world, "import", 409, raw=other,
                       headers={"Content-Type": "application/zip"},
                       mentions=("declared-import 1.0.0",))

