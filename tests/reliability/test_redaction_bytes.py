"""Redaction removes the content from the database file itself: its bytes (and the WAL's) are
scanned after the redaction, for the text, its FTS tokens and its vector.

Each test writes a secret through one dialect next to filler, redacts it the way a person or
the dialect does, and then reads the raw files while the daemon still runs. Without
secure_delete, the merge of the FTS5 index, the scrubbing of copies and the WAL truncation
(state/redaction.py) the marker survives in free pages, FTS segments, the delta log, summary
cards, context packs or mem1's message log, and these tests fail.
"""

from __future__ import annotations

from pathlib import Path

from state.embedders import serialize
from state.search import record_text

MARKER = "zqxwvkredactmarker"
BASE = "/api/v1/cloud/memory_stores"


def database_bytes(api) -> bytes:
    database = Path(api.store.conn.execute("pragma database_list").fetchone()[2])
    wal = Path(f"{database}-wal")
    return database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def vector_pieces(api, text: str) -> list[bytes]:
    """16-byte pieces of the text's embedding that hold at least two non-zero floats (a whole
    vector may straddle pages, so the file need not hold it in one run)."""
    vector = serialize(api.store.embedder.embed(text))
    pieces = [vector[i : i + 16] for i in range(0, len(vector), 16)]
    return [p for p in pieces if sum(p[j : j + 4] != bytes(4) for j in range(0, 16, 4)) >= 2]


def assert_gone(api, *needles: bytes, pieces: list[bytes] = ()) -> None:
    data = database_bytes(api)
    for needle in needles:
        at = data.find(needle)
        assert at < 0, f"{needle[:40]!r} is still in the database file: {data[at - 80 : at + 40]!r}"
    left = [p for p in pieces if p in data]
    assert not left, f"{len(left)} pieces of the embedding are still in the database file"


async def filler(api, key: str, store_id: str, count: int = 30, start: int = 0) -> None:
    for i in range(start, start + count):
        await api.post(
            f"{BASE}/{store_id}/memories",
            {"path": f"filler/{i}.md", "content": f"filler note {i} about ordinary things " * 10},
            key=key,
        )


async def test_memory_stores_redaction_leaves_no_bytes(api):
    owner = api.owner_key
    store_id = (await api.post(BASE, {"name": "secrets"}, key=owner))["id"]
    await filler(api, owner, store_id)
    secret = f"the deploy password is {MARKER} do not share"
    memory = await api.post(
        f"{BASE}/{store_id}/memories", {"path": "ops/deploy.md", "content": secret}, key=owner
    )
    pieces = vector_pieces(api, record_text("ops/deploy.md", secret, []))
    assert MARKER.encode() in database_bytes(api) and any(p in database_bytes(api) for p in pieces)
    await filler(api, owner, store_id, 5, start=100)
    # A later version replaces it (the old text moves out of the index) ...
    await api.post(
        f"{BASE}/{store_id}/memories/{memory['id']}", {"content": "rotated; see the vault"}, key=owner
    )
    versions = await api.get(f"{BASE}/{store_id}/memory_versions?memory_id={memory['id']}", key=owner)
    first = next(v for v in versions["data"] if v["version"] == 1)
    # ... and then the version that held the secret is redacted.
    redacted = await api.post(f"{BASE}/{store_id}/memory_versions/{first['id']}/redact", {}, key=owner)
    assert redacted["content"] is None and redacted["content_sha256"] == memory["content_sha256"]
    assert_gone(api, MARKER.encode(), pieces=pieces)
    # Redacting the current version takes it out of both indexes as well.
    current = await api.post(
        f"{BASE}/{store_id}/memories",
        {"path": "ops/token.md", "content": f"api token {MARKER}2 for the staging cluster"},
        key=owner,
    )
    versions = await api.get(f"{BASE}/{store_id}/memory_versions?memory_id={current['id']}", key=owner)
    await api.post(f"{BASE}/{store_id}/memory_versions/{versions['data'][0]['id']}/redact", {}, key=owner)
    assert_gone(api, MARKER.encode())
    found = await api.get(f"/api/local/memories?q={MARKER}2", key=owner)
    assert current["id"] not in {item["id"] for item in found["items"]}


async def test_amp_delta_redaction_scrubs_every_copy(api):
    pack = await api.bootstrap(project_key="vault")
    secret = f"the database root password is {MARKER}"
    delta = await api.delta(
        pack["receipt_id"],
        summary=secret,
        why_it_matters=f"because {MARKER} opens production",
        detail_payload={"note": f"{MARKER} payload"},
        importance=5,
    )
    memory_id = delta["delta"]["memory_id"]
    brief = await api.post("/api/agent/memory-brief", {"task": "rotate credentials"})
    await api.post(
        f"/api/agent/memory-briefs/{brief['brief_id']}/events",
        {"summary": f"rotated the key {MARKER}-b", "importance": 5},
    )
    # Later context packs show it: they are kept as returned, so they hold the text too.
    later = await api.bootstrap(project_key="vault")
    assert MARKER in later["summary_markdown"]
    assert MARKER.encode() in database_bytes(api)

    owner = api.owner_key
    hits = await api.get(f"/api/local/memories?q={MARKER}", key=owner)
    ids = {item["id"] for item in hits["items"]} | {memory_id}
    for hit in ids:
        await api.post(f"/api/local/memories/{hit}/redact", {"version": 1}, key=owner)
    assert_gone(api, MARKER.encode())
    # The pack is still readable; the memory's line is gone from it.
    kept = await api.get(f"/api/agent/context-packs/{later['context_pack_id']}")
    assert MARKER not in str(kept) and memory_id in kept["summary_markdown"]


async def test_mem1_redaction_scrubs_the_message_log(api):
    who = {"user_id": "alice", "scope_id": "edp_agent", "session_id": "s1"}
    await api.post(
        "/add_messages/",
        {
            **who,
            "messages": [
                {"role": "user", "content": f"my bank pin is {MARKER}"},
                {"role": "assistant", "content": "noted, I will keep it safe"},
            ],
        },
    )
    owner = api.owner_key
    hits = await api.get(f"/api/local/memories?q={MARKER}", key=owner)
    assert hits["items"]
    for item in hits["items"]:
        history = await api.get(f"/api/local/memories/{item['id']}/history", key=owner)
        for version in history["versions"]:
            if version["content"] and MARKER in version["content"]:
                await api.post(
                    f"/api/local/memories/{item['id']}/redact", {"version": version["version"]}, key=owner
                )
    assert_gone(api, MARKER.encode())
    traced = await api.post("/get_message_by_id/", {**who, "message_id": "x"}, status=None)
    assert MARKER not in str(traced)


async def test_mem1_redaction_after_the_summary_grew(api):
    """The session summary is re-indexed at every turn with plain FTS deletes (they are cheap;
    its earlier text stays in its versions anyway): redacting those versions still leaves no
    token of the secret in the index segments."""
    who = {"user_id": "bob", "scope_id": "edp_agent", "session_id": "s2"}
    await api.post(
        "/add_messages/",
        {
            **who,
            "messages": [
                {"role": "user", "content": f"my door code is {MARKER}"},
                {"role": "assistant", "content": "noted"},
            ],
        },
    )
    for turn in range(1):  # one re-index: more would let FTS5's automerge drop the tokens
        await api.post(
            "/add_messages/",
            {
                **who,
                "messages": [
                    {"role": "user", "content": f"another ordinary question number {turn}"},
                    {"role": "assistant", "content": f"an ordinary answer number {turn}"},
                ],
            },
        )
    owner = api.owner_key
    hits = await api.get(f"/api/local/memories?q={MARKER}", key=owner)
    assert any(item["memory_type"] == "summary" and item["version"] > 1 for item in hits["items"])
    for item in hits["items"]:
        history = await api.get(f"/api/local/memories/{item['id']}/history", key=owner)
        for version in history["versions"]:
            if version["content"] and MARKER in version["content"]:
                await api.post(
                    f"/api/local/memories/{item['id']}/redact", {"version": version["version"]}, key=owner
                )
    assert_gone(api, MARKER.encode())
    again = await api.get(f"/api/local/memories?q={MARKER}", key=owner)
    assert MARKER not in str(again["items"])
