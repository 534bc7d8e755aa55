"""Shared fixtures: a real store in a temp MEMORYCLOUD_HOME and the real aiohttp app."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from daemon import keys
from daemon.app import create_app
from state.config import Settings
from state.paths import Paths, resolve_paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from state.store import Store


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own MEMORYCLOUD_HOME and the file secret backend."""
    home = tmp_path / "mchome"
    monkeypatch.setenv("MEMORYCLOUD_HOME", str(home))
    monkeypatch.setenv("MEMORYCLOUD_SECRETS", "file")
    # `connect --runtime codex` registers the MCP server in Codex's user config: never the
    # real ~/.codex of the machine running the tests.
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    # User-level config (the systemd user unit of `memorycloud service`, which `connect`
    # looks for) is the test's own too.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    return home


# The apps tests start hold their answers to the OpenAPI document's schemas
# (daemon/response_models.py): an answer that drifts from its model is a 500, not a pass.
# Daemon processes get the same from tests/e2e/conftest.py.
CHECKED = Settings(check_responses=True)


@pytest.fixture
def paths(isolated_home: Path) -> Paths:
    return resolve_paths().ensure()


@pytest.fixture(scope="session")
def migrated_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty store file with every migration applied, made once per test process.

    It holds the schema only (no row but the migrations' own bookkeeping), exactly what
    opening a new file makes; copying it costs ~7 ms where migrating a new file costs ~25
    (measured), and thousands of tests start from an empty store."""
    path = tmp_path_factory.mktemp("template") / "memorycloud.db"
    Store.open(path, Settings()).close()
    return path


def seed_database(paths: Paths, template: Path) -> None:
    """Start this test's store from the migrated template (unless it already has one)."""
    if not paths.database.exists():
        shutil.copyfile(template, paths.database)


@pytest.fixture
def store(request: pytest.FixtureRequest, paths: Paths, migrated_database: Path) -> Iterator[Store]:
    """The test's store: a SQLite file, or in a module marked ``both_engines`` also a
    PostgreSQL database (the conformance suite of issue #18: the same test on each engine)."""
    if _engine(request) == "postgresql":
        from state.pg.store import PgStore

        opened: Store = PgStore.open(request.getfixturevalue("pg_url"), Settings())
    else:
        seed_database(paths, migrated_database)
        opened = Store.open(paths.database, Settings())
    yield opened
    opened.close()


# -- both engines: SQLite and PostgreSQL -------------------------------------------------------

ENGINES = ("sqlite", "postgresql")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test in a module marked ``pytest.mark.both_engines`` that uses the store (or the app,
    or asks for ``engine`` itself: a team server of its own, see :func:`cloud_settings`) runs
    once per engine (its id says which)."""
    uses_store = {"store", "api", "engine"} & set(metafunc.fixturenames)
    if metafunc.definition.get_closest_marker("both_engines") and uses_store:
        own = [name for name in ("store", "api") if hasattr(metafunc.module, name)]
        if own:  # its own fixture would run both variants on SQLite
            raise pytest.UsageError(
                f"{metafunc.module.__name__} is marked both_engines but defines its own {own[0]} fixture"
            )
        if "engine" not in metafunc.fixturenames:
            metafunc.fixturenames.append("engine")
        metafunc.parametrize("engine", ENGINES)


def cloud_settings(request: pytest.FixtureRequest, **settings: Any) -> Settings:
    """Settings of a team server (the cloud role) on this test's engine: its own PostgreSQL
    database when the test runs on ``postgresql`` (a fixture that calls this asks for
    ``engine``), else a SQLite file."""
    if _engine(request) == "postgresql":
        settings["database_url"] = request.getfixturevalue("pg_url")
    return Settings(role="cloud", **settings)


def _engine(request: pytest.FixtureRequest) -> str:
    callspec = getattr(request.node, "callspec", None)
    return callspec.params.get("engine", "sqlite") if callspec is not None else "sqlite"


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real PostgreSQL 16 with pgvector from the ``pgserver`` wheel (no system install): one
    per test process, in a temporary directory, started when the first test asks for it and
    stopped at the end. Where the wheel or psycopg cannot be installed (a platform pgserver
    has no wheel for), the tests that need it are skipped and say why; the test extra
    installs both wherever they exist."""
    pgserver = pytest.importorskip("pgserver", reason="pgserver has no wheel for this platform")
    pytest.importorskip("psycopg", reason="psycopg is not installed (the postgres extra)")
    # Run as root (CI), pgserver runs PostgreSQL as a user of its own, made with `useradd` the
    # first time: found in /usr/sbin, which a clean environment's PATH may lack.
    path = os.environ.get("PATH", "")
    for directory in ("/usr/sbin", "/sbin"):
        if directory not in path.split(os.pathsep) and os.path.isdir(directory):
            path += os.pathsep + directory
    os.environ["PATH"] = path
    server = pgserver.get_server(tmp_path_factory.mktemp("pgdata"), cleanup_mode="stop")
    try:
        yield server
    finally:
        server.cleanup()


def _database_url(admin_url: str, name: str) -> str:
    base, _, query = admin_url.partition("?")
    return f"{base.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")


@pytest.fixture(scope="session")
def pg_template(pg_server: Any) -> str:
    """A database with every migration applied, made once per test process: each test's
    database is a copy of it (``create database ... template``), as the SQLite tests copy
    ``migrated_database``."""
    import psycopg

    from state.pg.store import PgStore

    name = f"tmpl_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as admin:
        admin.execute(f'create database "{name}"')
    PgStore.open(_database_url(pg_server.get_uri(), name), Settings()).close()
    return name


@contextmanager
def new_database(pg_server: Any, template: str | None = None) -> Iterator[str]:
    """The URL of a new database on the test server (a copy of ``template``, else empty),
    dropped when the block ends."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    admin_url = pg_server.get_uri()
    copy = f' template "{template}"' if template else ""
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'create database "{name}"{copy}')
    try:
        yield _database_url(admin_url, name)
    finally:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'drop database if exists "{name}" with (force)')


@pytest.fixture
def pg_url(pg_server: Any, pg_template: str) -> Iterator[str]:
    """The URL of a new database on the test server, migrated (dropped afterwards)."""
    with new_database(pg_server, pg_template) as url:
        yield url


class Api:
    """The test client plus keys for the owner and one agent, with small helpers."""

    def __init__(self, client: TestClient, owner_key: str, agent_key: str, agent: dict[str, Any]) -> None:
        self.client = client
        self.owner_key = owner_key
        self.agent_key = agent_key
        self.agent = agent

    @property
    def store(self) -> Store:
        return self.client.app[keys.STORE]

    def auth(self, key: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {key or self.agent_key}"}

    async def post(
        self,
        path: str,
        body: Any = None,
        *,
        key: str | None = None,
        headers: dict[str, str] | None = None,
        status: int | None = 200,
    ) -> Any:
        response = await self.client.post(path, json=body, headers={**self.auth(key), **(headers or {})})
        data = await response.json()
        if status is not None:
            assert response.status == status, data
        return data

    async def get(self, path: str, *, key: str | None = None, status: int | None = 200) -> Any:
        response = await self.client.get(path, headers=self.auth(key))
        data = await response.json()
        if status is not None:
            assert response.status == status, data
        return data

    async def bootstrap(self, **body: Any) -> dict[str, Any]:
        return await self.post("/api/agent/bootstrap/context", body)

    async def delta(self, receipt_id: str, **body: Any) -> dict[str, Any]:
        body.setdefault("summary", "something changed")
        return await self.post("/api/agent/memory-delta", body, headers={"X-AMP-Context-Receipt": receipt_id})

    def new_agent(self, name: str, **kwargs: Any) -> str:
        with self.store.transaction():
            _, key = self.store.identities.create_agent(name, "codex", **kwargs)
        return key


async def start_api(
    aiohttp_client,
    paths: Paths,
    agent: tuple[dict[str, Any], str] | None = None,
    settings: Settings = CHECKED,
) -> Api:
    """The real app on `paths` (its store file made already), served to a test client; the
    test's agent is `agent` (record, key) if given, else a new "test-agent"."""
    app = create_app(settings, paths)
    client = await aiohttp_client(app)
    if agent is None:
        store = app[keys.STORE]
        with store.transaction():
            agent = store.identities.create_agent("test-agent", "codex")
    owner_key = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
    return Api(client, owner_key, agent[1], agent[0])


@pytest.fixture
async def api(
    request: pytest.FixtureRequest, aiohttp_client, paths: Paths, migrated_database: Path
) -> AsyncIterator[Api]:
    """The app on a SQLite file; in a module marked ``both_engines`` also a team server (the
    cloud role) on a PostgreSQL database."""
    if _engine(request) == "postgresql":
        url = request.getfixturevalue("pg_url")
        settings = Settings(check_responses=True, role="cloud", database_url=url)
        team = await start_api(aiohttp_client, paths, settings=settings)
        yield team
        # Closed here, before pg_url drops the database (aiohttp_client would close it after):
        # a drop that must end the pool's connections waits ~110 ms for them, as PostgreSQL
        # polls every 100 ms (tests/daemon/test_suites.py -k postgresql: 11.6 s of drops).
        await team.client.close()
        return
    seed_database(paths, migrated_database)
    yield await start_api(aiohttp_client, paths)
