"""Running the daemon in the foreground: bind, write the runtime file, stop on SIGTERM."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import signal
from typing import Any

from aiohttp import web

from daemon.app import create_app
from daemon.logs import access_logger
from daemon.process import process_start
from state.atomic import write_atomic
from state.config import Settings
from state.errors import MemoryCloudError
from state.ids import now_iso
from state.paths import Paths

log = logging.getLogger(__name__)


class PortInUse(MemoryCloudError):
    code = "port_in_use"


def _is_loopback(host: str) -> bool:
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


def write_runtime_file(paths: Paths, settings: Settings, port: int) -> None:
    info: dict[str, Any] = {
        "pid": os.getpid(),
        "host": settings.host,
        "port": port,
        "url": f"http://{_url_host(settings.host)}:{port}",
        "started_at": now_iso(),
        # `daemon stop` tells this process from a later one with its pid.
        "process_start": process_start(os.getpid()),
    }
    write_atomic(paths.runtime_file, json.dumps(info))
    write_atomic(paths.pid_file, str(os.getpid()))


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def remove_runtime_files(paths: Paths) -> None:
    for path in (paths.runtime_file, paths.pid_file):
        try:
            # Only remove files that still describe this process (a new daemon may own them).
            if path == paths.pid_file and path.read_text().strip() != str(os.getpid()):
                continue
            if path == paths.runtime_file and json.loads(path.read_text()).get("pid") != os.getpid():
                continue
            path.unlink()
        except (FileNotFoundError, ValueError):
            pass


async def serve(settings: Settings, paths: Paths) -> None:
    """Serve until SIGTERM or SIGINT, then shut down cleanly (store closed, files removed)."""
    if not _is_loopback(settings.host):
        log.warning(
            "listening on %s: the daemon is reachable beyond this machine. Serve it"
            " behind a TLS-terminating reverse proxy (keys travel in headers).",
            settings.host,
        )
    if settings.role == "cloud":
        log.info("cloud role: serving AMP and the sync extension to the daemons paired here")
    app = create_app(settings, paths)
    runner = web.AppRunner(app, access_log=access_logger(paths, settings), handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, settings.host, settings.port, reuse_address=True)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            raise PortInUse(
                f"cannot listen on {settings.host}:{settings.port}: "
                + (
                    "the port is already in use by another program"
                    if exc.errno == errno.EADDRINUSE
                    else "permission denied"
                )
                + ". Choose another with --port or `memorycloud config set port N`."
            ) from exc
        raise
    port = runner.addresses[0][1] if runner.addresses else settings.port
    try:
        write_runtime_file(paths, settings, port)
    except OSError as exc:  # a full disk or a read-only state directory
        await runner.cleanup()
        raise MemoryCloudError(f"cannot write {paths.runtime_file}: {exc.strerror}") from exc
    log.info(
        "MemoryCloud Companion daemon listening on http://%s:%d (pid %d)",
        _url_host(settings.host),
        port,
        os.getpid(),
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
        log.info("stopping")
    finally:
        await runner.cleanup()
        remove_runtime_files(paths)
        log.info("stopped")
