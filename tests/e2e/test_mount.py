"""`memorycloud mount`: a Memory Store as files, both ways, with the OCC conflict kept."""

from __future__ import annotations

import hashlib
import json

import httpx

from tests.e2e.conftest import cli

BASE = "/api/v1/cloud/memory_stores"


def test_mount_round_trip(daemon, agent_key, tmp_path):
    http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {agent_key}"})
    store = json.loads(cli("stores", "create", "alpha", "--json").stdout)
    sid = store["id"]
    memory = http.post(f"{BASE}/{sid}/memories", json={"path": "notes/决策.md", "content": "微服务"}).json()
    mount_dir = tmp_path / "awareness"

    first = json.loads(cli("mount", "alpha", str(mount_dir), "--once", "--json").stdout)
    assert first["pulled"] == ["notes/决策.md"]
    assert (mount_dir / "notes/决策.md").read_text() == "微服务"

    # A local edit comes back as a new version; a new local file becomes a memory.
    (mount_dir / "notes/决策.md").write_text("Modular Monolith")
    (mount_dir / "todo.md").write_text("- write tests")
    second = json.loads(cli("mount", sid, str(mount_dir), "--once", "--json").stdout)
    assert second["pushed"] == ["notes/决策.md"] and second["created"] == ["todo.md"]
    assert http.get(f"{BASE}/{sid}/memories/{memory['id']}").json()["version"] == 2

    # A server edit reaches the file.
    current = http.get(f"{BASE}/{sid}/memories/{memory['id']}").json()
    http.post(
        f"{BASE}/{sid}/memories/{memory['id']}",
        json={"content": "server wins this one", "content_sha256": current["content_sha256"]},
    )
    third = json.loads(cli("mount", sid, str(mount_dir), "--once", "--json").stdout)
    assert third["pulled"] == ["notes/决策.md"]
    assert (mount_dir / "notes/决策.md").read_text() == "server wins this one"

    # Both changed: the file is not overwritten and the local edit is kept as a conflict.
    current = http.get(f"{BASE}/{sid}/memories/{memory['id']}").json()
    http.post(
        f"{BASE}/{sid}/memories/{memory['id']}",
        json={"content": "server edit", "content_sha256": current["content_sha256"]},
    )
    (mount_dir / "notes/决策.md").write_text("local edit")
    clash = cli("mount", sid, str(mount_dir), "--once", "--json", check=False)
    assert clash.returncode == 1 and json.loads(clash.stdout)["conflicts"]
    assert (mount_dir / "notes/决策.md").read_text() == "local edit"
    conflicts = json.loads(cli("setup", "conflicts", "--json").stdout)
    assert any(
        c["kind"] == "memory_store_occ" and c["detail"]["losing_content"] == "local edit" for c in conflicts
    )
    assert http.get(f"{BASE}/{sid}/memories/{memory['id']}").json()["content"] == "server edit"

    # Deleting a file deletes the memory (its versions stay).
    (mount_dir / "todo.md").unlink()
    fourth = json.loads(cli("mount", sid, str(mount_dir), "--once", "--json").stdout)
    assert fourth["deleted_remote"] == ["todo.md"]
    paths = [m["path"] for m in http.get(f"{BASE}/{sid}/memories").json()["data"]]
    assert paths == ["notes/决策.md"]
    assert (
        hashlib.sha256(b"server edit").hexdigest()
        == http.get(f"{BASE}/{sid}/memories/{memory['id']}").json()["content_sha256"]
    )
