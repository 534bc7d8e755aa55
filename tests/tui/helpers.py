"""What the TUI tests share: the real daemon app (aiohttp, real SQLite store) served over real
HTTP, and a way to wait until the TUI is idle."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Future
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import TypeVar

import httpx
from aiohttp.test_utils import TestServer
from textual.worker import WorkerCancelled

from daemon import keys
from daemon.app import create_app
from state.config import Settings
from state.paths import Paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from state.store import Store
from tests.conftest import CHECKED


@dataclass
class Daemon:
    """A running daemon app and how to talk to it as its owner."""

    server: TestServer
    url: str
    owner_key: str

    @property
    def store(self) -> Store:
        return self.server.app[keys.STORE]

    def http(self, key: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)

    def new_agent(self, name: str, runtime: str = "codex") -> str:
        with self.store.transaction():
            _, key = self.store.identities.create_agent(name, runtime)
        return key


@asynccontextmanager
async def serve(paths: Paths, settings: Settings | None = None) -> AsyncIterator[Daemon]:
    """Start the daemon app on a free loopback port; stop it (store closed) on exit."""
    server = TestServer(create_app(settings or CHECKED, paths), host="127.0.0.1")
    await server.start_server()
    try:
        owner_key = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
        yield Daemon(server, str(server.make_url("")).rstrip("/"), owner_key)
    finally:
        await server.close()


T = TypeVar("T")


class ServedInThread:
    """The daemon app served on its own event loop in a thread, as a separate daemon process
    would be, so that a synchronous test (``snap_compare``) can run the TUI on the main thread."""

    def __init__(self, daemon: Daemon, loop: asyncio.AbstractEventLoop) -> None:
        self.daemon = daemon
        self.loop = loop

    def run(self, job: Callable[[Daemon], Awaitable[T]]) -> T:
        """Run ``job(daemon)`` on the daemon's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(job(self.daemon), self.loop).result(timeout=120)


@contextmanager
def serve_in_thread(paths: Paths, settings: Settings | None = None) -> Iterator[ServedInThread]:
    """Start :func:`serve` on a new loop in a thread; stop it (store closed) on exit."""
    ready: Future[tuple[Daemon, asyncio.AbstractEventLoop]] = Future()
    stop: asyncio.Event | None = None

    async def main() -> None:
        nonlocal stop
        stop = asyncio.Event()
        try:
            async with serve(paths, settings) as daemon:
                ready.set_result((daemon, asyncio.get_running_loop()))
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    thread = threading.Thread(target=asyncio.run, args=(main(),), name="daemon", daemon=True)
    thread.start()
    daemon, loop = ready.result(timeout=60)
    try:
        yield ServedInThread(daemon, loop)
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=30)


async def settle(pilot, app) -> None:
    """Let the workers started by the last key or load finish, twice (a load can start one).

    A worker that a newer one of its exclusive group replaced counts as finished.
    """
    for _ in range(2):
        await pilot.pause(0.05)
        while True:
            try:
                await app.workers.wait_for_complete()
                break
            except WorkerCancelled:
                continue
