"""Memory Stores (seed 001) over the real app and store."""

from __future__ import annotations

import hashlib

import pytest

BASE = "/api/v1/cloud/memory_stores"
CONTENT = "# 架构决策\n\n选择微服务架构，原因：团队规模扩大，需要独立部署。"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def _store(api) -> dict:
    return await api.post(BASE, {"name": "project-alpha-memory", "description": "Alpha 项目"})


async def test_store_memory_version_lifecycle(api):
    store = await _store(api)
    assert store["type"] == "memory_store" and store["id"].startswith("memstore_")
    assert (store["status"], store["entry_count"], store["total_size"]) == ("active", 0, 0)
    sid = store["id"]
    memory = await api.post(f"{BASE}/{sid}/memories", {"path": "decisions/arch-choice.md", "content": CONTENT})
    assert memory["content_sha256"] == sha(CONTENT) and memory["version"] == 1
    assert memory["content_size_bytes"] == len(CONTENT.encode())
    listed = await api.get(f"{BASE}/{sid}/memories")
    assert "content" not in listed["data"][0] and listed["has_more"] is False
    updated = await api.post(f"{BASE}/{sid}/memories/{memory['id']}",
                             {"content": "v2", "content_sha256": memory["content_sha256"]})
    assert updated["version"] == 2 and updated["content"] == "v2"
    stats = await api.get(f"{BASE}/{sid}")
    assert (stats["entry_count"], stats["total_size"]) == (1, 2)
    await api.client.delete(f"{BASE}/{sid}/memories/{memory['id']}", headers=api.auth())
    versions = await api.get(f"{BASE}/{sid}/memory_versions?memory_id={memory['id']}")
    assert [v["operation"] for v in versions["data"]] == ["created", "updated", "deleted"]
    assert "content" not in versions["data"][0]
    first = await api.get(f"{BASE}/{sid}/memory_versions/{versions['data'][0]['id']}")
    assert first["content"] == CONTENT
    assert (await api.get(f"{BASE}/{sid}"))["entry_count"] == 0


async def test_stale_sha_is_409_and_the_loser_is_kept(api):
    sid = (await _store(api))["id"]
    memory = await api.post(f"{BASE}/{sid}/memories", {"path": "notes/a.md", "content": "first"})
    await api.post(f"{BASE}/{sid}/memories/{memory['id']}", {"content": "second (winner)"})
    response = await api.client.post(f"{BASE}/{sid}/memories/{memory['id']}", headers=api.auth(),
                                     json={"content": "third (loser)", "content_sha256": sha("first")})
    body = await response.json()
    assert response.status == 409
    assert body["type"] == "error" and body["error"]["type"] == "conflict_error"
    assert (await api.get(f"{BASE}/{sid}/memories/{memory['id']}"))["content"] == "second (winner)"
    conflicts = (await api.get("/api/local/conflicts", key=api.owner_key))["conflicts"]
    (kept,) = [c for c in conflicts if c["kind"] == "memory_store_occ"]
    assert kept["detail"]["losing_content"] == "third (loser)" and kept["path"] == "notes/a.md"


async def test_redaction_and_archive(api):
    sid = (await _store(api))["id"]
    memory = await api.post(f"{BASE}/{sid}/memories", {"path": "secret.md", "content": "token=abc"})
    version_id = (await api.get(f"{BASE}/{sid}/memory_versions"))["data"][0]["id"]
    refused = await api.post(f"{BASE}/{sid}/memory_versions/{version_id}/redact", {}, status=403)
    assert "owner" in refused["error"]["message"]  # a person redacts, with the owner key
    redacted = await api.post(f"{BASE}/{sid}/memory_versions/{version_id}/redact", {}, key=api.owner_key)
    assert redacted["content"] is None and redacted["redacted"] is True
    assert redacted["content_sha256"] == sha("token=abc")  # metadata kept for audit
    again = await api.post(f"{BASE}/{sid}/memory_versions/{version_id}/redact", {}, key=api.owner_key,
                           status=409)
    assert again["error"]["type"] == "conflict_error"
    archived = await api.post(f"{BASE}/{sid}/archive", {})
    assert archived["status"] == "archived" and archived["archived_at"]
    refused = await api.post(f"{BASE}/{sid}/memories", {"path": "x.md", "content": "x"}, status=409)
    assert "archived" in refused["error"]["message"]
    assert (await api.get(f"{BASE}/{sid}/memories/{memory['id']}"))["path"] == "secret.md"


@pytest.mark.parametrize("path", ["/notes/meeting.md", "../secrets", "a/../b", "a//b", "a\\b", ""])
async def test_path_rules(api, path):
    sid = (await _store(api))["id"]
    refused = await api.post(f"{BASE}/{sid}/memories", {"path": path, "content": "x"}, status=None)
    assert refused["type"] == "error" and refused["error"]["type"] == "invalid_request_error"


async def test_content_limits_pagination_prefix_and_cascade(api):
    sid = (await _store(api))["id"]
    await api.post(f"{BASE}/{sid}/memories", {"path": "big.md", "content": "x" * (100 * 1024 + 1)}, status=400)
    await api.post(f"{BASE}/{sid}/memories", {"path": "empty.md", "content": "   "}, status=400)
    for i in range(5):
        await api.post(f"{BASE}/{sid}/memories", {"path": f"notes/{i}.md", "content": f"n{i}"})
    await api.post(f"{BASE}/{sid}/memories", {"path": "other/x.md", "content": "o"})
    first = await api.get(f"{BASE}/{sid}/memories?limit=2&path_prefix=notes/")
    assert len(first["data"]) == 2 and first["has_more"] is True
    rest = await api.get(f"{BASE}/{sid}/memories?limit=100&path_prefix=notes/&cursor={first['next_cursor']}")
    assert [m["path"] for m in first["data"] + rest["data"]] == [f"notes/{i}.md" for i in range(5)]
    assert rest["has_more"] is False
    await api.get(f"{BASE}/{sid}/memories?limit=0", status=422)
    deleted = await (await api.client.delete(f"{BASE}/{sid}", headers=api.auth())).json()
    assert deleted["type"] == "memory_store_deleted"
    await api.get(f"{BASE}/{sid}", status=404)
    assert api.store.conn.execute("select count(*) from memory_records where namespace = ?",
                                  (sid,)).fetchone()[0] == 0
