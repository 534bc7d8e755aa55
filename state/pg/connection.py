"""The store's repositories on PostgreSQL: one psycopg connection that answers as the SQLite
connection they were written for does.

The repositories (state/*.py) write their SQL once, in the subset both engines take (``insert
... on conflict``, ``returning``, ``coalesce``, ``substr``; timestamps as ISO text, JSON as
text). :class:`PgConnection` gives that SQL to PostgreSQL: ``?`` placeholders become psycopg's,
the few SQLite spellings left are rewritten (``insert or ignore``, ``x is ?``, ``like``), the
SQLite functions the SQL calls exist on the server (migration m0002: ``json_extract``,
``json_each``), and rows read by position or by column name as ``sqlite3.Row`` does. Errors
come out as the SQLite module's classes (IntegrityError, OperationalError), which is what
the repositories and state/storage_errors.py catch.

**Writers.** SQLite lets one transaction write at a time (``BEGIN IMMEDIATE``), and the
repositories' read-then-write steps (the next version of a memory, a code used once) rely
on it. Here ``begin immediate`` takes a transaction-level advisory lock, so the write
transactions of every process on one database run one after another as they do on one
SQLite file: the changes feed and the outbox, ordered by their identity columns, commit in
that order, and a cursor never skips a row that commits later with a smaller number. What
still runs in parallel across processes is everything outside those transactions (HTTP,
validation, tokens, vectors) and every read.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from typing import Any

from state.db import sqlite_module
from state.errors import InvalidRequest, StoreUnavailable, WriteLockBusy
from state.group_commit import apart, may_wait_for_write_lock
from state.pg.engine import connect, first_line

log = logging.getLogger(__name__)

# pg_advisory_xact_lock's key for "a write transaction": the letters MCWR.
WRITE_LOCK = 0x4D435752

_LITERAL = re.compile(r"('(?:[^']|'')*')")
_INSERT_OR_IGNORE = re.compile(r"^\s*insert\s+or\s+ignore\s+into\b", re.IGNORECASE)
_IS_PLACEHOLDER = re.compile(r"\bis\s+(not\s+)?\?", re.IGNORECASE)
_LIKE = re.compile(r"(?<![\w.])like(?=\s)", re.IGNORECASE)
_RETURNING = re.compile(r"\breturning\b", re.IGNORECASE)
# SQLite's ``cross join T t on ...`` (an inner join in the order written) is PostgreSQL's
# ``join T t on ...``; a cross join without ``on`` stays one.
# ``? is null``: PostgreSQL must know a parameter's type, which a bare null does not give.
_PLACEHOLDER_IS_NULL = re.compile(r"\?(\s+is\s+(?:not\s+)?null\b)", re.IGNORECASE)
_CROSS_JOIN_ON = re.compile(r"\bcross\s+join\s+(\w+(?:\s+(?!on\b)\w+)?)\s+on\b", re.IGNORECASE)


@lru_cache(maxsize=2048)
def translate(sql: str) -> str:
    """SQLite-flavoured SQL of the repositories as PostgreSQL SQL with psycopg placeholders.
    String literals are kept as written (but for psycopg's ``%%``)."""
    parts = _LITERAL.split(sql)  # odd parts are literals
    for index, part in enumerate(parts):
        if index % 2:
            parts[index] = part.replace("%", "%%")
            continue
        part = _IS_PLACEHOLDER.sub(
            lambda m: "is distinct from ?" if m.group(1) else "is not distinct from ?", part
        )
        part = _PLACEHOLDER_IS_NULL.sub(r"cast(? as text)\1", part)
        part = _CROSS_JOIN_ON.sub(r"join \1 on", part)
        part = _LIKE.sub("ilike", part)  # SQLite's LIKE ignores ASCII case; PostgreSQL's does not
        parts[index] = part.replace("%", "%%").replace("?", "%s")
    sql = "".join(parts)
    if _INSERT_OR_IGNORE.match(sql):
        sql = _INSERT_OR_IGNORE.sub("insert into", sql, count=1)
        returning = _RETURNING.search(sql)
        if returning:
            sql = f"{sql[: returning.start()]}on conflict do nothing {sql[returning.start() :]}"
        else:
            sql = f"{sql.rstrip().rstrip(';')} on conflict do nothing"
    return sql


class PgRow(tuple):
    """A row read by position or by column name (``row[0]``, ``row["id"]``, ``dict(row)``), as
    sqlite3.Row."""

    _names: tuple[str, ...] = ()

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._names.index(key))
            except ValueError:
                raise IndexError(f"no such column: {key}") from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


def _row_factory(cursor: Any) -> Any:
    names = tuple(column.name for column in cursor.description or ())
    row_type = type("Row", (PgRow,), {"_names": names, "__slots__": ()})
    return lambda values: row_type(values)


def _params(params: Sequence[Any] | None) -> tuple[Any, ...]:
    # Booleans are stored as 0/1 integers, as SQLite stores them.
    return tuple(int(p) if isinstance(p, bool) else p for p in params or ())


class PgCursor:
    """What a repository reads from ``conn.execute(...)``."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def fetchone(self) -> Any:
        return self._cursor.fetchone() if self._cursor.description else None

    def fetchall(self) -> list[Any]:
        return self._cursor.fetchall() if self._cursor.description else []

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())

    @property
    def rowcount(self) -> int:
        return int(self._cursor.rowcount)

    @property
    def description(self) -> Any:
        return self._cursor.description


class PgConnection:
    """A psycopg connection (autocommit; transactions are explicit ``begin``/``commit``, as on
    the SQLite connection) behind the sqlite3 API the repositories use.

    **A lost connection is replaced.** A managed PostgreSQL drops its connections at a
    failover, a restart or a proxy's idle timeout. The statement that finds the connection
    gone fails (a write's transaction with it: its requests are told, and nothing of it was
    acknowledged), and the next statement runs on a new connection (``reconnect``), so the
    process serves again as soon as the server answers, without a restart."""

    engine = "postgresql"

    def __init__(self, raw: Any, reconnect: Callable[[], Any] | None = None) -> None:
        self._raw = raw
        self._reconnect = reconnect
        self._errors = error_map()

    @classmethod
    def open(cls, url: str, password: str | None = None) -> PgConnection:
        def opened() -> Any:
            return connect(url, autocommit=True, password=password)

        return cls(opened(), reconnect=opened)

    @property
    def raw(self) -> Any:
        """The psycopg connection: a new one if the server dropped the last (raises
        StoreUnavailable while the server cannot be reached); in work running apart, that
        work's connection (state/pg/apart_pool.py)."""
        elsewhere = apart()
        if elsewhere is not None:
            return elsewhere.raw
        if self._reconnect is not None and self._raw.closed:
            log.warning("the connection to PostgreSQL was lost: connecting again")
            self._raw = self._reconnect()
        return self._raw

    def live(self) -> LiveConnection:
        """This connection for code that speaks psycopg itself (the search index): each use
        goes to the current psycopg connection, a replaced one included."""
        return LiveConnection(self)

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        elsewhere = apart()
        raw = self._raw if elsewhere is None else elsewhere.raw
        if raw.closed:  # whatever was open is gone with the connection
            return False
        return bool(raw.info.transaction_status != TransactionStatus.IDLE)

    def cursor(self) -> _TupleCursor:
        """A cursor whose rows are plain tuples (``cursor.row_factory = None`` on SQLite)."""
        return _TupleCursor(self)

    def execute(self, sql: str, params: Sequence[Any] | None = None, *, tuples: bool = False) -> PgCursor:
        head = sql.lstrip()[:16].lower()
        if head.startswith("begin"):
            if apart() is not None:
                # A read apart must not write (its caller took it for a read, and it runs
                # beside the writes it would race); a write apart is inside its batch's
                # transaction already (state/db.py makes its transaction a SAVEPOINT).
                raise RuntimeError("a transaction begun in work that runs apart from the event loop")
            return self._run(self._begin)
        if head.startswith("commit"):
            return self._run(_commit)
        factory = None if tuples else _row_factory

        def run(raw: Any) -> PgCursor:
            cursor = raw.cursor(row_factory=factory) if factory else raw.cursor()
            cursor.execute(translate(sql), _params(params))
            return PgCursor(cursor)

        return self._run(run)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> PgCursor:
        def run(raw: Any) -> PgCursor:
            cursor = raw.cursor(row_factory=_row_factory)
            cursor.executemany(translate(sql), [_params(r) for r in rows])
            return PgCursor(cursor)

        return self._run(run)

    def _run(self, run: Callable[[Any], PgCursor]) -> PgCursor:
        """``run`` on the connection, psycopg's errors as SQLite's. A statement outside a
        transaction that meets a lost connection runs again on a new one (it was a read, or a
        transaction's ``begin``: nothing of it took effect); inside one, the transaction is
        lost and the error says so. Work apart runs on its own connection, whose pool runs a
        read again (state/pg/apart_pool.py)."""
        elsewhere = apart()
        if elsewhere is not None:
            try:
                return run(elsewhere.raw)
            except self._errors.psycopg_error as exc:
                raise self._errors.sqlite_error(exc, lost=elsewhere.raw.closed) from exc
        idle = not self.in_transaction
        try:
            return run(self.raw)
        except self._errors.psycopg_error as exc:
            if not (idle and self._reconnect is not None and self._raw.closed):
                raise self._errors.sqlite_error(exc, lost=self._raw.closed) from exc
        try:
            return run(self.raw)  # self.raw connects again
        except self._errors.psycopg_error as exc:
            raise self._errors.sqlite_error(exc, lost=self._raw.closed) from exc

    @staticmethod
    def _begin(raw: Any) -> PgCursor:
        """``begin`` (and SQLite's ``begin immediate``): a transaction that writes after every
        other process's write transaction (see the module's docstring). A request's first
        write does not wait for the lock here, on the event loop: WriteLockBusy, nothing
        begun (state/group_commit.py, _FIRST_WRITE_APART)."""
        raw.execute("begin")
        if may_wait_for_write_lock():
            return PgCursor(raw.execute("select pg_advisory_xact_lock(%s)", (WRITE_LOCK,)))
        cursor = raw.execute("select pg_try_advisory_xact_lock(%s)", (WRITE_LOCK,))
        if not cursor.fetchone()[0]:
            raw.execute("rollback")
            raise WriteLockBusy()
        return PgCursor(cursor)

    def try_begin(self) -> bool:
        """Begin a write transaction if no other process holds the write lock (True), else
        nothing (False): never waits."""
        raw = self.raw
        try:
            raw.execute("begin")
            if raw.execute("select pg_try_advisory_xact_lock(%s)", (WRITE_LOCK,)).fetchone()[0]:
                return True
            raw.execute("rollback")
            return False
        except self._errors.psycopg_error as exc:
            raise self._errors.sqlite_error(exc, lost=self._raw.closed) from exc

    def close(self) -> None:
        self._raw.close()


def _commit(raw: Any) -> PgCursor:
    """COMMIT, or an error if the transaction had failed: PostgreSQL answers the COMMIT of a
    transaction that one failed statement aborted with a ROLLBACK, and no error, so a write
    would be answered as stored when nothing of it was (SQLite rolls back only the failed
    statement). A statement outside every SAVEPOINT of the group's writes (a read that failed
    while the group's transaction was open) can do that to a group commit."""
    cursor = raw.execute("commit")
    if (cursor.statusmessage or "").upper() == "ROLLBACK":
        raise StoreUnavailable(
            "a statement failed inside this write's transaction, which the database then rolled"
            " back: nothing was stored; send the write again"
        )
    return PgCursor(cursor)


class LiveConnection:
    """A psycopg connection's API, forwarded to a :class:`PgConnection`'s current one."""

    def __init__(self, owner: PgConnection) -> None:
        self._owner = owner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.raw, name)


class _TupleCursor:
    """What ``conn.cursor()`` gives the repositories that read plain tuples for speed."""

    row_factory: Any = None

    def __init__(self, conn: PgConnection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> PgCursor:
        return self._conn.execute(sql, params, tuples=self.row_factory is None)


class _ErrorMap:
    """psycopg's errors as the SQLite module's classes."""

    def __init__(self) -> None:
        import psycopg

        self.psycopg_error = psycopg.Error
        self._integrity = psycopg.errors.IntegrityError
        self._sqlite = sqlite_module()

    def sqlite_error(self, exc: Exception, lost: bool = False) -> Exception:
        if lost:
            # A failover, a restart, a dropped connection: the next statement connects again
            # (PgConnection.raw). A COMMIT it cut off may or may not have taken effect.
            return StoreUnavailable(
                f"the connection to PostgreSQL was lost ({first_line(exc)}): the write in"
                " progress was not acknowledged; retry it (with its Idempotency-Key a retry is"
                " never stored twice)"
            )
        if "cannot contain NUL" in str(exc):
            # SQLite keeps a NUL character in text; PostgreSQL's text cannot hold one. The
            # write is refused whole, saying why, rather than stored without it.
            return InvalidRequest(
                "text with a NUL character (\\u0000) cannot be stored on this server's"
                " PostgreSQL database: remove it and send the write again"
            )
        kind = (
            self._sqlite.IntegrityError if isinstance(exc, self._integrity) else self._sqlite.OperationalError
        )
        error = kind(str(exc).strip())
        error.pg_sqlstate = getattr(exc, "sqlstate", None)  # type: ignore[attr-defined]
        return error


@lru_cache(maxsize=1)
def error_map() -> _ErrorMap:
    return _ErrorMap()
