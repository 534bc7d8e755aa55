"""A PostgreSQL store's search rows made anew after a tokenizer change (issue #16).

On SQLite a new tokenizer rebuilds the full-text table beside the old one (state/rebuild.py).
Here each record's row of ``memory_search`` is made again in place, in seq order: its own
tokens from the record's text by this code's tokenizer, then its context (the turns before
it, whose rows are made already) and the document counts with them (state/pg/search.py
``remake``). A row not reached yet answers as before: a query keeps each word's unfolded
form beside the folded one (state/tokenize.py), so "Łódź" still finds a row written before
tokenizer 5; what such a row lacks until it is made again is what the new tokenizer adds
(an ASCII "Lodz" for it, a stamped turn's context: tokenizer 4).

The progress is the ``memory_fts`` row of ``index_builds`` (the SQLite engine's table, kept
on this engine for the code that reads it), so ``daemon status`` and the TUI show it as they
show a SQLite rebuild (state/rebuild.py ``status``). Each batch is one write
transaction, after every other process's write (the write lock), that makes its rows and
moves the cursor: a kill loses at most the batch in progress, which runs again. Writes
meanwhile index with this code's tokenizer; a record the copy has not reached is made again
when it is (harmless: the same tokens).

A database whose rows no build row describes (written before this module) is re-indexed once.

**Vectors.** A vector table another embedder made (another name or dimension, as the
``memory_vec`` row of ``index_builds`` says) is dropped and made again for this one when the
index opens (:func:`prepare_vectors`), and the row's target says a refill is under way; the
daemon's vector writer then makes every record's vector anew in the background
(state/pg/vector_writer.py ``find_missing``, at its start), and until a record has its vector
it ranks by its words, as a record whose vector is still pending always does on this engine.
``daemon status`` counts the records that have theirs (:func:`progress`); the rebuild job
records the refill as done once none is missing (:func:`step`). A table written before the
identity was recorded is kept if its dimension is this embedder's (it cannot tell more), else
made again.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from state import tokenize
from state.ids import now_iso
from state.index_builds import (
    FTS,
    VECTORS,
    IndexBuild,
    describe_identity,
    read_builds,
    save_build,
    wanted_tokenizer,
)
from state.json_text import loads
from state.pg.connection import WRITE_LOCK, PgConnection
from state.pg.vector_writer import MISSING
from state.rebuild import status as rebuild_status
from state.search import record_text

if TYPE_CHECKING:
    from state.pg.search import PgSearchIndex

# A batch stops at whichever comes first (the daemon passes its [jobs] rebuild settings).
# Rows are made CHUNK at a time, each chunk's context read per row (three lookups), so a
# batch checks its budget between chunks: at 10k rows over a Unix socket, 8.1 s of batches
# (1,241 rows/s), a batch 28 ms at the median and 78 ms at the longest, the time another
# process's write may wait for the write lock (bench/pg_reindex.py, bench/RESULTS.md).
BATCH_RECORDS = 1000
BATCH_SECONDS = 0.02
CHUNK = 25


# Whether an indexed record has no vector yet (the vector writer's own query).
_ANY_MISSING = f"select exists ({MISSING})"
# What this engine's vectors are: the embedder's int8-quantized values in pgvector's
# vector(D), compared by cosine (no coarse codes: the SQLite identity's metric differs).
VECTOR_LAYOUT = "int8-cosine"

log = logging.getLogger(__name__)


def read_build(conn: Any, name: str = FTS) -> IndexBuild:
    """An index's build row (a default one when there is none); ``conn``: psycopg's."""
    return read_builds(PgConnection(conn))[name]


def _save(conn: Any, build: IndexBuild) -> None:
    save_build(PgConnection(conn), build)


def _settled(build: IndexBuild, wanted: str) -> bool | None:
    """True: a re-index towards ``wanted`` is under way; False: the rows are ``wanted``'s;
    None: neither (one must be planned)."""
    if build.target == wanted:
        return True
    if build.target is None and build.built_with == wanted:
        return False
    return None


def plan(conn: Any) -> bool:
    """When the index opens: record a re-index if its rows were made by another tokenizer (or
    by code before this module); an empty index is simply this code's. Whether a re-index is
    under way. Cheap: one read when nothing is to do."""
    wanted = wanted_tokenizer()
    settled = _settled(read_build(conn), wanted)
    if settled is not None:
        return settled
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        build = read_build(conn)  # another process may have planned it meanwhile
        settled = _settled(build, wanted)
        if settled is not None:
            return settled
        if conn.execute("select not exists (select 1 from memory_search)").fetchone()[0]:
            _save(conn, replace(build, built_with=wanted, target=None, finished_at=now_iso()))
            return False
        log.warning(
            "the search rows were made by %s: making them anew for %s in the background",
            describe_identity(build.built_with) if build.built_with else "an earlier release",
            describe_identity(wanted),
        )
        _save(conn, replace(build, target=wanted, cursor=0, done=0, started_at=now_iso(), finished_at=None))
        return True


def index_status(conn: Any) -> dict[str, Any]:
    """How the search index stands, without changing anything (``doctor --database``): as
    state/rebuild.py ``status`` says, and, for rows no daemon of this release has looked at
    yet (an earlier release's, or another tokenizer's), that the next start re-indexes them
    (:func:`plan` records it then)."""
    status = rebuild_status(PgConnection(conn), progress=progress)
    build = read_build(conn)
    wanted = wanted_tokenizer()
    if (
        _settled(build, wanted) is None
        and conn.execute("select exists (select 1 from memory_search)").fetchone()[0]
    ):
        made_by = describe_identity(build.built_with) if build.built_with else "an earlier release"
        status["state"] = "planned"
        status["text"] = (
            f"search index: its rows were made by {made_by}; the daemon's next start makes them"
            f" anew for {describe_identity(wanted)} in the background (search answers meanwhile)"
        )
    return status


def under_way(conn: Any) -> bool:
    """Whether a re-index of the rows or a refill of the vectors is under way."""
    return any(build.target is not None for build in read_builds(PgConnection(conn)).values())


def step(
    index: PgSearchIndex, *, max_records: int = BATCH_RECORDS, budget_seconds: float = BATCH_SECONDS
) -> str | None:
    """One batch of the re-index in its own transaction: ``"fts"`` (it made rows, or found
    none left and finished), or ``"vectors"`` (the vector writer has made every vector of a
    refill: it is recorded as done); None when there is nothing to do now. The connection
    must be ``index``'s own, outside any transaction (the daemon gives the job one)."""
    if read_build(index.conn).target == wanted_tokenizer():
        return _make_rows(index, max_records, budget_seconds)
    return _finish_vectors(index)


def _make_rows(index: PgSearchIndex, max_records: int, budget_seconds: float) -> str | None:
    conn = index.conn
    wanted = wanted_tokenizer()
    started = time.perf_counter()
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        build = read_build(conn)  # under the lock: no other batch moves it now
        if build.target != wanted:
            return None
        rows = conn.execute(
            "select s.seq, r.title, r.content, r.triggers from memory_search s"
            " join memory_records r on r.seq = s.seq where s.seq > %s order by s.seq limit %s",
            (build.cursor, max_records),
        ).fetchall()
        if not rows:
            _save(conn, replace(build, built_with=wanted, target=None, finished_at=now_iso()))
            return "fts"
        made = 0
        for first in range(0, len(rows), CHUNK):
            chunk = rows[first : first + CHUNK]
            own = [
                (tokenize.index_text(record_text(title, content, loads(triggers))), seq)
                for seq, title, content, triggers in chunk
            ]
            # Own tokens first: the context of a turn further on reads them (seq order).
            conn.cursor().executemany("update memory_search set own = %s where seq = %s", own)
            index.remake([seq for _, seq in own])
            made += len(chunk)
            if time.perf_counter() - started >= budget_seconds:
                break
        _save(conn, replace(build, cursor=rows[made - 1][0], done=build.done + made))
    return "fts"


def run_to_end(index: PgSearchIndex) -> int:
    """Every batch left at once (tests, ``doctor``): the rows made."""
    before = read_build(index.conn).done
    while step(index, budget_seconds=3600.0) is not None:
        pass
    return read_build(index.conn).done - before


def _finish_vectors(index: PgSearchIndex) -> str | None:
    """Record a refill of the vectors as done once every indexed record has its vector."""
    conn = index.conn
    identity = vector_identity(index.embedder)
    if read_build(conn, VECTORS).target != identity or conn.execute(_ANY_MISSING).fetchone()[0]:
        return None
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        build = read_build(conn, VECTORS)
        if build.target != identity or conn.execute(_ANY_MISSING).fetchone()[0]:
            return None
        made = conn.execute("select count(*) from memory_vectors").fetchone()[0]
        _save(conn, replace(build, built_with=identity, target=None, done=made, finished_at=now_iso()))
    return "vectors"


def progress(conn: Any, build: IndexBuild) -> tuple[int, int, str] | None:
    """A vector refill's progress for state/rebuild.py ``status`` (``conn``: the store's
    SQLite-dialect connection): the indexed records that have their vector, of all of them."""
    if build.name != VECTORS:
        return None  # the rows' re-index counts by its cursor, as on SQLite
    made = conn.execute("select count(*) from memory_vectors").fetchone()[0]
    total = conn.execute("select count(*) from memory_search").fetchone()[0]
    return min(made, total), total, "; until then a record ranks by its words"


def vector_identity(embedder: Any) -> str:
    """What made a vector table on this engine: the embedder's name and dimension."""
    return f"{embedder.name}:{VECTOR_LAYOUT}:{embedder.dimension}"


def prepare_vectors(conn: Any, embedder: Any) -> bool:
    """Inside the transaction that makes the vector table (under the write lock): drop a
    table another embedder made, and record this one's identity. True when a table was
    dropped (its records' vectors are to be made anew)."""
    identity = vector_identity(embedder)
    build = read_build(conn, VECTORS)
    if identity in (build.built_with, build.target):
        return False  # this embedder's, or being made for it
    exists = conn.execute("select to_regclass('memory_vectors') is not null").fetchone()[0]
    if exists and build.built_with is None and build.target is None:
        # Written before identities were recorded: pgvector keeps the dimension as the
        # column's type modifier; another embedder of the same dimension cannot be told.
        made = conn.execute(
            "select atttypmod from pg_attribute where attrelid = 'memory_vectors'::regclass"
            " and attname = 'embedding'"
        ).fetchone()[0]
        exists = made != int(embedder.dimension)
    if exists:
        log.warning(
            "the vectors were made by another embedder (%s): making them anew for %s in the background",
            build.built_with or "one of another dimension",
            identity,
        )
        conn.execute("drop table memory_vectors")
    refill = bool(exists) and conn.execute("select exists (select 1 from memory_search)").fetchone()[0]
    if refill:  # done when every record has its vector again (_finish_vectors, the daemon's job)
        _save(conn, IndexBuild(VECTORS, built_with=build.built_with, target=identity, started_at=now_iso()))
    else:
        _save(conn, IndexBuild(VECTORS, built_with=identity, finished_at=now_iso()))
    return refill
