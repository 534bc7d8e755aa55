"""The record of what built each derived search index, and the table moves of a rebuild.

Rows of ``index_builds`` (migration m0016) say what made the FTS and vector tables that
answer now and what a rebuild in progress makes instead (state/rebuild.py drives it). Every
reader asks the database, never a copy kept in memory: a rebuild advances in another
process's transactions as well as in this one's, and a rolled-back batch must not leave a
process believing it happened. Reading the three rows costs a few microseconds.

Discarding a large index is the expensive part: with ``secure_delete`` on (state/db.py, for
redaction) dropping a table overwrites every page it held, in one statement (measured:
0.14 s per 10k vectors of 1024 dimensions, so ~1.4 s at 100k, and 0.6 s for the FTS index
at 100k). :func:`discard_index` therefore only moves the index's data tables out of the way
(renames them ``trash_...``, a few ms) and drops the emptied virtual table; the moved
tables are plain tables, deleted in short batches later (:func:`empty_trash`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from state import (
    tokenize,
    tokenize_v1,
    tokenize_v2,
    tokenize_v4,
    tokenize_v5,
    tokenize_v6,
    tokenize_v7,
    turn_context,
)
from state.db import Connection
from state.embedders import coarse_bits
from state.group_commit import run_deferred

FTS = "memory_fts"
FTS_NEXT = "memory_fts_next"  # the new FTS table while it is built, beside the old one
VECTORS = "memory_vec"
SUITES = "suite_fts"
# Vectors are stored as int8 and compared by cosine, each with its coarse code for the first
# pass over a large namespace (state/embedders.py coarse_code, state/search.py): part of their
# identity, so a store whose table lacks the codes rebuilds it (state/rebuild.py).
VECTOR_METRIC = "int8-cosine+coarse2"
# Earlier layouts, for describing an identity: codes of 512 slots, int8 vectors without codes.
OLD_VECTOR_METRICS = ("int8-cosine+coarse1", "int8-cosine")
TRASH = "trash_"
# Shadow tables a virtual table's constructor reads: left in place by discard_index, so the
# table can still be connected to, and dropped. They are a few rows each.
CONSTRUCTOR_TABLES = ("_config", "_info")
# How fast a COMMIT writes the pages secure_delete zeroed (a DROP of 10k vectors put 10.8 MB
# in the WAL in 0.14 s: ~19k pages/s, here with room to spare): empty_trash's budget unit.
ZEROED_PAGES_PER_SECOND = 12_000

# Tokenizers no longer current that a store's index may still be built with. 3 and 4 share
# one module: their tokens are the same (4 changed only which turns get context). 8 and 9
# are not here: their tokens are the current version's (9 and 10 changed only which records
# are turns), so an index built with either is queried by the current module.
FROZEN_TOKENIZERS: dict[int, ModuleType] = {
    1: tokenize_v1,
    2: tokenize_v2,
    3: tokenize_v4,
    4: tokenize_v4,
    5: tokenize_v5,
    6: tokenize_v6,
    7: tokenize_v7,
}


class Embedder(Protocol):
    name: str
    dimension: int


@dataclass(frozen=True)
class IndexBuild:
    """One row of ``index_builds`` (see migration m0016)."""

    name: str
    built_with: str | None = None
    target: str | None = None
    cursor: int = 0
    done: int = 0
    started_at: str | None = None
    finished_at: str | None = None

    @property
    def rebuilding(self) -> bool:
        return self.target is not None


def read_builds(conn: Connection) -> dict[str, IndexBuild]:
    """Every index's row (an index without one: nothing known built it)."""
    rows = conn.execute(
        "select name, built_with, target, cursor, done, started_at, finished_at from index_builds"
    ).fetchall()
    builds = {row[0]: IndexBuild(*row) for row in rows}
    for name in (FTS, VECTORS, SUITES):
        builds.setdefault(name, IndexBuild(name))
    return builds


def save_build(conn: Connection, build: IndexBuild) -> None:
    """Write one row (call inside the transaction that did what it records)."""
    conn.execute(  # an upsert both engines take (PostgreSQL's too: state/pg/reindex.py)
        "insert into index_builds (name, built_with, target, cursor, done, started_at, finished_at)"
        " values (?,?,?,?,?,?,?) on conflict (name) do update set built_with = excluded.built_with,"
        " target = excluded.target, cursor = excluded.cursor, done = excluded.done,"
        " started_at = excluded.started_at, finished_at = excluded.finished_at",
        (
            build.name,
            build.built_with,
            build.target,
            build.cursor,
            build.done,
            build.started_at,
            build.finished_at,
        ),
    )


# -- identities ----------------------------------------------------------------------------


def current_tokenizer() -> tuple[int, ModuleType]:
    """The tokenizer version this code indexes with, and its module."""
    return tokenize.TOKENIZER_VERSION, tokenize


def tokenizer_identity(version: int) -> str:
    return f"tokenizer-{version}"


def tokenizer_version(identity: str | None) -> int | None:
    """The version an identity names (None: not a tokenizer identity)."""
    prefix, _, number = (identity or "").partition("-")
    return int(number) if prefix == "tokenizer" and number.isdigit() else None


def tokenizer_for(identity: str | None) -> ModuleType:
    """The module that makes (and queries) the tokens of an index built with ``identity``.
    An unknown version (a newer release's store) gets the current one: the best guess, and
    that index is rebuilt anyway."""
    version, module = current_tokenizer()
    wanted = tokenizer_version(identity)
    if wanted is None or wanted == version:
        return module
    return FROZEN_TOKENIZERS.get(wanted, module)


def wanted_tokenizer() -> str:
    return tokenizer_identity(current_tokenizer()[0])


def vector_identity(embedder: Embedder) -> str:
    """What a vector table built by ``embedder`` is: its name, the metric and the dimension."""
    return f"{embedder.name}:{VECTOR_METRIC}:{embedder.dimension}"


# -- tables --------------------------------------------------------------------------------


def table_exists(conn: Connection, name: str) -> bool:
    return conn.execute("select 1 from sqlite_master where name = ?", (name,)).fetchone() is not None


def create_fts(conn: Connection, name: str, tokenizer: ModuleType) -> None:
    """The FTS5 table of one tokenizer's pre-tokenized text (rowid = memory_records.seq), with
    that version's columns; with context columns, their weights become the table's rank (a
    setting FTS5 keeps in the table, so every ``rank`` over it uses them)."""
    option = tokenizer.FTS_TOKENIZER.replace("'", "''")
    columns = ", ".join(tokenizer.FTS_COLUMNS)
    conn.execute(f"create virtual table {name} using fts5({columns}, tokenize = '{option}')")
    if has_context(tokenizer):
        conn.execute(f"insert into {name} ({name}, rank) values ('rank', ?)", (turn_context.RANK,))


# A quiet-time merge of the live FTS index's segments (daemon/jobs.py IndexMerge): every
# group commit of writes adds a small segment, FTS5's own automerge keeps up to 4 on each
# level, and every query term reads its posting list from each of them. Merged down to one
# segment a level (FTS5's 'merge' command with usermerge 2, MERGE_PAGES leaf pages a step),
# BM25 of a brief's task took 2.9 -> 2.2 ms and a search 3.0 -> 2.4 ms, in process, on a
# 10k store written over HTTP by 8 agents (bench/RESULTS.md, "merging the search index when
# writes pause"); a full 'optimize' gained no more and rewrites the whole index each time.
MERGE_PAGES = 64
USERMERGE = 2


def merge_step(conn: Connection, table: str = FTS, pages: int = MERGE_PAGES) -> bool:
    """Merge up to about ``pages`` leaf pages of ``table``'s segments, levels with two or more
    segments first; False when there was nothing to merge (FTS5 changes at most one row
    then). Call inside a transaction. Deletions are dropped from the merged segments too."""
    setting = conn.execute(f"select v from {table}_config where k = 'usermerge'").fetchone()
    if setting is None or setting[0] != USERMERGE:  # once per table: a setting FTS5 keeps
        conn.execute(f"insert into {table} ({table}, rank) values ('usermerge', ?)", (USERMERGE,))
    before = conn.total_changes
    conn.execute(f"insert into {table} ({table}, rank) values ('merge', ?)", (pages,))
    return conn.total_changes - before >= 2


def has_context(tokenizer: ModuleType) -> bool:
    """Whether an index of this tokenizer version has the neighbouring-turn columns."""
    return len(tokenizer.FTS_COLUMNS) > 1


def vector_ddl(dimension: int) -> str:
    # Cosine, because each vector is scaled to use int8's whole range (state/embedders.py).
    return (
        "create virtual table memory_vec using vec0(namespace text partition key,"
        f" embedding int8[{dimension}] distance_metric=cosine,"
        f" coarse bit[{coarse_bits(dimension)}])"
    )


def _shadow_tables(conn: Connection, name: str) -> list[tuple[str, str]]:
    """(name, CREATE statement) of a virtual table's shadow tables: ``<name>_...``, except
    those of another virtual table whose name starts so too (memory_fts_next's)."""
    rows = conn.execute("select name, sql from sqlite_master where type = 'table'").fetchall()
    virtual = [
        n
        for n, sql in rows
        if n != name and n.startswith(f"{name}_") and (sql or "").lower().startswith("create virtual table")
    ]
    return [
        (n, sql)
        for n, sql in rows
        if n.startswith(f"{name}_")
        and n not in virtual
        and not any(n.startswith(f"{other}_") for other in virtual)
    ]


def discard_index(conn: Connection, name: str) -> None:
    """Remove the virtual table ``name`` in a few ms, leaving its data as trash tables for
    :func:`empty_trash` (see the module docstring). Call inside a transaction."""
    if not table_exists(conn, name):
        return
    run_deferred(conn)  # rows waiting for the COMMIT go into the table they were made for
    batch = os.urandom(6).hex()  # so one discard's trash never meets another's
    for shadow, create in _shadow_tables(conn, name):
        if shadow.endswith(CONSTRUCTOR_TABLES):
            continue
        conn.execute(f'alter table "{shadow}" rename to "{TRASH}{batch}_{shadow}"')
        conn.execute(create)  # the same table, empty, for the drop below to find
    conn.execute(f'drop table "{name}"')


def trash_tables(conn: Connection, of: str = "") -> list[str]:
    """The trash tables left by discard_index (of the index ``of``, if given)."""
    rows = conn.execute(
        "select name from sqlite_master where type = 'table' and name like ? escape '\\' order by name",
        (TRASH.replace("_", "\\_") + "%",),
    )
    return [row[0] for row in rows if row[0].split("_", 2)[-1].startswith(of)]


def empty_trash(conn: Connection, budget_seconds: float) -> bool:
    """Delete trash rows worth about ``budget_seconds`` (each delete zeroes what it frees);
    True when no trash is left. Call inside a transaction.

    The budget is counted in pages freed, not in time: with ``secure_delete`` a delete only
    zeroes pages in the cache, and writing them to the WAL at COMMIT is the cost (timed,
    a batch of "fast" deletes took 123 ms to commit). Statements grow from one row (a vector
    chunk row is 1 MB, 256 pages) while they free few pages; a table without rowids
    (FTS5's small ``_idx``) is dropped whole."""
    budget = max(1, int(budget_seconds * ZEROED_PAGES_PER_SECOND))
    freed = _pages_freed(conn)
    for table in trash_tables(conn):
        if not _has_rowid(conn, table):
            conn.execute(f'drop table "{table}"')
            continue
        rows = 1
        while True:
            before = freed()
            deleted = conn.execute(
                f'delete from "{table}" where rowid in (select rowid from "{table}" order by rowid limit cast(? as integer))',
                (rows,),
            ).rowcount
            if deleted < rows:
                conn.execute(f'drop table "{table}"')
                break
            if freed() >= budget:
                return False
            if freed() - before < budget / 8:
                rows *= 2
    return True


def _pages_freed(conn: Connection) -> Callable[[], int]:
    """Pages freed since this call (how much the free list grew)."""
    start = conn.execute("pragma freelist_count").fetchone()[0]
    return lambda: conn.execute("pragma freelist_count").fetchone()[0] - start


def drop_trash(conn: Connection, of: str) -> None:
    """Drop the trash of one index at once (a redaction: the old FTS text must go now)."""
    for table in trash_tables(conn, of):
        conn.execute(f'drop table "{table}"')


def _has_rowid(conn: Connection, table: str) -> bool:
    try:
        conn.execute(f'select rowid from "{table}" limit 0')
    except Exception:  # a WITHOUT ROWID table: "no such column: rowid"
        return False
    return True


def describe_identity(identity: str | None) -> str:
    """An identity in words: "tokenizer 2", "embedder hashing-v3 (1024 dimensions)"."""
    version = tokenizer_version(identity)
    if version is not None:
        return f"tokenizer {version}"
    if not identity:
        return "nothing"
    name, _, dimension = identity.rpartition(":")
    for metric in (VECTOR_METRIC, *OLD_VECTOR_METRICS):
        name = name.removesuffix(f":{metric}")
    return f"embedder {name} ({dimension} dimensions)" if dimension.isdigit() else f"embedder {identity}"


def as_dict(build: IndexBuild) -> dict[str, Any]:
    return {
        "name": build.name,
        "built_with": build.built_with,
        "target": build.target,
        "cursor": build.cursor,
        "done": build.done,
        "started_at": build.started_at,
        "finished_at": build.finished_at,
    }
