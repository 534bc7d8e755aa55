"""A full disk while the daemon runs, simulated with SQLite's ``max_page_count`` on the real
store: every dialect's write is refused with 507 in its own envelope and a message that says
the disk is full, nothing of the refused write is stored, reading goes on, and writing works
again as soon as there is room. (tests/e2e/test_disk_full_process.py fills a real disk.)
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.daemon.helpers import assert_mem1_detail, row_counts

BASE = "/api/v1/cloud/memory_stores"


def fill_disk(api) -> None:
    """No page beyond the ones the database has now (SQLITE_FULL on the next allocation)."""
    pages = api.store.conn.execute("pragma page_count").fetchone()[0]
    api.store.conn.execute(f"pragma max_page_count = {pages}")


def free_disk(api) -> None:
    api.store.conn.execute("pragma max_page_count = 1073741823")


async def write_until_full(api, send) -> tuple[int, Any]:
    """Writes of fresh, large content until one is refused (free pages fill up first)."""
    for i in range(60):
        before = row_counts(api)
        status, data = await send(i)
        if status != 200:
            assert row_counts(api) == before, "a refused write changed the store"
            return status, data
    raise AssertionError("60 large writes fitted into a full database")


@pytest.fixture
async def stores_id(api) -> str:
    return (await api.post(BASE, {"name": "full"}))["id"]


async def _json(response) -> tuple[int, Any]:
    return response.status, await response.json()


@pytest.mark.parametrize("dialect", ["amp", "stores", "mem1"])
async def test_full_disk_refuses_writes_clearly_and_recovers(api, stores_id, dialect):
    receipt = (await api.bootstrap())["receipt_id"]
    big = "words of a long memory " * 170  # ~3.9 KB: AMP summaries stop at 4000 characters

    async def send(i: int) -> tuple[int, Any]:
        if dialect == "amp":
            return await _json(
                await api.client.post(
                    "/api/agent/memory-delta",
                    json={"summary": f"{i} {big}"},
                    headers={**api.auth(), "X-AMP-Context-Receipt": receipt},
                )
            )
        if dialect == "stores":
            return await _json(
                await api.client.post(
                    f"{BASE}/{stores_id}/memories",
                    json={"path": f"big/{i}.md", "content": f"{i} {big * 20}"},
                    headers=api.auth(),
                )
            )
        return await _json(
            await api.client.post(
                "/add_messages/",
                json={
                    "user_id": "u",
                    "scope_id": "s",
                    "messages": [{"role": "user", "content": f"{i} {big}"}],
                },
                headers=api.auth(),
            )
        )

    ok_status, _ = await send(1000)
    assert ok_status == 200
    fill_disk(api)
    try:
        status, data = await write_until_full(api, send)
    finally:
        free_disk(api)
    assert status == 507, data
    if dialect == "amp":
        assert data["error"]["type"] == "insufficient_storage" and data["error"]["status"] == 507
        message = data["error"]["message"]
    elif dialect == "stores":
        assert_stores_envelope_507(data)
        message = data["error"]["message"]
    else:
        assert_mem1_detail(data, 507, "/add_messages/")
        message = data["detail"]
    assert "disk is full" in message and "changed nothing" in message, message
    # Reading went on, and with room again the same write goes through.
    assert (await api.client.get("/api/me", headers=api.auth())).status == 200
    status, data = await send(2000)
    assert status == 200, data


def assert_stores_envelope_507(data: dict[str, Any]) -> None:
    assert set(data) == {"type", "error"} and data["type"] == "error", data
    assert data["error"]["type"] == "api_error" and data["error"]["message"].strip()


async def test_full_disk_while_reading_is_not_an_error(api, stores_id):
    memory = await api.post(f"{BASE}/{stores_id}/memories", {"path": "a.md", "content": "readable"})
    fill_disk(api)
    try:
        got = await api.get(f"{BASE}/{stores_id}/memories/{memory['id']}")
        assert got["content"] == "readable"
        assert (await api.get(f"/api/agent/search?q=readable&namespace={stores_id}"))["items"]
    finally:
        free_disk(api)
