"""Shared pieces of the speed and scale benchmarks (bench/scale.py, writes.py, concurrency.py,
footprint.py): a real daemon process, a lean asyncio HTTP/1.1 client, agents created over the
owner API, the machine's load, and /proc readings of the daemon process.

Why a hand-written client: client and daemon share this machine's two cores. A general
client (httpx, aiohttp) spends 0.2-0.5 ms of CPU per request in Python, which at 1,000
requests per second is a good part of a core taken from the daemon and added to every
latency. This one sends pre-encoded requests on keep-alive connections and reads
``Content-Length`` answers (what aiohttp's ``json_response`` sends), so what is measured is
the daemon and loopback. It is still plain HTTP/1.1 over TCP; every answer's status is
checked and every body decoded by the caller that needs it.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import runpy
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parent.parent
# The checkout whose daemon is measured: this one, or another (``MC_BENCH_CODE=DIR``, e.g.
# ``git archive REV | tar -x -C DIR``) to measure a commit while the working tree changes,
# or before and after a change. The client side imports the same ``state`` package.
CODE = Path(os.environ.get("MC_BENCH_CODE") or ROOT).resolve()
sys.path.insert(0, str(CODE))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency import HOST, percentile  # noqa: E402
from latency import Daemon as _Daemon  # noqa: E402

__all__ = [
    "Daemon",
    "HOST",
    "RawClient",
    "HttpError",
    "owner_key",
    "create_agents",
    "load_average",
    "wait_for_quiet",
    "machine_line",
    "code_state",
    "Dist",
    "ProcStat",
    "daemon_env",
    "ROOT",
]


class HttpError(RuntimeError):
    """A non-2xx answer, or a broken connection."""


class RawClient:
    """One keep-alive HTTP/1.1 connection; one request at a time (use several for
    concurrency). ``request`` returns (status, body bytes)."""

    def __init__(self, port: int, key: str | None = None) -> None:
        self.port = port
        self.key = key
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def connect(self) -> RawClient:
        self.reader, self.writer = await asyncio.open_connection(HOST, self.port)
        return self

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except (ConnectionError, OSError):
                pass
            self.writer = None

    def encode(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> bytes:
        """The request's bytes: build once, send many times (the client's cost stays small)."""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{self.port}"]
        if self.key:
            lines.append(f"Authorization: Bearer {self.key}")
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        payload = b""
        if body is not None:
            payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
            lines.append("Content-Type: application/json")
        if body is not None or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {len(payload)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "strict") + payload

    async def send(self, raw: bytes) -> tuple[int, bytes]:
        """Send encoded request bytes and read one whole answer."""
        if self.writer is None:
            await self.connect()
        assert self.reader is not None and self.writer is not None
        try:
            self.writer.write(raw)
            head = await self.reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = None
            close = False
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                lname = name.strip().lower()
                if lname == b"content-length":
                    length = int(value)
                elif lname == b"transfer-encoding" and b"chunked" in value.lower():
                    raise HttpError("chunked answers are not expected from json endpoints")
                elif lname == b"connection" and value.strip().lower() == b"close":
                    close = True
            body = await self.reader.readexactly(length) if length else b""
        except (asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
            await self.close()
            raise HttpError(f"connection failed: {exc!r}") from exc
        if close:
            await self.close()
        return status, body

    async def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        return await self.send(self.encode(method, path, body, headers))

    async def json(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """A request whose answer must be 200; returns the decoded JSON."""
        status, data = await self.request(method, path, body, headers)
        if status != 200:
            raise HttpError(f"{method} {path}: {status} {data[:300]!r}")
        return json.loads(data)


def query_path(path: str, **params: str) -> str:
    return f"{path}?{urlencode(params, quote_via=quote)}"


# -- the installation --------------------------------------------------------------------


class Daemon(_Daemon):
    """bench/latency.py's daemon process, started from :data:`CODE`."""

    def start(self, timeout: float = 30.0) -> None:
        cwd = os.getcwd()
        os.chdir(CODE)  # ``python -m daemon`` imports from the working directory first
        try:
            super().start(timeout)
        finally:
            os.chdir(cwd)


class ScriptDaemon(Daemon):
    """A daemon started through a bench script's ``--serve`` (:func:`serve_or_run`), which
    patches it before it runs: ``script`` is that script's path."""

    script: ClassVar[str]

    def command(self) -> list[str]:
        return [sys.executable, self.script, "--serve", *super().command()[3:]]


def serve_or_run(patch: Callable[[], None], main: Callable[[], int]) -> None:
    """A bench idea's entry point: ``--serve ARGS`` runs the daemon (``python -m daemon
    ARGS``) with ``patch()`` applied first (a :class:`ScriptDaemon` starts it so); anything
    else runs ``main()``."""
    if sys.argv[1:2] == ["--serve"]:
        patch()
        sys.argv = ["daemon", *sys.argv[2:]]
        runpy.run_module("daemon", run_name="__main__")
    else:
        sys.exit(main())


def record_delta(service: Any, identity: dict[str, Any], body: dict[str, Any]) -> Any:
    """A memory-delta body written in process through ``service`` (DeltaService.record), as
    the endpoint writes it: for benchmarks that seed or time the write without HTTP."""
    return service.record(
        identity,
        workspace_id=identity["workspace_id"],
        project_key=body["project_key"],
        delta_type=body["delta_type"],
        summary=body["summary"],
        why_it_matters=body.get("why_it_matters"),
        triggers=body["retrieval_triggers"],
        importance=body["importance"],
        source="memory_delta",
    )


def daemon_env(home: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "MEMORYCLOUD_HOME": str(home),
        "MEMORYCLOUD_SECRETS": "file",
        "PYTHONPATH": str(CODE),
    }
    env.pop("MEMORYCLOUD_API_KEY", None)
    return env


def owner_key(home: Path) -> str:
    """The owner key the daemon created on first start (file secret backend)."""
    from state.paths import resolve_paths
    from state.secrets import open_secret_store
    from state.setup import OWNER_KEY_SECRET

    key = open_secret_store(resolve_paths({"MEMORYCLOUD_HOME": str(home)}).secrets_file).get(OWNER_KEY_SECRET)
    if not key:
        raise RuntimeError("no owner key: start the daemon first")
    return key


async def create_agents(
    port: int, owner: str, count: int, prefix: str = "bench", runtime: str = "codex"
) -> list[dict[str, Any]]:
    """``count`` agents in the default workspace over ``POST /api/local/agents``."""
    client = await RawClient(port, owner).connect()
    try:
        return [
            await client.json("POST", "/api/local/agents", {"name": f"{prefix}-{i:03d}", "runtime": runtime})
            for i in range(count)
        ]
    finally:
        await client.close()


# -- the machine ---------------------------------------------------------------------------


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()


def wait_for_quiet(max_load: float, max_wait: float, poll: float = 10.0) -> tuple[float, float]:
    """Wait (up to ``max_wait`` s) until the 1-minute load average is at most ``max_load``.
    Returns (load when starting, seconds waited). The machine is shared: say what it was."""
    waited = 0.0
    while waited < max_wait and os.getloadavg()[0] > max_load:
        print(f"load {os.getloadavg()[0]:.2f} > {max_load}: waiting", file=sys.stderr)
        time.sleep(poll)
        waited += poll
    return os.getloadavg()[0], waited


def machine_line() -> str:
    from state.db import connect

    conn = connect(":memory:")
    try:
        sqlite_version, vec_version = conn.execute("select sqlite_version(), vec_version()").fetchone()
    finally:
        conn.close()
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}; shared"
        f" with other work), Python {platform.python_version()}, SQLite {sqlite_version},"
        f" sqlite-vec {vec_version}"
    )


def code_state() -> str:
    """The commit measured: ``git describe --dirty`` of the checkout, or the ``.bench-rev``
    file of an exported tree (``git archive REV | tar -x -C DIR``)."""
    marker = CODE / ".bench-rev"
    if marker.exists():
        return marker.read_text(encoding="utf-8").strip()
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=CODE,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip()


# -- statistics ----------------------------------------------------------------------------


@dataclass
class Dist:
    """Percentiles of one sample set in ms."""

    n: int
    p50: float
    p95: float
    p99: float
    mean: float
    max: float

    @classmethod
    def of(cls, samples_ms: list[float]) -> Dist:
        ordered = sorted(samples_ms)
        if not ordered:
            return cls(0, float("nan"), float("nan"), float("nan"), float("nan"), float("nan"))
        return cls(
            len(ordered),
            percentile(ordered, 50),
            percentile(ordered, 95),
            percentile(ordered, 99),
            statistics.fmean(ordered),
            ordered[-1],
        )


# -- /proc readings ------------------------------------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class ProcStat:
    rss_mb: float
    rss_anon_mb: float
    rss_file_mb: float
    cpu_seconds: float
    threads: int

    @classmethod
    def read(cls, pid: int) -> ProcStat:
        status = {}
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            status[name] = value.strip()

        def mb(name: str) -> float:
            return int(status.get(name, "0 kB").split()[0]) / 1024

        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime
        return cls(
            mb("VmRSS"), mb("RssAnon"), mb("RssFile") + mb("RssShmem"), cpu, int(status.get("Threads", "0"))
        )


def self_cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system
