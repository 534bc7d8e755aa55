"""Memory suites (amp.memory-suite.v1 with amp.memory.v1) against the real app and store: create
from our earlier field names, the zip round trip into a fresh daemon, idempotent imports,
legacy archives kept verbatim, sync as gated patch versions, versions and diffs, the catalog,
and a corpus of malicious archives that must be refused with nothing stored
(daemon/runtime/suite_archive.py, daemon/runtime/suites.py, daemon/api/suites.py).

The archive builders here (``valid_files``, ``seal``, ``zip_entries``) make a valid suite's
files independently of the app's own code; each malicious case breaks one thing.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import stat
import warnings
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import FormData
from aiohttp.test_utils import TestClient, TestServer

from daemon import keys
from daemon.app import create_app
from state.config import Settings
from state.paths import resolve_paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from tests.daemon.helpers import assert_envelope
from tests.daemon.test_updates_and_sync import publish

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

SUITE_TABLES = ("suites", "suite_versions", "suite_files", "suite_fts")
SEED_OPENCLAW = {
    "target": "openclaw",
    "merge": {"long_term": "MEMORY.md", "work_memory": "memory/*.md", "reflections": "DREAMS.md"},
}
OPENCLAW_ANSWER_KEYS = {
    "schema",
    "package",
    "manifest",
    "suite",
    "download_url",
    "risk",
    "mapping",
    "required_tools",
    "activation_prompt",
}
LAYERS = ["markdown", "database_rows", "vector_collection", "graph", "workspace"]
FIXED_TIME = (1980, 1, 1, 0, 0, 0)

CREATE = {
    "title": "Release Runbook 发布手册",
    "summary": "How we ship the daemon: checklists, rollbacks and lessons. 发布流程与回滚经验。",
    "license": "CC-BY-4.0",
    "tags": ["release", "发布"],
    "provenance": {"source": "tests/daemon/test_suites.py", "author": "release team"},
    "long_term_markdown": "# Release runbook\n\nAlways tag before building. 先打标签再构建。\n",
    "work_memory": {"2020-01-02": "# 2020-01-02\n\n- cut release 1.2\n"},
    "dreams_markdown": "# Reflections\n\nSmaller releases fail less.\n",
}


# -- builders ---------------------------------------------------------------------------------


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def valid_files(slug: str = "evil-test-suite", version: str = "1.0.0") -> dict[str, str]:
    """A complete, valid suite's files, without manifest.json (see ``seal``)."""
    return {
        "MEMORY.md": "# Long-term memory\n\nThe build uses SQLite. 构建使用 SQLite。\n",
        "memory/2026-01-02.md": "# 2026-01-02\n\n- migrated the store\n",
        "DREAMS.md": "# Reflections\n\nKeep migrations small.\n",
        "agent.instructions.md": "# Install\n\nMerge MEMORY.md as long-term memory.\n",
        "README.md": f"# {slug}\n",
        "install/openclaw.json": json.dumps(SEED_OPENCLAW) + "\n",
        "suite/manifest.json": json.dumps({"schema": "amp.memory-suite.v1", "slug": slug, "version": version})
        + "\n",
    }


def base_manifest(slug: str = "evil-test-suite", version: str = "1.0.0", **fields: Any) -> dict:
    return {
        "schema": "amp.memory.v1",
        "slug": slug,
        "title": f"Suite {slug}",
        "summary": "a suite built by the tests",
        "version": version,
        "license": "MIT",
        "provenance": {"source": "tests"},
        **fields,
    }


def seal(
    files: dict[str, str], manifest: dict[str, Any] | None = None, listed: dict[str, str] | None = None
) -> dict[str, str]:
    """The files plus a manifest.json listing every other file's sha256 (or `listed`)."""
    manifest = dict(manifest or base_manifest())
    if "files" not in manifest:
        manifest["files"] = (
            listed if listed is not None else {path: sha(text) for path, text in sorted(files.items())}
        )
    return {**files, "manifest.json": json.dumps(manifest, ensure_ascii=False)}


Entry = tuple[str, "str | bytes"] | tuple[str, "str | bytes", int]


def zip_entries(
    entries: list[Entry] | dict[str, str | bytes], *, compression: int = zipfile.ZIP_DEFLATED
) -> bytes:
    """A zip with exactly these entries, in order (duplicates allowed); a third element is
    the entry's external_attr (e.g. a symlink mode)."""
    if isinstance(entries, dict):
        entries = list(entries.items())
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name" is the point of some cases
        with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
            for entry in entries:
                info = zipfile.ZipInfo(entry[0], date_time=FIXED_TIME)
                info.compress_type = compression
                info.external_attr = entry[2] if len(entry) > 2 else (stat.S_IFREG | 0o644) << 16
                data = entry[1]
                archive.writestr(info, data.encode() if isinstance(data, str) else data)
    return buffer.getvalue()


def valid_zip(slug: str = "evil-test-suite", version: str = "1.0.0", **manifest: Any) -> bytes:
    return zip_entries(seal(valid_files(slug, version), base_manifest(slug, version, **manifest)))


def unzip(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info).decode("utf-8") for info in archive.infolist()}


# -- talking to the daemon ----------------------------------------------------------------


def suite_rows(api) -> dict[str, int]:
    return {t: api.store.conn.execute(f"select count(*) from {t}").fetchone()[0] for t in SUITE_TABLES}


async def import_zip(
    api,
    data: bytes,
    *,
    key: str | None = None,
    status: int | None = 200,
    content_type: str = "application/zip",
    client: TestClient | None = None,
):
    client = client or api.client
    response = await client.post(
        "/api/memories/import", data=data, headers={**api.auth(key), "Content-Type": content_type}
    )
    body = await response.json()
    if status is not None:
        assert response.status == status, body
    return response.status, body


async def download(
    api, slug: str, version: str | None = None, *, key: str | None = None, client: TestClient | None = None
) -> bytes:
    client = client or api.client
    query = f"?version={version}" if version else ""
    response = await client.get(f"/api/catalog/{slug}/download{query}", headers=api.auth(key))
    assert response.status == 200, await response.text()
    assert response.content_type == "application/zip"
    expected = f"{slug}-{version}.zip" if version else f"{slug}-"
    assert expected in response.headers["Content-Disposition"]
    return await response.read()


async def create(api, **fields: Any) -> dict[str, Any]:
    return await api.post("/api/memories", {**CREATE, **fields})


def utc_days() -> set[str]:
    return {datetime.now(UTC).strftime("%Y-%m-%d")}


# -- create from fields -----------------------------------------------------------------------


async def test_create_from_fields_builds_a_complete_suite(api):
    """Our earlier field names (long_term_markdown, work_memory as a dict ...) still build the
    whole suite; the reference's names are in test_suites_reference.py."""
    suite = await create(api)
    assert suite["schema"] == "amp.memory-suite.v1"
    assert suite["slug"] == "release-runbook"  # slugify drops the Chinese words
    assert (suite["latest_version"], suite["legacy"]) == ("1.0.0", False)
    assert suite["version"]["version"] == suite["package"]["version"] == "1.0.0"
    assert suite["download"] == "/api/catalog/release-runbook/download?version=1.0.0"

    data = await download(api, "release-runbook")
    files = unzip(data)
    assert sorted(files) == [
        "DREAMS.md",
        "MEMORY.md",
        "README.md",
        "agent.instructions.md",
        "install/openclaw.json",
        "manifest.json",
        "memory/2020-01-02.md",
        "suite/manifest.json",
    ]
    assert files["MEMORY.md"] == CREATE["long_term_markdown"]
    assert files["memory/2020-01-02.md"] == CREATE["work_memory"]["2020-01-02"]
    assert files["DREAMS.md"] == CREATE["dreams_markdown"]
    # The described hashes are the files' own, and the archive hash is the zip's.
    assert suite["files"] == {path: sha(text) for path, text in files.items()}
    assert suite["archive_sha256"] == suite["version"]["sha256"] == sha(data)

    manifest = json.loads(files["manifest.json"])
    assert manifest["schema"] == "amp.memory.v1"
    assert manifest["slug"] == "release-runbook" and manifest["title"] == CREATE["title"]
    assert manifest["summary"] == CREATE["summary"] and manifest["tags"] == CREATE["tags"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"]) and manifest["version"] == "1.0.0"
    assert manifest["license"] == "CC-BY-4.0"
    # Our earlier provenance (a source, no source_type) gets the type the reference requires.
    assert manifest["provenance"] == {"source_type": "unspecified", **CREATE["provenance"]}
    # Every file but the manifest itself, each with its sha256 and size.
    assert manifest["files"] == {
        p: {"sha256": sha(t), "bytes": len(t.encode())} for p, t in files.items() if p != "manifest.json"
    }
    assert manifest["memory_ontology"] == {
        "long_term": "MEMORY.md",
        "work_memory": "memory/*.md",
        "reflections": "DREAMS.md",
    }
    assert "memory_tool_installer" in manifest["memory_tools"]
    assert manifest["suite"] == json.loads(files["suite/manifest.json"])
    assert manifest["safety"]["secrets"] == "none"

    suite_manifest = json.loads(files["suite/manifest.json"])
    assert suite_manifest["schema"] == "amp.memory-suite.v1"
    assert (suite_manifest["slug"], suite_manifest["version"]) == ("release-runbook", "1.0.0")
    layers = {layer["layer"]: layer for layer in suite_manifest["content_layers"]}
    assert list(layers) == LAYERS
    assert layers["markdown"]["files"] == sorted(p for p in files if p.endswith(".md"))
    for name in ("database_rows", "vector_collection", "graph"):
        assert layers[name]["status"] == "not_included"
    assert layers["workspace"] == {
        "layer": "workspace",
        "target": "adaptive_memories",
        "status": "on_install",
    }
    assert "memory_tool_installer" in {tool["id"] for tool in suite_manifest["tools"]}
    runtimes = {row["runtime"]: row for row in suite_manifest["compatibility_matrix"]}
    assert set(runtimes) == {"markdown_agent", "openclaw", "codex_skill_runtime", "multi_agent_workspace"}
    assert all(row["data"] and row["tools"] for row in runtimes.values())
    lifecycle = suite_manifest["install_lifecycle"]
    assert lifecycle[0] == "inspect_suite_manifest" and "retrieval" in lifecycle[-2]

    openclaw_file = json.loads(files["install/openclaw.json"])
    assert {k: openclaw_file[k] for k in SEED_OPENCLAW} == SEED_OPENCLAW
    answer = await api.get("/api/catalog/release-runbook/install/openclaw")
    assert {k: answer[k] for k in openclaw_file} == openclaw_file
    assert set(answer) >= OPENCLAW_ANSWER_KEYS and answer["schema"] == "amp.install.openclaw.v1"
    described = await api.get("/api/catalog/release-runbook/suite")
    assert described["suite_manifest"] == suite_manifest
    assert described["suite_id"] == "release-runbook" and described["package"]["slug"] == "release-runbook"
    mine = {k: v for k, v in suite.items() if k not in ("package", "version")}
    assert {k: described[k] for k in mine if k not in ("suite_id",)} == {
        k: v for k, v in mine.items() if k != "suite_id"
    }


async def test_create_defaults_and_canonical_zip(api):
    suite = await api.post("/api/memories", {"title": "Ab", "summary": "s", "license": "MIT"})
    assert suite["slug"].startswith("suite-")  # too short a title for a slug of its own
    data = await download(api, suite["slug"])
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
    names = [i.filename for i in infos]
    assert names == sorted(names)
    assert all(i.date_time == FIXED_TIME for i in infos)
    assert all(i.external_attr >> 16 == stat.S_IFREG | 0o644 for i in infos)
    files = unzip(data)
    assert files["DREAMS.md"] == "" and not any(p.startswith("memory/") for p in files)
    manifest = json.loads(files["manifest.json"])
    assert manifest["version"] == "1.0.0"
    assert manifest["provenance"] == {"source_type": "self_authored", "source": "memorycloud-companion"}
    assert manifest["author"] == {"handle": "test-agent"}
    assert files["MEMORY.md"] == "# Ab\n\ns\n"
    # The same download twice is the same bytes.
    assert await download(api, suite["slug"]) == data


async def test_creating_the_same_fields_twice_is_idempotent(api):
    first = await create(api)
    rows = suite_rows(api)
    again = await create(api)
    assert again["version"] == first["version"] and again["slug"] == first["slug"]
    assert suite_rows(api) == rows
    # The same title with other content is a new package, as in the reference ...
    other = await api.post("/api/memories", {**CREATE, "summary": "changed"})
    assert other["slug"] == "release-runbook-2"
    rows = suite_rows(api)
    # ... but naming the slug publishes to it: the same version with other content is a
    # conflict, and nothing is stored; a new version is added.
    data = await api.post(
        "/api/memories", {**CREATE, "summary": "changed again", "slug": "release-runbook"}, status=409
    )
    assert "release-runbook 1.0.0" in data["error"]["message"]
    assert suite_rows(api) == rows
    bumped = await create(api, summary="changed", version="1.1.0", slug="release-runbook")
    assert bumped["latest_version"] == "1.1.0" and bumped["slug"] == "release-runbook"


@pytest.mark.parametrize("day", ["../../../etc/cron", "notes", "2026-1-2", "x/../../MEMORY"])
async def test_create_refuses_work_memory_outside_the_layout(api, day):
    rows = suite_rows(api)
    data = await api.post("/api/memories", {**CREATE, "work_memory": {day: "x"}}, status=None)
    assert data.get("error", {}).get("status") == 422, data
    assert suite_rows(api) == rows


# -- the round trip into a fresh daemon ------------------------------------------------------


async def test_round_trip_into_a_fresh_daemon_is_byte_identical(api, tmp_path: Path):
    suite = await create(api)
    data = await download(api, suite["slug"])

    second_home = tmp_path / "second-home"
    app = create_app(Settings(), resolve_paths({"MEMORYCLOUD_HOME": str(second_home)}))
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        owner_key = open_secret_store(app[keys.PATHS].secrets_file).get(OWNER_KEY_SECRET)
        assert app[keys.PATHS].database != api.client.app[keys.PATHS].database
        fresh = app[keys.STORE]
        assert fresh.conn.execute("select count(*) from suites").fetchone()[0] == 0

        _, imported = await import_zip(api, data, key=owner_key, client=client)
        assert imported["slug"] == suite["slug"]
        assert imported["version"]["version"] == suite["version"]["version"]
        assert imported["files"] == suite["files"]
        assert imported["archive_sha256"] == suite["archive_sha256"] == sha(data)
        assert imported["legacy"] is False
        again = await download(api, suite["slug"], key=owner_key, client=client)
        assert again == data
        assert unzip(again) == unzip(data)
        # The stored rows hold the same content and hashes as the first daemon's.
        stored = fresh.suites.version(suite["slug"])
        original = api.store.suites.version(suite["slug"])
        assert stored["files"] == original["files"]
        assert stored["file_sha256"] == original["file_sha256"]
        assert stored["manifest"] == original["manifest"]
    finally:
        await client.close()


async def test_importing_the_same_zip_twice_is_idempotent(api):
    data = valid_zip()
    _, first = await import_zip(api, data)
    assert (first["slug"], first["version"]["version"], first["legacy"]) == (
        "evil-test-suite",
        "1.0.0",
        False,
    )
    assert first["files"] == {p: sha(t) for p, t in unzip(data).items()}
    rows = suite_rows(api)
    _, second = await import_zip(api, data)
    assert second == first
    assert suite_rows(api) == rows
    # Another archive for the same slug and version: 409, nothing stored.
    other = zip_entries(seal({**valid_files(), "MEMORY.md": "# Different\n"}))
    _, conflict = await import_zip(api, other, status=409)
    assert_envelope(conflict, 409, "/api/memories/import")
    assert "evil-test-suite 1.0.0" in conflict["error"]["message"]
    assert conflict["detail"]["version"] == "1.0.0"
    assert suite_rows(api) == rows
    # Entry order and zip metadata do not matter: the same files are the same version (and
    # the bytes served stay those of the first upload).
    shuffled = zip_entries(list(reversed(list(unzip(data).items()))), compression=zipfile.ZIP_STORED)
    _, third = await import_zip(api, shuffled)
    assert third == first and suite_rows(api) == rows
    assert await download(api, "evil-test-suite") == data
    assert await download(api, "evil-test-suite") == await download(api, "evil-test-suite", "1.0.0")


async def test_multipart_import(api):
    form = FormData()
    form.add_field("note", "ignored")
    form.add_field("file", valid_zip(), filename="suite.zip", content_type="application/zip")
    response = await api.client.post("/api/memories/import", data=form, headers=api.auth())
    body = await response.json()
    assert response.status == 200, body
    assert body["slug"] == "evil-test-suite" and body["version"]["version"] == "1.0.0"
    rows = suite_rows(api)
    # The same zip again as a raw body is the same suite version.
    _, raw = await import_zip(api, valid_zip())
    assert raw == body and suite_rows(api) == rows

    form = FormData()
    form.add_field("other", valid_zip(), filename="suite.zip", content_type="application/zip")
    response = await api.client.post("/api/memories/import", data=form, headers=api.auth())
    data = await response.json()
    assert response.status == 422, data  # the reference: the field 'file' is missing
    assert "'file'" in data["error"]["message"]
    assert suite_rows(api) == rows


async def test_multipart_import_of_a_malicious_archive_is_refused(api):
    form = FormData()
    form.add_field(
        "file",
        zip_entries(seal({**valid_files(), "../MEMORY.md": "x"})),
        filename="suite.zip",
        content_type="application/zip",
    )
    rows = suite_rows(api)
    response = await api.client.post("/api/memories/import", data=form, headers=api.auth())
    data = await response.json()
    assert response.status == 400, data
    assert "path traversal" in data["error"]["message"]
    assert suite_rows(api) == rows


# -- legacy archives ----------------------------------------------------------------------------

LEGACY = {
    "manifest.json": json.dumps(
        {
            "schema": "amp.memory.v1",
            "title": "Old Capsule Notes",
            "summary": "a capsule from before suites",
            "version": "0.3.0",
            "license": "CC0-1.0",
            "provenance": {"source": "capsule v0"},
        }
    ),
    "MEMORY.md": "# Old capsule\n\nPrefer small commits.\n",
    "memory/2026-01-02.md": "# 2026-01-02\n\n- wrote the capsule\n",
    "DREAMS.md": "# Dreams\n\nOne day, suites.\n",
}


async def test_legacy_archive_is_kept_verbatim_and_read_as_a_light_suite(api):
    """As in the reference: the archive is served as it came (no suite/manifest.json is added
    until a sync rebuilds it); its suite manifest is derived from manifest.json."""
    data = zip_entries(LEGACY)
    _, suite = await import_zip(api, data)
    assert suite["slug"] == "old-capsule-notes"
    assert (suite["version"]["version"], suite["legacy"]) == ("0.3.0", True)
    assert await download(api, "old-capsule-notes") == data

    described = await api.get("/api/catalog/old-capsule-notes/suite")
    assert described["legacy"] is True
    generated = described["suite_manifest"]
    assert generated["schema"] == "amp.memory-suite.v1" and generated["version"] == "0.3.0"
    assert generated["license"] == "CC0-1.0" and generated["provenance"] == {"source": "capsule v0"}
    markdown = next(layer for layer in generated["content_layers"] if layer["layer"] == "markdown")
    assert markdown["files"] == ["DREAMS.md", "MEMORY.md", "memory/2026-01-02.md"]
    answer = await api.get("/api/catalog/old-capsule-notes/install/openclaw")
    assert {k: answer[k] for k in SEED_OPENCLAW} == SEED_OPENCLAW
    catalog = await api.get("/api/catalog?q=capsule")
    assert [(s["slug"], s["legacy"]) for s in catalog["suites"]] == [("old-capsule-notes", True)]

    # The same legacy zip again, or its download, is the same version (only the package's
    # counters moved: one download, one OpenClaw install read).
    rows = suite_rows(api)
    _, again = await import_zip(api, data)
    _, downloaded = await import_zip(api, await download(api, "old-capsule-notes"))
    for answer in (again, downloaded):
        assert {k: v for k, v in answer.items() if k != "package"} == {
            k: v for k, v in suite.items() if k != "package"
        }
        assert answer["package"]["id"] == suite["package"]["id"]
    assert suite_rows(api) == rows

    # A sync rebuilds it in the full layout, with the content kept as it was.
    await api.post(
        "/api/memories/old-capsule-notes/sync", {"text": "synced once", "occurred_at": "2026-01-02"}
    )
    files = unzip(await download(api, "old-capsule-notes"))
    assert files["MEMORY.md"] == LEGACY["MEMORY.md"] and files["DREAMS.md"] == LEGACY["DREAMS.md"]
    assert files["memory/2026-01-02.md"] == LEGACY["memory/2026-01-02.md"] + "- [3/5] synced once\n"
    manifest = json.loads(files["manifest.json"])
    assert manifest["license"] == "CC0-1.0" and manifest["provenance"] == {"source": "capsule v0"}
    assert manifest["files"] == {
        p: {"sha256": sha(t), "bytes": len(t.encode())} for p, t in files.items() if p != "manifest.json"
    }
    assert json.loads(files["suite/manifest.json"])["version"] == "0.3.1"
    assert (await api.get("/api/catalog/old-capsule-notes/suite"))["legacy"] is False


async def test_legacy_archive_keeps_its_own_openclaw_mapping(api):
    mapping = {"target": "openclaw", "merge": {"long_term": "MEMORY.md"}}
    await import_zip(api, zip_entries({**LEGACY, "install/openclaw.json": json.dumps(mapping)}))
    answer = await api.get("/api/catalog/old-capsule-notes/install/openclaw")
    assert {k: answer[k] for k in mapping} == mapping
    assert answer["schema"] == "amp.install.openclaw.v1"


# -- sync, versions and diffs ---------------------------------------------------------------


async def test_sync_appends_to_todays_file_as_a_new_patch_version(api):
    """Our events form: each event is the reference's line in today's file."""
    suite = await create(api)
    slug = suite["slug"]
    before = utc_days()
    first = await api.post(
        f"/api/memories/{slug}/sync",
        {
            "events": [
                {"summary": "fixed   the\nbuild", "event_type": "decision"},
                {"summary": "wrote tests", "tags": ["qa"]},
            ]
        },
    )
    days = before | utc_days()
    assert first["schema"] == "amp.memory-suite-sync.v1"
    assert (first["previous_version"], first["version"]["version"], first["events"]) == ("1.0.0", "1.0.1", 2)
    today = first["appended_to"]
    assert today in {f"memory/{d}.md" for d in days}
    assert first["suite"]["latest_version"] == first["package"]["version"] == "1.0.1"
    assert first["sync_event"]["text"] == "wrote tests"
    assert "update_notice" not in first

    files = unzip(await download(api, slug, "1.0.1"))
    text = files[today]
    assert text == f"# {today[7:17]}\n\n- [3/5] fixed the build\n- [3/5] wrote tests #qa\n"
    assert files["memory/2020-01-02.md"] == CREATE["work_memory"]["2020-01-02"]
    manifest = json.loads(files["manifest.json"])
    assert manifest["version"] == "1.0.1"
    assert manifest["files"] == {
        p: {"sha256": sha(t), "bytes": len(t.encode())} for p, t in files.items() if p != "manifest.json"
    }
    suite_manifest = json.loads(files["suite/manifest.json"])
    assert suite_manifest["version"] == "1.0.1"
    markdown = next(layer for layer in suite_manifest["content_layers"] if layer["layer"] == "markdown")
    assert today in markdown["files"]

    second = await api.post(
        f"/api/memories/{slug}/sync", {"text": "released", "event_type": "release", "importance": 4}
    )
    assert (second["previous_version"], second["version"]["version"]) == ("1.0.1", "1.0.2")
    if second["appended_to"] == today:  # unless the UTC day changed in between
        later = unzip(await download(api, slug, "1.0.2"))[today]
        assert later == text + "- [4/5] released\n"

    versions = await api.get(f"/api/catalog/{slug}/versions")
    assert versions["schema"] == "amp.memory-suite-versions.v1"
    assert [v["version"] for v in versions["versions"]] == ["1.0.0", "1.0.1", "1.0.2"]
    assert [v["changelog"] for v in versions["versions"]] == [
        "initial publish",
        "sync: decision, work_memory",
        "sync: release",
    ]
    assert all(v["created_by"] == api.agent["id"] for v in versions["versions"])
    # Every version is kept as it was.
    original = unzip(await download(api, slug, "1.0.0"))
    assert not any(p.startswith("memory/") and p != "memory/2020-01-02.md" for p in original)
    assert versions["versions"][0]["archive_sha256"] == suite["archive_sha256"]
    catalog = await api.get("/api/catalog?q=runbook")
    assert catalog["suites"][0]["latest_version"] == "1.0.2"


async def test_versions_and_diff(api):
    slug = (await create(api))["slug"]
    synced = await api.post(f"/api/memories/{slug}/sync", {"events": [{"summary": "shipped 1.3"}]})
    today = synced["appended_to"]

    diff = await api.get(f"/api/catalog/{slug}/diff?from=1.0.0&to=1.0.1")
    assert diff["schema"] == "amp.memory-suite-diff.v1"
    assert (diff["slug"], diff["from"], diff["to"]) == (slug, "1.0.0", "1.0.1")
    changes = {c["path"]: c for c in diff["files"]}
    assert sorted(changes) == sorted(["manifest.json", "suite/manifest.json", today])
    assert changes[today]["status"] == "added"
    assert changes["manifest.json"]["status"] == changes["suite/manifest.json"]["status"] == "changed"
    added = changes[today]["diff"]
    assert f"--- 1.0.0/{today}" in added and f"+++ 1.0.1/{today}" in added
    assert re.search(r"^\+- \[3/5\] shipped 1\.3$", added, re.M)
    assert '-  "version": "1.0.0",' in changes["manifest.json"]["diff"]
    assert '+  "version": "1.0.1",' in changes["manifest.json"]["diff"]

    back = await api.get(f"/api/catalog/{slug}/diff?from=1.0.1&to=1.0.0")
    assert {c["path"]: c["status"] for c in back["files"]}[today] == "removed"
    same = await api.get(f"/api/catalog/{slug}/diff?from=1.0.1&to=1.0.1")
    assert same["files"] == []


async def test_sync_with_a_secret_is_refused_and_stores_nothing(api):
    slug = (await create(api))["slug"]
    rows = suite_rows(api)
    data = await api.post(
        f"/api/memories/{slug}/sync", {"events": [{"summary": "db password = hunter2hunter2"}]}, status=400
    )
    assert "secrets" in data["error"]["message"] and "password" in data["error"]["message"]
    assert suite_rows(api) == rows


async def test_sync_without_events_is_refused(api):
    slug = (await create(api))["slug"]
    rows = suite_rows(api)
    data = await api.post(f"/api/memories/{slug}/sync", {"events": []}, status=None)
    assert data.get("error", {}).get("status") == 422, data
    assert suite_rows(api) == rows


async def test_importing_an_older_version_keeps_the_latest(api):
    await import_zip(api, valid_zip(version="1.0.0"))
    await import_zip(api, valid_zip(version="0.9.0"))
    described = await api.get("/api/catalog/evil-test-suite/suite")
    assert described["latest_version"] == "1.0.0"


async def test_owner_sync_is_never_gated(api):
    slug = (await create(api))["slug"]
    await publish(api)
    synced = await api.post(
        f"/api/memories/{slug}/sync",
        {"events": [{"summary": "by a person"}], "importance": 5},
        key=api.owner_key,
    )
    assert synced["version"]["version"] == "1.0.1" and "update_notice" not in synced


async def test_sync_is_gated_then_applied_once_on_resume(api):
    slug = (await create(api))["slug"]
    update = await publish(api)  # after the agent exists, so it is pending for it
    rows = suite_rows(api)
    body = {"events": [{"summary": "important change", "event_type": "decision"}], "importance": 5}

    response = await api.client.post(f"/api/memories/{slug}/sync", json=body, headers=api.auth())
    data = await response.json()
    assert response.status == 409, data
    assert data["schema"] == "amp.sync-interrupt.v1"
    assert data["error"]["type"] == "sync_interrupted"
    assert data["endpoint"] == "memory_suite_sync" and data["importance"] == 5
    assert [u["update_id"] for u in data["required_updates"]] == [update["update_id"]]
    intent_id = data["sync_intent_id"]
    assert suite_rows(api) == rows  # held back: nothing written
    intent = await api.get(f"/api/agent/sync-intents/{intent_id}")
    assert intent["status"] == "blocked" and intent["path"] == f"/api/memories/{slug}/sync"
    assert intent["body"]["events"] == body["events"]

    # A less important sync goes through, with a warning.
    low = await api.post(f"/api/memories/{slug}/sync", {"text": "minor", "importance": 3})
    assert low["version"]["version"] == "1.0.1"
    assert low["update_notice"]["schema"] == "amp.runtime-update-warning.v1"

    # Resuming before the ack keeps the intent and writes nothing.
    resume = f"/api/agent/sync-intents/{intent_id}/resume"
    rows = suite_rows(api)
    await api.post(resume, {}, status=409)
    assert suite_rows(api) == rows

    await api.post("/api/agent/updates/ack", {"update_ids": [update["update_id"]]})
    resumed = await api.post(resume, {})
    assert resumed["status"] == "resumed" and resumed["endpoint"] == "memory_suite_sync"
    result = resumed["result"]
    assert (result["previous_version"], result["version"]["version"]) == ("1.0.1", "1.0.2")
    versions = await api.get(f"/api/catalog/{slug}/versions")
    assert [v["version"] for v in versions["versions"]] == ["1.0.0", "1.0.1", "1.0.2"]
    text = unzip(await download(api, slug))[result["appended_to"]]
    assert text.count("- [5/5] important change") == 1

    # A second resume writes nothing again.
    rows = suite_rows(api)
    again = await api.post(resume, {}, status=409)
    assert "already resumed" in again["error"]["message"]
    assert suite_rows(api) == rows
    assert (await api.get(f"/api/agent/sync-intents/{intent_id}"))["status"] == "resumed"


async def test_invalid_gated_sync_is_refused_before_it_is_kept(api):
    slug = (await create(api))["slug"]
    await publish(api)
    before = api.store.conn.execute("select count(*) from sync_intents").fetchone()[0]
    for body in (
        {"events": [{"summary": "  "}], "importance": 5},
        {"text": " ", "importance": 5},
        {"text": "", "importance": 5},
        {"text": "x", "occurred_at": "soon", "importance": 5},
    ):
        response = await api.client.post(f"/api/memories/{slug}/sync", headers=api.auth(), json=body)
        assert response.status in (400, 422), await response.json()
    assert api.store.conn.execute("select count(*) from sync_intents").fetchone()[0] == before


# -- the catalog and context packs --------------------------------------------------------------


async def test_catalog_search_in_chinese_and_english(api):
    await api.post(
        "/api/memories",
        {
            "title": "原生记忆系统",
            "slug": "native-memory",
            "license": "MIT",
            "summary": "为代理保存长期记忆和工作记忆",
            "tags": ["记忆"],
        },
    )
    await api.post(
        "/api/memories",
        {
            "title": "Kubernetes Runbook",
            "license": "MIT",
            "summary": "Deploying clusters safely with rollbacks",
            "tags": ["ops"],
        },
    )

    async def found(query: str) -> list[str]:
        response = await api.client.get("/api/catalog", params={"q": query}, headers=api.auth())
        data = await response.json()
        assert response.status == 200, data
        assert data["schema"] == "amp.memory-catalog.v1" and data["query"] == query
        return [s["slug"] for s in data["suites"]]

    assert await found("记忆") == ["native-memory"]
    assert await found("长期记忆") == ["native-memory"]
    assert await found("系统") == ["native-memory"]
    assert await found("kubernetes") == ["kubernetes-runbook"]
    assert await found("cluster") == ["kubernetes-runbook"]  # clusters -> cluster
    assert await found("deploy rollback") == ["kubernetes-runbook"]
    assert await found("ops") == ["kubernetes-runbook"]  # tags are searchable
    assert await found("native") == ["native-memory"]  # so is the slug
    assert await found("zebra") == []
    everything = await api.get("/api/catalog")
    assert everything["query"] is None
    assert sorted(s["slug"] for s in everything["suites"]) == ["kubernetes-runbook", "native-memory"]
    entry = next(s for s in everything["suites"] if s["slug"] == "native-memory")
    assert entry == {
        "slug": "native-memory",
        "title": "原生记忆系统",
        "summary": "为代理保存长期记忆和工作记忆",
        "latest_version": "1.0.0",
        "legacy": False,
        "suite": "/api/catalog/native-memory/suite",
        "download": "/api/catalog/native-memory/download",
    }
    assert len((await api.get("/api/catalog?limit=1"))["suites"]) == 1
    for query in ['"', "*", "NEAR(", "-", "a OR", "AND", "title:x"]:  # FTS syntax is not run
        await found(query)


async def test_a_published_suite_never_enters_a_context_pack(api):
    memories = api.store.conn.execute("select count(*) from memory_records").fetchone()[0]
    await api.post(
        "/api/memories",
        {
            "title": "Zanzibarquux Handbook",
            "summary": "zanzibarquux 秘密配方",
            "license": "MIT",
            "long_term_markdown": "# zanzibarquux\n\nThe zanzibarquux rule.\n",
        },
    )
    await import_zip(api, zip_entries(seal({**valid_files(), "MEMORY.md": "zanzibarquux imported\n"})))
    assert api.store.conn.execute("select count(*) from memory_records").fetchone()[0] == memories

    pack = await api.bootstrap(task="zanzibarquux 秘密配方")
    text = json.dumps(pack, ensure_ascii=False)
    assert "zanzibarquux" not in text.lower() and "秘密配方" not in text
    assert "evil-test-suite" not in text
    query = await api.get(f"/api/workspaces/{pack['workspace_id']}/memory/query?q=zanzibarquux")
    assert query["items"] == [] and query["context"] == ""


# -- malicious archives: refused with a 4xx naming the problem, nothing stored ----------------


def with_files(**changes: str | None) -> Callable[[], bytes]:
    """A valid, sealed suite where some files were changed (None: removed) before sealing."""

    def build() -> bytes:
        files = {**valid_files()}
        for path, text in changes.items():
            if text is None:
                files.pop(path, None)
            else:
                files[path] = text
        return zip_entries(seal(files))

    return build


def with_manifest(**fields: Any) -> Callable[[], bytes]:
    """A valid suite whose manifest.json has these fields changed (None: removed)."""

    def build() -> bytes:
        manifest = base_manifest()
        for name, value in fields.items():
            if value is None:
                manifest.pop(name, None)
            else:
                manifest[name] = value
        return zip_entries(seal(valid_files(), manifest))

    return build


def sealed_plus(*extra: Entry) -> Callable[[], bytes]:
    """The valid sealed suite, then extra raw entries (not listed in the manifest)."""
    return lambda: zip_entries(list(seal(valid_files()).items()) + list(extra))


def replaced(path: str, data: bytes | str, *, attr: int | None = None) -> Callable[[], bytes]:
    """The valid sealed suite with one entry's stored bytes replaced after sealing."""

    def build() -> bytes:
        entries: list[Entry] = []
        for name, text in seal(valid_files()).items():
            if name == path:
                entries.append((name, data) if attr is None else (name, data, attr))
            else:
                entries.append((name, text))
        return zip_entries(entries)

    return build


def renamed(old: str, new: str) -> Callable[[], bytes]:
    def build() -> bytes:
        return zip_entries([(new if n == old else n, t) for n, t in seal(valid_files()).items()])

    return build


def sealed_with_manifest_text(text: str) -> Callable[[], bytes]:
    return lambda: zip_entries({**valid_files(), "manifest.json": text})


def many_files(count: int) -> Callable[[], bytes]:
    """A valid suite of `count` entries in all (manifest.json included): extra work-memory days."""

    def build() -> bytes:
        files = {**valid_files()}
        day = datetime(2024, 1, 1).toordinal()
        while len(files) + 1 < count:
            files[f"memory/{datetime.fromordinal(day):%Y-%m-%d}.md"] = "- a day\n"
            day += 1
        return zip_entries(seal(files))

    return build


def bomb(size: int, count: int = 1) -> Callable[[], bytes]:
    """`count` Markdown files of `size` bytes of one letter each (tiny once compressed)."""

    def build() -> bytes:
        files = {**valid_files()}
        for i in range(count):
            files[f"memory/2025-02-{i + 1:02d}.md"] = "a" * size
        return zip_entries(seal(files))

    return build


def over_the_upload_limit() -> bytes:
    size = 15 * 1024 * 1024 + 1
    noise = hashlib.sha256(b"seed").digest() * (size // 64 + 1)  # stored, not compressed
    return zip_entries(
        seal({**valid_files(), "MEMORY.md": noise.hex()[:size]}), compression=zipfile.ZIP_STORED
    )


def patched(build: Callable[[], bytes], patch: Callable[[bytearray], None]) -> Callable[[], bytes]:
    def run() -> bytes:
        data = bytearray(build())
        patch(data)
        return bytes(data)

    return run


def _headers(data: bytearray, signature: bytes) -> list[int]:
    found, at = [], data.find(signature)
    while at != -1:
        found.append(at)
        at = data.find(signature, at + 4)
    return found


def _corrupt_first_body(data: bytearray) -> None:
    at = _headers(data, b"PK\x03\x04")[0]
    start = at + 30 + int.from_bytes(data[at + 26 : at + 28], "little")
    for i in range(start, start + 8):
        data[i] ^= 0xFF


def _flip_first_stored_byte(data: bytearray) -> None:
    at = _headers(data, b"PK\x03\x04")[0]
    data[at + 30 + int.from_bytes(data[at + 26 : at + 28], "little")] ^= 0x01


def _encrypted(data: bytearray) -> None:
    for at in _headers(data, b"PK\x03\x04"):
        data[at + 6] |= 1
    for at in _headers(data, b"PK\x01\x02"):
        data[at + 8] |= 1


def _method_99(data: bytearray) -> None:
    for at in _headers(data, b"PK\x03\x04"):
        data[at + 8] = 99
    for at in _headers(data, b"PK\x01\x02"):
        data[at + 10] = 99


def _lying_size(data: bytearray) -> None:
    """Every entry claims to be 10 bytes uncompressed, whatever it inflates to."""
    for at in _headers(data, b"PK\x03\x04"):
        data[at + 22 : at + 26] = (10).to_bytes(4, "little")
    for at in _headers(data, b"PK\x01\x02"):
        data[at + 24 : at + 28] = (10).to_bytes(4, "little")


SYMLINK = (stat.S_IFLNK | 0o777) << 16
AWS = "AKIA" + "ABCDEFGHIJKLMNOP"
PRIVATE = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"
OPENAI = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2"
GITHUB = "ghp_" + "a" * 36
SURROGATE_TITLE = json.dumps(  # ASCII JSON: the title is the escape \ud800
    {**base_manifest(title="\ud800 broken"), "files": {p: sha(t) for p, t in valid_files().items()}}
)

MALICIOUS: list[tuple[str, Callable[[], bytes], int, tuple[str, ...]]] = [
    # (id, archive builder, status, words the message must contain)
    ("traversal", sealed_plus(("../MEMORY.md", "x")), 400, ("path traversal", "../MEMORY.md")),
    ("nested-traversal", sealed_plus(("a/../../MEMORY.md", "x")), 400, ("path traversal",)),
    ("memory-traversal", renamed("memory/2026-01-02.md", "memory/../../x.md"), 400, ("path traversal",)),
    ("dot-segment", sealed_plus(("./MEMORY.md", "x")), 400, ("path traversal",)),
    ("absolute-unix", sealed_plus(("/etc/x", "x")), 400, ("absolute path", "/etc/x")),
    ("absolute-windows", sealed_plus(("C:\\x", "x")), 400, ("absolute path",)),
    ("absolute-drive-slash", sealed_plus(("C:/x", "x")), 400, ("absolute path",)),
    ("backslash", renamed("memory/2026-01-02.md", "memory\\2026-01-02.md"), 400, ("backslash",)),
    ("symlink", replaced("MEMORY.md", "/etc/passwd", attr=SYMLINK), 400, ("links", "MEMORY.md")),
    ("duplicate-name", sealed_plus(("MEMORY.md", "# twin\n")), 400, ("duplicate", "MEMORY.md")),
    ("duplicate-other-case", sealed_plus(("Memory.md", "# twin\n")), 400, ("duplicate", "Memory.md")),
    ("over-5000-files", many_files(5001), 413, ("5001 files", "5000")),
    ("file-bomb", bomb(16 * 1024 * 1024 + 1), 413, ("16777216 bytes uncompressed",)),
    ("total-bomb", bomb(16 * 1024 * 1024, count=5), 413, ("67108864 bytes uncompressed",)),
    ("upload-over-limit", over_the_upload_limit, 413, ("15728640",)),
    ("unlisted-script", sealed_plus(("run.sh", "#!/bin/sh\nrm -rf ~\n")), 400, ("not listed: run.sh",)),
    ("name-with-space", sealed_plus(("my notes.md", "x")), 400, ("my notes.md", "ASCII")),
    ("name-not-ascii", sealed_plus(("笔记.md", "x")), 400, ("ASCII",)),
    ("empty-segment", sealed_plus(("memory//x.md", "x")), 400, ("empty path segment",)),
    ("no-memory", with_files(**{"MEMORY.md": " \n", "memory/2026-01-02.md": None}), 400, ("no memory",)),
    ("title-one-letter", with_manifest(title="x"), 400, ("'title'",)),
    ("non-utf8-markdown", replaced("MEMORY.md", b"caf\xe9 \xff\xfe"), 400, ("MEMORY.md", "not UTF-8")),
    (
        "non-utf8-json",
        replaced("install/openclaw.json", b'{"a": "\xff"}'),
        400,
        ("install/openclaw.json", "not UTF-8"),
    ),
    ("no-manifest", lambda: zip_entries(valid_files()), 400, ("no manifest.json",)),
    (
        "invalid-json-manifest",
        sealed_with_manifest_text('{"schema": "amp.memory.v1",'),
        400,
        ("manifest.json", "not valid JSON"),
    ),
    ("manifest-not-object", sealed_with_manifest_text("[1, 2]"), 400, ("manifest.json", "JSON object")),
    (
        "invalid-json-suite-manifest",
        with_files(**{"suite/manifest.json": "{nope"}),
        400,
        ("suite/manifest.json", "not valid JSON"),
    ),
    (
        "invalid-json-openclaw",
        with_files(**{"install/openclaw.json": "nope"}),
        400,
        ("install/openclaw.json", "not valid JSON"),
    ),
    ("wrong-schema", with_manifest(schema="amp.memory.v2"), 400, ("amp.memory.v1",)),
    ("missing-schema", with_manifest(schema=None), 400, ("amp.memory.v1",)),
    (
        "wrong-suite-schema",
        with_files(**{"suite/manifest.json": '{"schema": "amp.suite.v0"}'}),
        400,
        ("amp.memory-suite.v1",),
    ),
    ("semver-two-parts", with_manifest(version="1.0"), 400, ("version", "semantic version")),
    ("semver-v-prefix", with_manifest(version="v1.0.0"), 400, ("semantic version",)),
    ("semver-number", with_manifest(version=1), 400, ("semantic version",)),
    ("license-missing", with_manifest(license=None), 400, ("'license'",)),
    ("license-empty", with_manifest(license=""), 400, ("'license'",)),
    ("license-blank", with_manifest(license="   "), 400, ("'license'",)),
    ("title-missing", with_manifest(title=None), 400, ("'title'",)),
    ("provenance-empty", with_manifest(provenance={}), 400, ("provenance", "source")),
    ("provenance-without-source", with_manifest(provenance={"author": "x"}), 400, ("provenance", "source")),
    ("provenance-string", with_manifest(provenance="tests"), 400, ("provenance",)),
    ("provenance-missing", with_manifest(provenance=None), 400, ("provenance",)),
    (
        "sha256-mismatch",
        replaced("MEMORY.md", "# tampered after sealing\n"),
        400,
        ("sha256 mismatch: MEMORY.md",),
    ),
    (
        "unlisted-file",
        lambda: zip_entries(
            seal(valid_files(), listed={p: sha(t) for p, t in valid_files().items() if p != "README.md"})
        ),
        400,
        ("not listed: README.md",),
    ),
    (
        "listed-but-absent",
        lambda: zip_entries(
            seal(
                {p: t for p, t in valid_files().items() if p != "DREAMS.md"},
                listed={p: sha(t) for p, t in valid_files().items()},
            )
        ),
        400,
        ("listed but absent: DREAMS.md",),
    ),
    ("files-not-a-map", with_manifest(files=["MEMORY.md"]), 400, ("'files'",)),
    (
        "secret-aws",
        with_files(**{"MEMORY.md": f"key {AWS}\n"}),
        400,
        ("secrets", "MEMORY.md", "AWS access key"),
    ),
    (
        "secret-private-key",
        with_files(**{"DREAMS.md": PRIVATE}),
        400,
        ("secrets", "DREAMS.md", "private key"),
    ),
    (
        "secret-openai",
        with_files(**{"memory/2026-01-02.md": f"use {OPENAI}\n"}),
        400,
        ("secrets", "OpenAI-style API key"),
    ),
    ("secret-github", with_files(**{"README.md": f"token {GITHUB}\n"}), 400, ("secrets", "GitHub token")),
    (
        "secret-password",
        with_files(**{"MEMORY.md": "password = hunter2hunter2\n"}),
        400,
        ("secrets", "password assignment"),
    ),
    ("secret-in-manifest", with_manifest(summary=f"contact {AWS}"), 400, ("secrets", "manifest.json")),
    ("bad-slug", with_manifest(slug="Bad_Slug"), 400, ("slug", "Bad_Slug")),
    ("not-a-zip", lambda: b"this is not a zip archive at all", 400, ("not a zip",)),
    ("truncated-zip", lambda: valid_zip()[:200], 400, ("not a zip",)),
    ("empty-body", lambda: b"", 422, ("send the suite zip",)),
    # Archives that break the zip format itself.
    pytest.param(
        "corrupt-deflate-data", patched(valid_zip, _corrupt_first_body), 400, (), id="corrupt-deflate-data"
    ),
    pytest.param(
        "bad-crc",
        patched(
            lambda: zip_entries(seal(valid_files()), compression=zipfile.ZIP_STORED), _flip_first_stored_byte
        ),
        400,
        (),
        id="bad-crc",
    ),
    pytest.param("encrypted-entry", patched(valid_zip, _encrypted), 400, (), id="encrypted-entry"),
    pytest.param("unknown-compression", patched(valid_zip, _method_99), 400, (), id="unknown-compression"),
    pytest.param(
        "lying-uncompressed-size",
        patched(bomb(3 * 1024 * 1024), _lying_size),
        (413, 400),
        (),
        id="lying-uncompressed-size",
    ),
    pytest.param(
        "deeply-nested-manifest",
        sealed_with_manifest_text("[" * 100_000 + "]" * 100_000),
        400,
        ("manifest.json",),
        id="deeply-nested-manifest",
    ),
    pytest.param(
        "lone-surrogate-in-manifest",
        sealed_with_manifest_text(SURROGATE_TITLE),
        400,
        ("manifest.json",),
        id="lone-surrogate-in-manifest",
    ),
    pytest.param("tags-not-a-list", with_manifest(tags=5), 400, ("tags",), id="tags-not-a-list"),
    pytest.param(
        "semver-trailing-newline",
        with_manifest(version="1.0.0\n"),
        400,
        ("semantic version",),
        id="semver-trailing-newline",
    ),
    pytest.param(
        "slug-trailing-newline",
        with_manifest(slug="evil-test-suite\n"),
        400,
        ("slug",),
        id="slug-trailing-newline",
    ),
]


def _case(case):
    return case if hasattr(case, "marks") else pytest.param(*case, id=case[0])


@pytest.mark.parametrize("name,build,status,mentions", [_case(c) for c in MALICIOUS])
async def test_malicious_archive_is_refused_and_nothing_is_stored(api, name, build, status, mentions):
    await import_zip(api, valid_zip(slug="already-here"))  # something stored before
    rows = suite_rows(api)
    latest = api.store.conn.execute("select slug, latest_version from suites").fetchall()
    got, data = await import_zip(api, build(), status=None)
    assert got in (status if isinstance(status, tuple) else (status,)), data
    assert_envelope(data, got, "/api/memories/import")
    for word in mentions:
        assert word in data["error"]["message"], data["error"]["message"]
    assert suite_rows(api) == rows
    assert api.store.conn.execute("select slug, latest_version from suites").fetchall() == latest


@pytest.mark.parametrize(
    "build",
    [
        valid_zip,
        with_files(),
        with_manifest(),
        sealed_plus(),
        renamed("x", "y"),
        many_files(200),
        bomb(2 * 1024 * 1024, count=3),
        lambda: zip_entries(seal(valid_files()), compression=zipfile.ZIP_STORED),
        # What the reference accepts and we used to refuse: other members (kept, not read), any
        # memory/<name>.md, a version with leading zeros, no version (1.0.0), no files map.
        with_files(**{"run.sh": "#!/bin/sh\necho hi\n"}),
        with_files(**{"memory/notes.md": "x"}),
        with_files(**{"suite/extra.json": "{}"}),
        with_files(**{"memory/2026-01-02.md.exe": "x"}),
        with_manifest(version="01.0.0"),
        with_manifest(version=None),
        lambda: zip_entries({**valid_files(), "manifest.json": json.dumps(base_manifest())}),
        with_files(**{"MEMORY.md": None}),
    ],
    ids=[
        "valid",
        "with-files",
        "with-manifest",
        "sealed-plus",
        "renamed",
        "200-files",
        "3-files-of-2-MiB",
        "stored",
        "other-member",
        "memory-notes",
        "suite-extra",
        "double-extension",
        "semver-leading-zero",
        "no-version",
        "no-files-map",
        "work-memory-only",
    ],
)
async def test_the_valid_base_of_the_corpus_is_accepted(api, build):
    """Control: each malicious archive above is one change away from one of these."""
    data = build()
    _, suite = await import_zip(api, data)
    assert suite["slug"] == "evil-test-suite"
    assert suite["version"]["version"] in ("1.0.0", "01.0.0")
    assert suite_rows(api)["suite_versions"] == 1
    assert await download(api, "evil-test-suite") == data  # kept verbatim
