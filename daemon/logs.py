"""The daemon's logs: ``daemon.log``, rotated, and the optional ``access.log``.

Whoever starts the daemon sends its standard output and error to ``daemon.log``:
``daemon start`` (daemon/process.py), the systemd unit (``StandardOutput=append:``) and the
launchd agent (``StandardOutPath``). A file held open that way cannot be rotated from outside,
so the daemon rotates it itself: when its standard error *is* the log file, records go to a
RotatingFileHandler on that file, and at each rollover the handler points standard output
and error (file descriptors 1 and 2) at the new file, so a traceback or a warning printed
outside logging lands in the current log, not in a renamed one that will be deleted.
Otherwise (``daemon run`` in a terminal, or into a file of the caller's) records go to
standard error, as they always did.

Sizes come from the config's ``[logging]`` table: ``log_max_bytes`` (5 MiB) and
``log_backups`` (3 older files: ``daemon.log.1`` the newest). The access log (``access_log =
true``; off by default, since request lines name what agents search for) is aiohttp's access
logger writing to its own file, rotated the same way.
"""

from __future__ import annotations

import logging
import os
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path

from state.config import Settings
from state.paths import Paths

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
ACCESS_LOGGER = "memorycloud.access"


class FollowingFileHandler(RotatingFileHandler):
    """A RotatingFileHandler that, at each rollover, also moves the file descriptors ``fds``
    (the process's stdout/stderr, which were opened on the same file) to the new file."""

    def __init__(self, path: Path, *, max_bytes: int, backups: int, fds: tuple[int, ...] = ()) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        self.fds = fds

    def doRollover(self) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()  # what was printed belongs to the file being closed
            except (OSError, ValueError, AttributeError):
                pass
        super().doRollover()
        if self.stream is None:
            self.stream = self._open()
        for fd in self.fds:
            os.dup2(self.stream.fileno(), fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        opened, named = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


def configure_daemon_logging(paths: Paths, settings: Settings) -> logging.Handler:
    """Send the daemon's log records to the rotating ``daemon.log`` when its standard error
    is that file, else to standard error (see the module docstring); the handler used."""
    fds = tuple(fd for fd in (1, 2) if _same_file(fd, paths.log_file))
    handler: logging.Handler
    if 2 in fds:
        handler = FollowingFileHandler(
            paths.log_file, max_bytes=settings.log_max_bytes, backups=settings.log_backups, fds=fds
        )
    else:
        handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return handler


def access_logger(paths: Paths, settings: Settings) -> logging.Logger | None:
    """aiohttp's access logger on the rotating ``access.log``, or None (no access log) unless
    the ``access_log`` setting is on."""
    if not settings.access_log:
        return None
    logger = logging.getLogger(ACCESS_LOGGER)
    for old in list(logger.handlers):  # a second serve() in one process (tests): one handler
        logger.removeHandler(old)
        old.close()
    paths.access_log_file.parent.mkdir(parents=True, exist_ok=True)
    handler = RotatingFileHandler(
        paths.access_log_file,
        maxBytes=settings.log_max_bytes,
        backupCount=settings.log_backups,
        encoding="utf-8",
    )
    handler.setFormatter(logging.Formatter("%(message)s"))  # aiohttp writes the whole line
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False  # not into daemon.log as well
    return logger
