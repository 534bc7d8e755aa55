"""Connections to PostgreSQL (psycopg 3).

A URL names the server and the database (``postgresql://USER@HOST:PORT/DB``, or with
``?host=/path`` for a Unix socket). The password never comes from the config file: from the
URL of MEMORYCLOUD_DATABASE_URL (as any libpq URL may carry one; never written anywhere), else
``PGPASSWORD``, else the secret store (`memorycloud config set-database-password`: the
keyring, or the secrets file readable by its owner only), else libpq's ``~/.pgpass``. Errors are this package's
:class:`StoreUnavailable` with the URL's password masked, in words a person can act on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from state.errors import StoreUnavailable

T = TypeVar("T")

# The oldest server and pgvector the migrations are written for: HNSW indexes came with
# pgvector 0.5; PostgreSQL 13 is the oldest release its 0.6 line builds on that is still kept.
MIN_SERVER_VERSION = 130000
MIN_PGVECTOR = (0, 5, 0)
_PASSWORD = re.compile(r"(://[^:/@]+:)[^@]*@")


def masked(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***`` (for messages and logs)."""
    return _PASSWORD.sub(r"\1***@", url)


def has_password(url: str) -> bool:
    """Whether ``url`` carries a password (``postgresql://user:secret@host/db``)."""
    return re.search(r"://[^:/@]+:[^@]+@", url) is not None  # "user:@host": none


def psycopg_module() -> Any:
    """psycopg, or a clear error when the optional dependency is missing."""
    try:
        import psycopg
    except ImportError as exc:
        raise StoreUnavailable(
            "PostgreSQL needs the psycopg package: pip install 'memorycloud-companion[postgres]'"
        ) from exc
    return psycopg


# The name of the team server's database password in the secret store (the keyring, else the
# secrets file): `memorycloud config set-database-password`.
DATABASE_PASSWORD_SECRET = "database_password"


def database_password(url: str, secrets_file: Path) -> str | None:
    """The password stored for the database (`config set-database-password`), when neither
    ``url`` nor PGPASSWORD carries one; else None (libpq then reads ~/.pgpass itself)."""
    if has_password(url) or os.environ.get("PGPASSWORD"):
        return None
    from state.secrets import open_secret_store

    return open_secret_store(secrets_file).get(DATABASE_PASSWORD_SECRET) or None


# How long a connection attempt waits for the server before it is given up.
CONNECT_TIMEOUT_SECONDS = 10


def connect_options(password: str | None) -> dict[str, Any]:
    """psycopg's connect() keywords every connection of the daemon uses: autocommit, the
    connect timeout and ``password`` (the stored one, if any)."""
    options: dict[str, Any] = {"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_SECONDS}
    if password:
        options["password"] = password
    return options


def unreachable(url: str, exc: Exception) -> StoreUnavailable:
    """The error for a server that cannot be reached at ``url`` (its password masked)."""
    return StoreUnavailable(f"cannot connect to PostgreSQL at {masked(url)}: {first_line(exc)}")


def connect(url: str, *, autocommit: bool = True, password: str | None = None) -> Any:
    """A psycopg connection to ``url``, pgvector's types known to it. Autocommit by default:
    a caller groups statements with ``with conn.transaction():``. ``password``: the stored
    one (:func:`database_password`), if any."""
    psycopg = psycopg_module()
    try:
        conn = psycopg.connect(url, **{**connect_options(password), "autocommit": autocommit})
    except psycopg.Error as exc:
        raise unreachable(url, exc) from exc
    return conn


def versions(conn: Any) -> dict[str, str]:
    """The server's and pgvector's versions (pgvector: "" when the extension is not created)."""
    server = conn.execute("show server_version").fetchone()[0]
    row = conn.execute("select extversion from pg_extension where extname = 'vector'").fetchone()
    return {"postgresql": server, "pgvector": row[0] if row else ""}


def check_server(conn: Any) -> None:
    """Refuse a server older than MIN_SERVER_VERSION, and one where pgvector cannot be made
    available, with what to do."""
    number = int(conn.execute("show server_version_num").fetchone()[0])
    if number < MIN_SERVER_VERSION:
        raise StoreUnavailable(
            f"PostgreSQL {conn.execute('show server_version').fetchone()[0]} is too old: the team"
            f" server needs {MIN_SERVER_VERSION // 10000} or newer"
        )
    available = conn.execute(
        "select default_version from pg_available_extensions where name = 'vector'"
    ).fetchone()
    if available is None:
        raise StoreUnavailable(
            "the PostgreSQL server has no pgvector extension: install it (managed services offer"
            " it: RDS, Cloud SQL, Azure, Neon, Supabase), then restart the daemon"
        )
    if _version_tuple(available[0]) < MIN_PGVECTOR:
        raise StoreUnavailable(
            f"pgvector {available[0]} is too old: the team server needs"
            f" {'.'.join(map(str, MIN_PGVECTOR))} or newer (HNSW indexes)"
        )


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class OwnConnection:
    """A connection of its own, for work a daemon does in a worker thread beside its request
    connection (the vector writer, the shared request counts): opened at first use, and a
    ``run`` that finds it dropped by the server (a failover, a restart) runs once more on a
    new one. Each ``run`` should be one transaction, so that nothing is ever half done; one
    ``run`` at a time (the caller's lock)."""

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self._conn: Any = None

    def run(self, work: Callable[[Any], T]) -> T:
        for attempt in (1, 2):
            if self._conn is None or self._conn.closed:
                self._conn = self._connect()
            try:
                return work(self._conn)
            except Exception:
                lost = self._conn.closed
                self.close()  # after any error the connection may be broken: a new one next
                if not lost or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None
