"""Moving a SQLite store onto PostgreSQL (``memorycloud migrate-store --to URL``, issue #18).

Every table of the PostgreSQL schema is copied from the SQLite file in the schema's order
(a table after those it references), in batches of rows taken in rowid order. Each batch is
one PostgreSQL transaction together with its place in ``store_copy_progress``, so a copy that
is stopped (Ctrl-C, a kill, a lost connection) resumes after its last whole batch and never
copies a row twice. Memory records are indexed for search as they arrive (the PostgreSQL
engine's index, state/pg/search.py); the triggers that number the changes feed and fill the
outbox are held off for the batches of memory_versions, whose change-log rows are copied as
they were. Then each table is verified: the same number of rows on both sides and the same
checksum (an order-free sum of each row's SHA-256 over its values).

SQLite's own tables (its FTS5 and vector indexes, ``index_builds``, ``schema_migrations``)
are not copied: the PostgreSQL engine has its own.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from state.errors import InvalidRequest, StoreUnavailable
from state.json_text import loads
from state.pg.migrations import known
from state.pg.store import PgStore
from state.search import record_text
from state.store import Store

BATCH_ROWS = 500
SKIPPED = {"index_builds"}
# The triggers (m0002) held off while memory_versions' rows are copied: their change-log and
# outbox rows come from the source as they were.
VERSION_TRIGGERS = ("memory_version_inserted", "memory_version_redacted")
# Tables whose integer key is an identity column: the sequence goes on from the copied rows.
IDENTITY_COLUMNS = {
    "memory_records": "seq",
    "mem1_messages": "seq",
    "sync_changelog": "seq",
    "upstream_outbox": "seq",
    "managed_regions": "id",
}


@dataclass
class TableCopy:
    """One table's copy: rows in the source, rows copied so far, verification."""

    table: str
    source_rows: int
    copied: int = 0
    target_rows: int | None = None
    source_checksum: str | None = None
    target_checksum: str | None = None

    @property
    def verified(self) -> bool:
        return (
            self.target_rows == self.source_rows
            and self.source_checksum is not None
            and self.source_checksum == self.target_checksum
        )


Progress = Callable[[TableCopy], None]


def table_order() -> list[str]:
    """The PostgreSQL schema's store tables in creation order (each after those it references);
    not the search index's (m0001), which the copy fills by indexing the records."""
    sql = "\n".join(text for _, _, text in known())
    search_tables = set(re.findall(r"^create table (\w+)", known()[0][2], re.MULTILINE))  # m0001's own
    return [
        name
        for name in re.findall(r"^create table (\w+)", sql, re.MULTILINE)
        if name not in SKIPPED and name not in search_tables
    ]


class StoreCopy:
    """Copies ``source`` (a SQLite store, not being written: the daemon stopped) into
    ``target`` (a PostgreSQL store, empty or holding an earlier run of this copy)."""

    def __init__(self, source: Store, target: PgStore) -> None:
        self.source = source
        self.target = target
        self.raw = target.conn.raw
        self.raw.execute(
            "create table if not exists store_copy_progress (table_name text primary key,"
            " last_rowid bigint not null, copied bigint not null, done boolean not null default false)"
        )

    # -- copying ---------------------------------------------------------------------------

    def check_target(self) -> None:
        """Refuse a database that holds a store this copy did not start (nothing is written)."""
        started = self.raw.execute("select count(*) from store_copy_progress").fetchone()[0]
        if started:
            return
        for table in ("identities", "memory_records"):
            if self.raw.execute(f"select exists (select 1 from {table})").fetchone()[0]:
                raise StoreUnavailable(
                    f"the PostgreSQL database already holds a store ({table} has rows) that no"
                    " migrate-store started: copy into an empty database"
                )

    def run(self, progress: Progress | None = None) -> list[TableCopy]:
        """Copy every table (resuming where an earlier run stopped), then verify each."""
        self.check_target()
        copies = []
        for table in table_order():
            copy = TableCopy(table, self._source_count(table))
            copy.copied = self._copy_table(table, copy, progress)
            copies.append(copy)
        self._continue_sequences()
        for copy in copies:
            self.verify(copy)
            if progress:
                progress(copy)
        return copies

    def _source_count(self, table: str) -> int:
        return int(self.source.conn.execute(f"select count(*) from {table}").fetchone()[0])

    def _columns(self, table: str) -> list[str]:
        source = [row[1] for row in self.source.conn.execute(f"pragma table_info({table})")]
        target = {
            row[0]
            for row in self.raw.execute(
                "select column_name from information_schema.columns where table_name = %s", (table,)
            )
        }
        return [c for c in source if c in target]

    def _copy_table(self, table: str, copy: TableCopy, progress: Progress | None) -> int:
        row = self.raw.execute(
            "select last_rowid, copied, done from store_copy_progress where table_name = %s", (table,)
        ).fetchone()
        last, copied, done = row if row else (0, 0, False)
        if done:
            return int(copied)
        columns = self._columns(table)
        names = ", ".join(columns)
        marks = ", ".join(["%s"] * len(columns))
        insert = f"insert into {table} ({names}) values ({marks}) on conflict do nothing"
        for batch in self._batches(table, columns, last):
            with self.raw.transaction():
                if table == "memory_versions":
                    for trigger in VERSION_TRIGGERS:
                        self.raw.execute(f"alter table memory_versions disable trigger {trigger}")
                rows = [tuple(values[1:]) for values in batch]
                try:
                    self.raw.cursor().executemany(insert, rows)
                except Exception as exc:  # psycopg's: a value PostgreSQL refuses
                    if "NUL" in str(exc):
                        raise InvalidRequest(
                            f"a row of {table} holds text with a NUL character, which PostgreSQL's"
                            " text cannot store; nothing of this batch was copied"
                        ) from exc
                    raise
                if table == "memory_records":
                    self._index(columns, rows)
                if table == "memory_versions":
                    for trigger in VERSION_TRIGGERS:
                        self.raw.execute(f"alter table memory_versions enable trigger {trigger}")
                last = batch[-1][0]
                copied += len(batch)
                self._save(table, last, copied, False)
            copy.copied = copied
            if progress:
                progress(copy)
        with self.raw.transaction():
            self._save(table, last, copied, True)
        return int(copied)

    def _batches(self, table: str, columns: list[str], after: int) -> Iterator[list[tuple[Any, ...]]]:
        select = f"select rowid, {', '.join(columns)} from {table} where rowid > ? order by rowid limit cast(? as integer)"
        while True:
            batch = [tuple(r) for r in self.source.conn.execute(select, (after, BATCH_ROWS)).fetchall()]
            if not batch:
                return
            yield batch
            after = batch[-1][0]

    def _index(self, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
        """The live records of a batch into the search index (as the SQLite engine holds them)."""
        at = {name: i for i, name in enumerate(columns)}
        for row in rows:
            if row[at["deleted_at"]] is not None:
                continue
            triggers = loads(row[at["triggers"]] or "[]")
            self.target.search.add(
                row[at["seq"]],
                row[at["namespace"]],
                record_text(row[at["title"]], row[at["content"]], triggers),
            )

    def _save(self, table: str, last: int, copied: int, done: bool) -> None:
        self.raw.execute(
            "insert into store_copy_progress (table_name, last_rowid, copied, done) values (%s, %s, %s, %s)"
            " on conflict (table_name) do update set last_rowid = excluded.last_rowid,"
            " copied = excluded.copied, done = excluded.done",
            (table, last, copied, done),
        )

    def _continue_sequences(self) -> None:
        """New rows on the server are numbered after the copied ones."""
        for table, column in IDENTITY_COLUMNS.items():
            self.raw.execute(
                f"select setval(pg_get_serial_sequence('{table}', '{column}'),"
                f" coalesce((select max({column}) from {table}), 0) + 1, false)"
            )

    # -- verifying -------------------------------------------------------------------------

    def verify(self, copy: TableCopy) -> None:
        """Count and checksum the table on both sides."""
        columns = self._columns(copy.table)
        select = f"select {', '.join(columns)} from {copy.table}"
        copy.source_rows, copy.source_checksum = checksum(self.source.conn.execute(select))
        copy.target_rows, copy.target_checksum = checksum(self.raw.execute(select))


def checksum(rows: Any) -> tuple[int, str]:
    """(rows, an order-free checksum): the sum, modulo 2**256, of each row's SHA-256 over its
    values as JSON (bytes as hex), so the same rows in any order give the same sum."""
    total = count = 0
    for row in rows:
        text = json.dumps([v.hex() if isinstance(v, bytes | memoryview) else v for v in _plain(row)])
        total = (total + int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest(), "big")) % 2**256
        count += 1
    return count, f"{total:064x}"


def _plain(row: Any) -> list[Any]:
    return [bytes(v) if isinstance(v, memoryview) else v for v in row]
