"""Memory suites on the MemoryCloud reference's wire contract (issue #14, items 2-5): its field
names, answer shapes, archive members, legacy zips and import rules, against the real app and
store with real zips (shared/contracts: memories_create, memories_sync, memories_import,
archives, catalog_*).

Acceptance: a suite created, synced, downloaded and imported again with the reference's field
names keeps every layer (MEMORY.md, DREAMS.md, work memory days, instructions); a legacy zip
imports.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
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
from tests.daemon.test_updates_and_sync import publish

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

TYPES = {"string": str, "integer": int, "boolean": bool, "array": list, "object": dict}
PACKAGE_KEYS = {
    "id": "string",
    "slug": "string",
    "title": "string",
    "summary": "string",
    "persona_type": "string",
    "visibility": "string",
    "license": "string",
    "tags": "array",
    "price_cents": "integer",
    "status": "string",
    "owner": "object",
    "version": "string",
    "sha256": "string",
    "size_bytes": "integer",
    "install_count": "integer",
    "download_count": "integer",
    "suite": "object",
    "created_at": "string",
    "updated_at": "string",
}
VERSION_KEYS = {"version_id": "string", "version": "string", "sha256": "string", "size_bytes": "integer"}
BUILT_MEMBERS = {
    "manifest.json",
    "suite/manifest.json",
    "MEMORY.md",
    "DREAMS.md",
    "agent.instructions.md",
    "README.md",
    "install/openclaw.json",
}
MANIFEST_KEYS = {
    "author",
    "compatibility",
    "created_at",
    "files",
    "license",
    "memory_ontology",
    "memory_tools",
    "persona_type",
    "provenance",
    "safety",
    "schema",
    "suite",
    "summary",
    "tags",
    "title",
    "version",
}
SUITE_MANIFEST_KEYS = {
    "compatibility",
    "install_lifecycle",
    "license",
    "ontology",
    "provenance",
    "schema",
    "suite_id",
    "summary",
    "title",
    "tools",
    "version",
}

REFERENCE = {
    "title": "Reference Handbook",
    "summary": "a suite sent with the reference's names",
    "persona_type": "assistant",
    "visibility": "unlisted",
    "license": "MIT",
    "tags": [" Ops ", "ops", "RELEASE", "x" * 40],
    "version": "2.3.4",
    "price_cents": 250,
    "memory_md": "# Handbook\n\n- Deploys happen on Tuesdays\n",
    "dreams_md": "# Reflections\n\nCalm releases are small releases.\n",
    "work_memory": [
        {"date": "2026-11-30", "content": "# 2026-11-30\n\n- shipped v2\n"},
        {"date": "2026-12-01", "text": "- rolled back v2.1\n"},
    ],
    "instructions_md": "# Install\n\nRead MEMORY.md first.\n",
    "provenance": {"source_type": "self_authored", "author": "ops team"},
}


def has_keys(value: dict[str, Any], spec: dict[str, str]) -> None:
    missing = {k for k in spec if k not in value}
    assert not missing, f"missing keys {missing} in {sorted(value)}"
    wrong = {
        k: type(value[k]).__name__
        for k, t in spec.items()
        if not isinstance(value[k], TYPES[t]) or (t == "integer" and isinstance(value[k], bool))
    }
    assert not wrong, f"wrong types {wrong}"


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def unzip(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def make_zip(members: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


LEGACY_MANIFEST = {
    "schema": "amp.memory.v1",
    "title": "Legacy Notes",
    "version": "1.0.0",
    "license": "CC-BY-4.0",
    "provenance": {"source_type": "self_authored"},
}


def legacy(manifest: dict[str, Any] | None = None, **members: str | bytes) -> bytes:
    files: dict[str, str | bytes] = {"manifest.json": json.dumps(manifest or LEGACY_MANIFEST)}
    files.update(members or {"MEMORY.md": "# Legacy\n\n- Prefer small commits\n"})
    return make_zip(files)


async def upload(
    api,
    data: bytes,
    *,
    path: str = "/api/memories/import",
    query: str = "",
    key: str | None = None,
    client: TestClient | None = None,
    auth: bool = True,
) -> tuple[int, Any]:
    form = FormData()
    form.add_field("file", data, filename="suite.zip", content_type="application/zip")
    headers = api.auth(key) if auth else {}
    response = await (client or api.client).post(path + query, data=form, headers=headers)
    return response.status, await response.json()


async def download(api, slug: str, *, key: str | None = None, client: TestClient | None = None) -> bytes:
    response = await (client or api.client).get(f"/api/catalog/{slug}/download", headers=api.auth(key))
    assert response.status == 200, await response.text()
    assert response.content_type == "application/zip"
    return await response.read()


def rows(api, table: str = "suite_versions") -> int:
    return api.store.conn.execute(f"select count(*) from {table}").fetchone()[0]


# -- create with the reference's fields ---------------------------------------------------------


async def test_create_answers_package_and_version_and_builds_every_member(api):
    created = await api.post("/api/memories", REFERENCE)
    package, version = created["package"], created["version"]
    has_keys(package, PACKAGE_KEYS)
    has_keys(version, VERSION_KEYS)
    assert created["slug"] == package["slug"] == "reference-handbook"  # ours kept beside
    assert (package["visibility"], package["persona_type"], package["price_cents"]) == (
        "unlisted",
        "assistant",
        250,
    )
    assert package["license"] == "MIT" and package["status"] == "published"
    assert package["tags"] == ["ops", "release", "x" * 32]
    assert package["owner"]["handle"] == "test-agent"
    assert package["suite"]["schema"] == "amp.memory-suite.v1"
    assert package["suite"]["suite_url"] == "/api/catalog/reference-handbook/suite"
    assert version["version"] == package["version"] == "2.3.4"

    data = await download(api, "reference-handbook")
    assert version["sha256"] == package["sha256"] == sha(data)  # of the whole zip
    assert version["size_bytes"] == len(data)
    members = unzip(data)
    assert set(members) == BUILT_MEMBERS | {"memory/2026-11-30.md", "memory/2026-12-01.md"}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
    assert [i.filename for i in infos] == sorted(members)
    assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in infos)
    text = {name: raw.decode() for name, raw in members.items()}
    assert text["MEMORY.md"] == REFERENCE["memory_md"]
    assert text["DREAMS.md"] == REFERENCE["dreams_md"]
    assert text["agent.instructions.md"] == REFERENCE["instructions_md"]
    assert text["memory/2026-11-30.md"] == "# 2026-11-30\n\n- shipped v2\n"
    assert text["memory/2026-12-01.md"] == "- rolled back v2.1\n"

    manifest = json.loads(text["manifest.json"])
    assert MANIFEST_KEYS <= set(manifest)
    assert manifest["schema"] == "amp.memory.v1" and manifest["author"] == {"handle": "test-agent"}
    assert manifest["provenance"] == REFERENCE["provenance"]
    assert manifest["files"] == {
        name: {"sha256": sha(raw), "bytes": len(raw)}
        for name, raw in members.items()
        if name != "manifest.json"
    }
    assert set(manifest["compatibility"]) >= {
        "codex_skill_runtime",
        "generic_agent",
        "import_targets",
        "memory_backends",
        "openclaw",
        "tool_install",
    }
    assert set(manifest["safety"]) >= {
        "claims_to_be_original_person",
        "consent_required_for_real_person",
        "install_boundary",
    }
    assert datetime.strptime(manifest["created_at"][:19], "%Y-%m-%dT%H:%M:%S")
    assert manifest["created_at"].endswith("Z")
    suite_manifest = json.loads(text["suite/manifest.json"])
    assert manifest["suite"] == suite_manifest  # an embedded copy
    assert SUITE_MANIFEST_KEYS <= set(suite_manifest)
    assert suite_manifest["install_lifecycle"][0] == "inspect_suite_manifest"
    assert len(suite_manifest["install_lifecycle"]) == 8
    assert [t["id"] for t in suite_manifest["tools"]] == [
        "openclaw_mapping",
        "memory_tool_installer",
        "capsule_installer",
    ]
    assert [(c["id"], c["path"]) for c in suite_manifest["ontology"]["components"]] == [
        ("long_term_markdown", "MEMORY.md"),
        ("working_markdown", "memory/*.md"),
        ("reflection_markdown", "DREAMS.md"),
    ]
    assert suite_manifest["suite_id"] == "reference-handbook"
    openclaw = json.loads(text["install/openclaw.json"])
    assert set(openclaw) == {"activation_prompt", "merge", "required_tools", "suite_schema", "target"}
    assert openclaw["merge"] == {
        "long_term": "MEMORY.md",
        "work_memory": "memory/*.md",
        "reflections": "DREAMS.md",
    }
    assert openclaw["required_tools"] == ["memory_tool_installer", "capsule_installer"]


async def test_dreams_md_is_written_even_empty_and_defaults_follow_the_reference(api):
    created = await api.post(
        "/api/memories", {"title": "Bare Suite", "summary": "only memory", "memory_md": "- one fact\n"}
    )
    members = unzip(await download(api, created["package"]["slug"]))
    assert set(members) == BUILT_MEMBERS
    assert members["DREAMS.md"] == b""
    assert members["agent.instructions.md"].strip()  # generated install notes
    manifest = json.loads(members["manifest.json"])
    assert manifest["license"] == "CC-BY-4.0" and manifest["version"] == "1.0.0"
    assert manifest["provenance"] == {"source_type": "self_authored", "source": "memorycloud-companion"}
    package = created["package"]
    assert (package["visibility"], package["persona_type"], package["price_cents"]) == ("public", "agent", 0)


async def test_our_earlier_names_are_aliases(api):
    created = await api.post(
        "/api/memories",
        {
            "title": "Alias Suite",
            "summary": "our names",
            "license": "MIT",
            "long_term_markdown": "- long term\n",
            "dreams_markdown": "- a dream\n",
            "instructions_markdown": "- install me\n",
            "work_memory": {"2026-01-02": "- a day\n"},
        },
    )
    members = unzip(await download(api, created["slug"]))
    assert (
        members["MEMORY.md"],
        members["DREAMS.md"],
        members["agent.instructions.md"],
        members["memory/2026-01-02.md"],
    ) == (b"- long term\n", b"- a dream\n", b"- install me\n", b"- a day\n")


async def test_work_memory_text_without_date_is_today_and_blank_days_are_skipped(api):
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    created = await api.post(
        "/api/memories",
        {
            "title": "Today Suite",
            "summary": "work memory today",
            "memory_md": "- m\n",
            "work_memory": [{"text": "- did a thing\n"}, {"date": "2026-01-05", "content": "  \n"}],
        },
    )
    members = unzip(await download(api, created["slug"]))
    days = {n for n in members if n.startswith("memory/")}
    assert days <= {f"memory/{today}.md", f"memory/{datetime.now(UTC):%Y-%m-%d}.md"}
    assert len(days) == 1 and members[days.pop()] == b"- did a thing\n"


@pytest.mark.parametrize(
    "body,status,field",
    [
        ({"visibility": "secret"}, 400, "visibility"),
        ({"visibility": "PUBLIC"}, 400, "visibility"),
        ({"title": "x"}, 422, "title"),
        ({"title": "t" * 121}, 422, "title"),
        ({"summary": "s" * 801}, 422, "summary"),
        ({"price_cents": -1}, 422, "price_cents"),
        ({"price_cents": 1_000_000}, 422, "price_cents"),
        ({"persona_type": "p" * 41}, 422, "persona_type"),
        ({"license": "l" * 81}, 422, "license"),
        ({"version": "1.0"}, 422, "version"),
        ({"memory_md": "m" * 500_001}, 422, "memory_md"),
        ({"work_memory": [{"date": "2026-13-01", "content": "x"}]}, 422, "work_memory[0].date"),
        ({"work_memory": [{"date": "../../x", "content": "x"}]}, 422, "work_memory[0].date"),
        ({"work_memory": [{"date": "2026-01-01"}]}, 422, "work_memory[0]"),
        ({"work_memory": ["x"]}, 422, "work_memory[0]"),
        ({"provenance": {"author": "me"}}, 422, "provenance"),
        ({"manifest": {"schema": "amp.memory.v2"}}, 422, "manifest"),
    ],
    ids=lambda v: json.dumps(v)[:40] if isinstance(v, dict) else str(v),
)
async def test_create_refusals_have_the_reference_status(api, body, status, field):
    before = rows(api)
    data = await api.post("/api/memories", {**REFERENCE, **body}, status=status)
    assert data["detail"]["field"] == field, data
    assert rows(api) == before


async def test_a_supplied_manifest_gives_title_license_and_version(api):
    created = await api.post(
        "/api/memories",
        {
            **REFERENCE,
            "visibility": "public",
            "manifest": {
                **LEGACY_MANIFEST,
                "title": "From The Manifest",
                "version": "3.0.0",
                "license": "CC0-1.0",
                "summary": "ignored",
                "tags": ["ignored"],
            },
        },
    )
    package = created["package"]
    assert (package["title"], package["version"], package["license"]) == (
        "From The Manifest",
        "3.0.0",
        "CC0-1.0",
    )
    assert package["summary"] == REFERENCE["summary"]  # summary and tags from the request
    assert package["tags"] == ["ops", "release", "x" * 32]


async def test_same_title_other_content_gets_a_new_slug_and_a_retry_gets_the_same(api):
    first = await api.post("/api/memories", REFERENCE)
    again = await api.post("/api/memories", REFERENCE)
    assert again["package"]["slug"] == first["package"]["slug"] == "reference-handbook"
    assert again["version"] == first["version"]
    other = await api.post("/api/memories", {**REFERENCE, "memory_md": "- other\n"})
    assert other["package"]["slug"] == "reference-handbook-2"
    third = await api.post("/api/memories", {**REFERENCE, "memory_md": "- third\n"})
    assert third["package"]["slug"] == "reference-handbook-3"
    # Another key sending the same content makes its own package (as in the reference).
    key = api.new_agent("second-agent")
    theirs = await api.post("/api/memories", REFERENCE, key=key)
    assert theirs["package"]["slug"] == "reference-handbook-4"


# -- sync with the reference's body ----------------------------------------------------------


async def test_sync_appends_the_reference_line_and_starts_a_new_day(api):
    slug = (await api.post("/api/memories", REFERENCE))["package"]["slug"]
    first = await api.post(
        f"/api/memories/{slug}/sync",
        {
            "text": "released   v2.2\nto staging",
            "occurred_at": "2026-11-30T09:00:00Z",
            "importance": 2,
            "tags": ["release", "staging"],
        },
    )
    assert set(first) >= {"package", "version", "sync_event"} and "update_notice" not in first
    has_keys(first["version"], VERSION_KEYS)
    assert first["version"]["version"] == first["package"]["version"] == "2.3.5"
    assert first["sync_event"] == {
        "event_type": "work_memory",
        "text": "released v2.2 to staging",
        "occurred_at": "2026-11-30T09:00:00Z",
        "importance": 2,
        "tags": ["release", "staging"],
    }
    second = await api.post(
        f"/api/memories/{slug}/sync",
        {"text": "a new day", "occurred_at": "2027-01-02", "event_type": "decision"},
    )
    assert second["version"]["version"] == "2.3.6"
    data = await download(api, slug)
    assert sha(data) == second["version"]["sha256"] and len(data) == second["version"]["size_bytes"]
    members = unzip(data)
    assert members["memory/2026-11-30.md"].decode() == (
        "# 2026-11-30\n\n- shipped v2\n- [2/5] released v2.2 to staging #release #staging\n"
    )
    assert members["memory/2027-01-02.md"].decode() == "# 2027-01-02\n\n- [3/5] a new day\n"
    assert set(members) >= BUILT_MEMBERS
    # Without occurred_at the event is today's (UTC).
    before = datetime.now(UTC).strftime("%Y-%m-%d")
    third = await api.post(f"/api/memories/{slug}/sync", {"text": "now"})
    assert third["sync_event"]["occurred_at"][:10] in {
        before,
        datetime.now(UTC).strftime("%Y-%m-%d"),
    }
    versions = await api.get(f"/api/catalog/{slug}/versions")
    assert [v["version"] for v in versions["items"]] == ["2.3.7", "2.3.6", "2.3.5", "2.3.4"]
    assert [v["changelog"] for v in versions["items"]] == [
        "sync: work_memory",
        "sync: decision",
        "sync: work_memory",
        "initial publish",
    ]
    for item in versions["items"]:
        has_keys(
            item,
            {
                "id": "string",
                "version": "string",
                "sha256": "string",
                "size_bytes": "integer",
                "changelog": "string",
                "created_at": "string",
            },
        )
    has_keys(versions["package"], PACKAGE_KEYS)


@pytest.mark.parametrize(
    "body,status",
    [
        ({"text": ""}, 422),
        ({}, 422),
        ({"text": "   \n "}, 400),
        ({"text": "x", "importance": 0}, 422),
        ({"text": "x", "importance": 6}, 422),
        ({"text": "x" * 20_001}, 422),
        ({"text": "x", "occurred_at": "yesterday"}, 422),
        ({"text": "x", "tags": "a"}, 422),
        ({"text": "x", "events": [{"summary": "y"}]}, 422),
    ],
)
async def test_sync_refusals_have_the_reference_status(api, body, status):
    slug = (await api.post("/api/memories", REFERENCE))["package"]["slug"]
    before = rows(api)
    await api.post(f"/api/memories/{slug}/sync", body, status=status)
    assert rows(api) == before


async def test_sync_of_another_keys_suite_is_404(api):
    slug = (await api.post("/api/memories", REFERENCE))["package"]["slug"]
    other = api.new_agent("other-agent")
    await api.post(f"/api/memories/{slug}/sync", {"text": "not mine"}, key=other, status=404)
    # The owner (the person) may sync any suite.
    synced = await api.post(f"/api/memories/{slug}/sync", {"text": "by the person"}, key=api.owner_key)
    assert synced["version"]["version"] == "2.3.5"


async def test_sync_is_gated_before_the_suite_is_looked_up(api):
    await publish(api)  # a required update is now pending for the agent
    intents = rows(api, "sync_intents")
    response = await api.client.post(
        "/api/memories/no-such-suite/sync", headers=api.auth(), json={"text": "important", "importance": 4}
    )
    body = await response.json()
    assert response.status == 409, body
    assert body["detail"]["schema"] == "amp.sync-interrupt.v1"
    assert rows(api, "sync_intents") == intents + 1
    # Below the threshold the write goes on (and here finds no suite).
    await api.post("/api/memories/no-such-suite/sync", {"text": "minor", "importance": 3}, status=404)


async def test_a_gated_sync_below_the_threshold_carries_the_update_notice(api):
    slug = (await api.post("/api/memories", REFERENCE))["package"]["slug"]
    await publish(api)
    synced = await api.post(f"/api/memories/{slug}/sync", {"text": "minor"})
    assert synced["update_notice"]["schema"] == "amp.runtime-update-warning.v1"
    blocked = await api.post(f"/api/memories/{slug}/sync", {"text": "major", "importance": 5}, status=409)
    intent = await api.get(f"/api/agent/sync-intents/{blocked['detail']['sync_intent_id']}")
    assert intent["body"]["text"] == "major" and intent["status"] == "blocked"


# -- the acceptance round trip -----------------------------------------------------------------


async def test_create_sync_download_import_keeps_every_layer(api, tmp_path: Path):
    slug = (await api.post("/api/memories", {**REFERENCE, "visibility": "public"}))["package"]["slug"]
    await api.post(
        f"/api/memories/{slug}/sync",
        {
            "text": "learned to canary first",
            "occurred_at": "2026-12-01T10:00:00Z",
            "importance": 3,
            "tags": ["lesson"],
        },
    )
    data = await download(api, slug)

    app = create_app(Settings(), resolve_paths({"MEMORYCLOUD_HOME": str(tmp_path / "second")}))
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        owner_key = open_secret_store(app[keys.PATHS].secrets_file).get(OWNER_KEY_SECRET)
        status, imported = await upload(api, data, query="?visibility=private", key=owner_key, client=client)
        assert status == 200, imported
        has_keys(imported["package"], PACKAGE_KEYS)
        has_keys(imported["version"], VERSION_KEYS)
        assert imported["package"]["visibility"] == "private"
        assert imported["version"]["sha256"] == sha(data)
        again = await download(api, imported["package"]["slug"], key=owner_key, client=client)
        assert again == data  # stored verbatim
        layers = unzip(again)
        assert layers["MEMORY.md"].decode() == REFERENCE["memory_md"]
        assert layers["DREAMS.md"].decode() == REFERENCE["dreams_md"]
        assert layers["agent.instructions.md"].decode() == REFERENCE["instructions_md"]
        assert layers["memory/2026-11-30.md"].decode() == "# 2026-11-30\n\n- shipped v2\n"
        assert layers["memory/2026-12-01.md"].decode() == (
            "- rolled back v2.1\n- [3/5] learned to canary first #lesson\n"
        )
        # The imported suite installs with every layer.
        activation = await client.post(
            "/api/agent/open-memories/install",
            json={"slug": imported["package"]["slug"]},
            headers={"Authorization": f"Bearer {owner_key}"},
        )
        installed = (await activation.json())["installed_open_memory"]
        files = {m["file"] for m in installed["memories"]}
        assert files == {"MEMORY.md", "DREAMS.md", "memory/2026-11-30.md", "memory/2026-12-01.md"}
    finally:
        await client.close()


# -- legacy zips and the import rules ------------------------------------------------------


async def test_a_legacy_zip_imports_and_is_served_verbatim(api):
    data = legacy()
    status, imported = await upload(api, data)
    assert status == 200, imported
    package = imported["package"]
    assert (package["slug"], package["version"], package["license"]) == ("legacy-notes", "1.0.0", "CC-BY-4.0")
    assert package["persona_type"] == "agent" and package["price_cents"] == 0
    assert imported["legacy"] is True
    served = await download(api, "legacy-notes")
    assert served == data and set(unzip(served)) == {"manifest.json", "MEMORY.md"}
    suite = await api.get("/api/catalog/legacy-notes/suite")  # derived from the manifest
    assert suite["schema"] == "amp.memory-suite.v1" and suite["title"] == "Legacy Notes"
    assert set(suite) >= SUITE_MANIFEST_KEYS | {
        "package",
        "marketplace_contract",
        "tool_install",
        "adaptation",
        "memory_install_card",
    }
    detail = await api.get("/api/catalog/legacy-notes")
    stored = detail["manifest"]
    assert stored["schema"] == "amp.memory.v1" and stored["files"] == {}
    assert stored["compatibility"]["openclaw"] is True and stored["created_at"]
    assert stored["suite"]["schema"] == "amp.memory-suite.v1"
    assert detail["preview"]["memory_md"].startswith("# Legacy")
    # A sync rebuilds the full layout.
    synced = await api.post(
        "/api/memories/legacy-notes/sync", {"text": "first sync", "occurred_at": "2026-02-03"}
    )
    assert synced["version"]["version"] == "1.0.1"
    assert set(unzip(await download(api, "legacy-notes"))) == BUILT_MEMBERS | {"memory/2026-02-03.md"}


async def test_a_legacy_zip_with_only_work_memory_and_other_members_imports(api):
    data = legacy(
        **{
            "memory/notes.md": "- a note\n",
            "memory/2026-01-02.md": "- a day\n",
            "assets/logo.png": b"\x89PNG\r\n\x1a\n\xff\x00",
            "extra/readme.txt": "hi",
        }
    )
    status, imported = await upload(api, data)
    assert status == 200, imported
    assert await download(api, imported["package"]["slug"]) == data
    activation = await api.post("/api/agent/open-memories/install", {"slug": imported["package"]["slug"]})
    files = {m["file"] for m in activation["installed_open_memory"]["memories"]}
    assert files == {"memory/notes.md", "memory/2026-01-02.md"}


async def test_a_files_map_is_verified_when_present(api):
    memory = "# Sealed\n\n- verified\n"
    sealed = {**LEGACY_MANIFEST, "files": {"MEMORY.md": {"sha256": sha(memory), "bytes": len(memory)}}}
    assert (await upload(api, legacy(sealed, **{"MEMORY.md": memory})))[0] == 200
    tampered = {**sealed, "title": "Tampered Notes"}
    status, body = await upload(api, legacy(tampered, **{"MEMORY.md": memory + "evil\n"}))
    assert status == 400 and "sha256 mismatch: MEMORY.md" in body["error"]["message"]


IMPORT_REJECTIONS = [
    # (the sheet's case, archive, status)
    ("no manifest", make_zip({"MEMORY.md": "- x\n"}), 400),
    ("wrong schema", legacy({**LEGACY_MANIFEST, "schema": "amp.memory.v2"}), 400),
    ("short title", legacy({**LEGACY_MANIFEST, "title": " x "}), 400),
    ("no license", legacy({k: v for k, v in LEGACY_MANIFEST.items() if k != "license"}), 400),
    ("no provenance source_type", legacy({**LEGACY_MANIFEST, "provenance": {"author": "a"}}), 400),
    ("provenance not object", legacy({**LEGACY_MANIFEST, "provenance": "me"}), 400),
    ("bad semver", legacy({**LEGACY_MANIFEST, "version": "1.0"}), 400),
    ("no memory content", legacy(**{"README.md": "hi"}), 400),
    ("blank MEMORY.md only", legacy(**{"MEMORY.md": "  \n"}), 400),
    ("work memory only", legacy(**{"memory/2026-01-02.md": "- a day\n"}), 200),
    ("dotdot path", legacy(**{"MEMORY.md": "- x\n", "../x.md": "x"}), 400),
    ("absolute path", legacy(**{"MEMORY.md": "- x\n", "/etc/x.md": "x"}), 400),
    ("space in name", legacy(**{"MEMORY.md": "- x\n", "my notes.md": "x"}), 400),
    ("non-ascii name", legacy(**{"MEMORY.md": "- x\n", "笔记.md": "x"}), 400),
    ("not a zip", b"this is not a zip archive", 400),
    ("no version (default 1.0.0)", legacy({k: v for k, v in LEGACY_MANIFEST.items() if k != "version"}), 200),
    ("no summary", legacy(LEGACY_MANIFEST), 200),
    ("symlink", None, 400),
]


def _symlink_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("manifest.json", json.dumps(LEGACY_MANIFEST))
        archive.writestr("MEMORY.md", "- x\n")
        info = zipfile.ZipInfo("memory/link.md")
        info.external_attr = (0o120777) << 16
        archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


@pytest.mark.parametrize("case,data,status", IMPORT_REJECTIONS, ids=[c[0] for c in IMPORT_REJECTIONS])
async def test_import_and_import_validate_follow_the_rejection_table(api, case, data, status):
    data = data if data is not None else _symlink_zip()
    before = rows(api)
    checked, verdict = await upload(api, data, path="/api/memories/import/validate", auth=False)
    assert checked == status, verdict
    assert rows(api) == before  # validation stores nothing
    if status == 200:
        assert verdict["ok"] is True and verdict["schema"] == "amp.memory.v1"
        assert verdict["files"] == [] and verdict["sha256"] == sha(data)
        has_keys(
            verdict,
            {
                "ok": "boolean",
                "schema": "string",
                "manifest": "object",
                "files": "array",
                "size_bytes": "integer",
                "sha256": "string",
                "warnings": "array",
                "risk": "object",
            },
        )
        assert verdict["manifest"]["schema"] == "amp.memory.v1"
    got, body = await upload(api, data)
    assert got == status, body
    assert rows(api) == before + (1 if status == 200 else 0)


async def test_import_visibility_is_a_query_parameter(api):
    status, body = await upload(api, legacy(), query="?visibility=everyone")
    assert status == 400 and body["detail"]["field"] == "visibility"
    status, body = await upload(api, legacy(), query="?visibility=unlisted")
    assert status == 200 and body["package"]["visibility"] == "unlisted"


async def test_import_without_a_file_is_422(api):
    form = FormData()
    form.add_field("other", b"x", filename="x.zip")
    response = await api.client.post("/api/memories/import", data=form, headers=api.auth())
    assert response.status == 422
    response = await api.client.post("/api/memories/import", headers=api.auth())
    assert response.status == 422


async def test_uploads_up_to_15_mib_are_accepted_and_larger_ones_are_413(api):
    noise = hashlib.sha256(b"seed").digest()
    work = (noise * (2_400_000 // 32)).hex()  # ~4.8 MB of hex: larger than the 1 MiB body limit
    data = legacy(**{"MEMORY.md": "- big\n", "memory/2026-01-02.md": work})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, raw in unzip(data).items():
            archive.writestr(name, raw)
    big = buffer.getvalue()
    assert 1 << 20 < len(big) < 15 << 20
    assert (await upload(api, big))[0] == 200
    huge = big + b"\0" * ((15 << 20) - len(big) + 1)
    status, body = await upload(api, huge)
    assert status == 413, body


# -- reading: catalog, detail, visibility, counters ---------------------------------------------


async def test_reads_of_shared_suites_need_no_key(api):
    """As in the reference, a public or unlisted suite is read without credentials."""
    public = (await api.post("/api/memories", {**REFERENCE, "visibility": "public"}))["slug"]
    unlisted = (await api.post("/api/memories", {**REFERENCE, "title": "Unlisted One"}))["slug"]
    for slug in (public, unlisted):
        for path in ("", "/suite", "/download", "/install/openclaw", "/versions"):
            response = await api.client.get(
                f"/api/catalog/{slug}{path}", headers={"Authorization": "Bearer wrong"}
            )
            assert response.status == 200, (slug, path)
    listed = await (await api.client.get("/api/catalog")).json()
    assert [p["slug"] for p in listed["items"]] == [public]
    response = await api.client.get("/api/me/memories")
    assert response.status == 401


async def test_catalog_lists_public_packages_and_clamps_its_paging(api):
    await api.post("/api/memories", {**REFERENCE, "visibility": "public"})
    await api.post("/api/memories", {**REFERENCE, "title": "Hidden Handbook", "visibility": "private"})
    await api.post("/api/memories", {**REFERENCE, "title": "Unlisted Handbook"})  # unlisted
    await api.post(
        "/api/memories",
        {**REFERENCE, "title": "Tagged Handbook", "visibility": "public", "tags": ["special"]},
    )
    listed = await api.get("/api/catalog")
    has_keys(listed, {"items": "array", "limit": "integer", "offset": "integer"})
    assert (listed["limit"], listed["offset"]) == (30, 0)
    assert sorted(p["slug"] for p in listed["items"]) == ["reference-handbook", "tagged-handbook"]
    for item in listed["items"]:
        has_keys(item, PACKAGE_KEYS)
    assert [p["slug"] for p in (await api.get("/api/catalog?tag=special"))["items"]] == ["tagged-handbook"]
    assert [p["slug"] for p in (await api.get("/api/catalog?q=hidden"))["items"]] == []
    assert (await api.get("/api/catalog?limit=0"))["limit"] == 1
    assert (await api.get("/api/catalog?limit=500"))["limit"] == 100
    paged = await api.get("/api/catalog?limit=1&offset=1")
    assert paged["offset"] == 1 and len(paged["items"]) == 1
    assert (await api.get("/api/catalog?offset=-5"))["offset"] == 0


async def test_private_suites_are_hidden_from_other_keys(api):
    slug = (await api.post("/api/memories", {**REFERENCE, "visibility": "private"}))["package"]["slug"]
    other = api.new_agent("other-agent")
    for path in ("", "/suite", "/download", "/install/openclaw", "/versions", "/diff?from=2.3.4&to=2.3.4"):
        await api.get(f"/api/catalog/{slug}{path}", key=other, status=404)
        anonymous = await api.client.get(f"/api/catalog/{slug}{path}")
        assert anonymous.status == 404, path
        response = await api.client.get(f"/api/catalog/{slug}{path}", headers=api.auth())
        assert response.status == 200, path
        response = await api.client.get(f"/api/catalog/{slug}{path}", headers=api.auth(api.owner_key))
        assert response.status == 200, path
    await api.post("/api/agent/open-memories/install", {"slug": slug}, key=other, status=404)
    assert (await api.get("/api/me/memories", key=other))["items"] == []
    mine = await api.get("/api/me/memories")
    assert [p["slug"] for p in mine["items"]] == [slug]
    has_keys(mine["items"][0], PACKAGE_KEYS)
    assert [p["slug"] for p in (await api.get("/api/me/memories", key=api.owner_key))["items"]] == [slug]


async def test_catalog_detail_has_the_reference_keys(api):
    slug = (await api.post("/api/memories", REFERENCE))["package"]["slug"]
    detail = await api.get(f"/api/catalog/{slug}")
    has_keys(
        detail,
        {
            **PACKAGE_KEYS,
            "install_card_url": "string",
            "install_card": "string",
            "source_workspace": "object",
            "manifest": "object",
            "preview": "object",
            "risk": "object",
        },
    )
    has_keys(
        detail["source_workspace"],
        {"id": "string", "slug": "string", "name": "string", "visibility": "string"},
    )
    assert detail["manifest"]["schema"] == "amp.memory.v1"
    assert detail["suite"]["schema"] == "amp.memory-suite.v1"
    assert detail["preview"] == {
        "memory_md": REFERENCE["memory_md"],
        "dreams_md": REFERENCE["dreams_md"],
        "instructions_md": REFERENCE["instructions_md"],
    }
    has_keys(detail["risk"], {"level": "string", "install_boundary": "string", "visibility": "string"})
    await api.get("/api/catalog/no-such-suite", status=404)


async def test_suite_and_openclaw_answers_and_counters(api):
    slug = (await api.post("/api/memories", REFERENCE))["package"]["slug"]
    suite = await api.get(f"/api/catalog/{slug}/suite")
    assert suite["schema"] == "amp.memory-suite.v1"
    assert suite["marketplace_contract"] == {
        "listing_type": "memory_suite",
        "legacy_name": "memory_capsule",
        "download_url": f"/api/catalog/{slug}/download",
        "suite_url": f"/api/catalog/{slug}/suite",
        "openclaw_install_url": f"/api/catalog/{slug}/install/openclaw",
    }
    has_keys(
        suite["tool_install"],
        {
            "required_first_skill": "string",
            "skill_catalog": "string",
            "skill_pull": "string",
            "steps": "array",
        },
    )
    card = suite["memory_install_card"]
    assert card["schema"] == "amp.open-memory-handoff.v1"
    has_keys(
        card,
        {
            "schema": "string",
            "legacy_schema": "string",
            "source_workspace": "object",
            "url": "string",
            "create_install_link": "string",
            "login_required_for_install": "boolean",
            "detail_requires_login": "boolean",
            "do_not_web_search": "boolean",
            "instructions": "string",
        },
    )
    openclaw = await api.get(f"/api/catalog/{slug}/install/openclaw")
    assert openclaw["schema"] == "amp.install.openclaw.v1"
    assert openclaw["manifest"]["schema"] == "amp.memory.v1"
    assert openclaw["suite"]["schema"] == "amp.memory-suite.v1"
    assert openclaw["download_url"] == f"/api/catalog/{slug}/download"
    assert openclaw["mapping"] == {
        "long_term": "MEMORY.md",
        "work_memory": "memory/*.md",
        "reflections": "DREAMS.md",
        "instructions": "agent.instructions.md",
        "suite_manifest": "suite/manifest.json",
    }
    assert openclaw["required_tools"] == ["memory_tool_installer", "capsule_installer"]
    has_keys(openclaw["risk"], {"level": "string", "prompt_injection": "string", "conflict_policy": "string"})
    await download(api, slug)
    await download(api, slug)
    package = await api.get(f"/api/catalog/{slug}")
    assert (package["install_count"], package["download_count"]) == (1, 2)
    response = await api.client.get(f"/api/catalog/{slug}/download", headers=api.auth())
    assert response.headers["Content-Disposition"] == f'attachment; filename="{slug}-2.3.4.zip"'


async def test_validate_builds_without_storing_and_needs_no_key(api):
    before = rows(api)
    response = await api.client.post("/api/memories/validate", json=REFERENCE)
    verdict = await response.json()
    assert response.status == 200, verdict
    has_keys(
        verdict,
        {
            "ok": "boolean",
            "schema": "string",
            "suite_schema": "string",
            "manifest": "object",
            "files": "array",
            "size_bytes": "integer",
            "sha256": "string",
            "warnings": "array",
            "risk": "object",
        },
    )
    assert (verdict["schema"], verdict["suite_schema"]) == ("amp.memory.v1", "amp.memory-suite.v1")
    assert verdict["manifest"]["schema"] == "amp.memory.v1"
    assert set(verdict["files"]) >= BUILT_MEMBERS
    assert rows(api) == before
    bad = await api.client.post("/api/memories/validate", json={**REFERENCE, "visibility": "x"})
    assert bad.status == 400
    short = await api.client.post("/api/memories/validate", json={**REFERENCE, "title": "x"})
    assert short.status == 422


# -- every documented key, nested ones too, against the contract sheet -------------------------


async def test_every_suite_answer_has_the_documented_keys(api):
    """shape_problems reads the sheet: top-level keys, nested keys and list item keys."""
    from tests.daemon.reference_shapes import shape_problems

    created = await api.post("/api/memories", {**REFERENCE, "visibility": "public"})
    slug = created["package"]["slug"]
    await publish(api)  # pending updates: the sync answer carries update_notice
    synced = await api.post(f"/api/memories/{slug}/sync", {"text": "a lesson", "tags": ["x"]})
    status, imported = await upload(api, legacy())
    assert status == 200, imported
    status, checked = await upload(api, legacy(), path="/api/memories/import/validate")
    assert status == 200, checked
    answers = {
        "memories_create": created,
        "memories_sync": synced,
        "memories_import": imported,
        "memories_import_validate": checked,
        "memories_validate": await api.post("/api/memories/validate", REFERENCE),
        "catalog_list": await api.get("/api/catalog"),
        "catalog_get": await api.get(f"/api/catalog/{slug}"),
        "catalog_versions": await api.get(f"/api/catalog/{slug}/versions"),
        "catalog_suite": await api.get(f"/api/catalog/{slug}/suite"),
        "catalog_install_openclaw": await api.get(f"/api/catalog/{slug}/install/openclaw"),
        "me_memories": await api.get("/api/me/memories"),
    }
    # update_notice is the sync gate's object (daemon/runtime/sync_gate.py), checked there.
    problems = {
        endpoint: shape_problems(endpoint, data, skip=("update_notice",))
        for endpoint, data in answers.items()
    }
    assert not {k: v for k, v in problems.items() if v}, problems
    assert synced["update_notice"]["schema"] == "amp.runtime-update-warning.v1"
