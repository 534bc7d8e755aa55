"""LISTEN/NOTIFY for the changes feed (state/pg/feed_listener.py, migration m0003): a commit
on any connection to the database is heard, with its namespace; a rolled-back one is not; a
lost listening connection is made again and says that changes may have been missed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import psycopg
import pytest

from state.config import Settings
from state.memories import NewMemory
from state.pg.feed_listener import FeedListener
from state.pg.store import PgStore


@pytest.fixture
def writer(pg_url: str) -> Iterator[PgStore]:
    """Another process's store, as it were: its own connection to the same database."""
    store = PgStore.open(pg_url, Settings())
    yield store
    store.close()


def write(store: PgStore, namespace: str, content: str) -> None:
    with store.transaction():
        store.memories.create(NewMemory(namespace=namespace, kind="fact", content=content, source="test"))


async def heard_within(heard: list[str | None], wanted: str | None, seconds: float) -> bool:
    for _ in range(int(seconds / 0.05)):
        if wanted in heard:
            return True
        await asyncio.sleep(0.05)
    return False


async def listening(pg_url: str) -> tuple[FeedListener, list[str | None]]:
    heard: list[str | None] = []
    listener = FeedListener(pg_url, heard.append)
    listener.start()
    await asyncio.wait_for(listener.listening.wait(), 10)
    return listener, heard


async def test_a_commit_on_another_connection_is_heard_with_its_namespace(
    pg_url: str, writer: PgStore
) -> None:
    listener, heard = await listening(pg_url)
    try:
        write(writer, "wsp_team", "the deploy key rotates on Fridays")
        assert await heard_within(heard, "wsp_team", 5)
        # A transaction rolled back tells no one.
        with pytest.raises(RuntimeError), writer.transaction():
            writer.memories.create(NewMemory(namespace="wsp_never", kind="fact", content="x", source="test"))
            raise RuntimeError("changed my mind")
        write(writer, "wsp_after", "a later write")
        assert await heard_within(heard, "wsp_after", 5)
        assert "wsp_never" not in heard
    finally:
        await listener.stop()


async def test_a_lost_connection_is_made_again_and_says_changes_may_be_missed(
    pg_url: str, writer: PgStore
) -> None:
    listener, heard = await listening(pg_url)
    try:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            killed = admin.execute(
                "select pg_terminate_backend(pid) from pg_stat_activity"
                " where datname = current_database() and query ilike 'listen %'"
            ).fetchall()
        assert killed == [(True,)]
        assert await heard_within(heard, None, 5)  # "anything may have changed"
        await asyncio.wait_for(listener.listening.wait(), 10)
        write(writer, "wsp_team", "written after the reconnection")
        assert await heard_within(heard, "wsp_team", 5)
    finally:
        await listener.stop()
    assert not listener.listening.is_set()
