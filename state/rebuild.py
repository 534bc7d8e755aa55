"""Rebuilding the derived search indexes in the background, resumably, losing nothing.

When the tokenizer or the embedder changes (an upgrade, a config change) ``Store.open``
only records that a rebuild is pending (:func:`plan`: milliseconds at any size). The
rebuild then runs in short batches (:func:`step`: the daemon's ``rebuild_search_index``
job; ``doctor --repair`` runs them to the end at once, :func:`rebuild_now`). Each batch is
one transaction that copies the next records in ``seq`` order *and* advances the cursor
recorded in ``index_builds``: after a kill at any point the rebuild resumes after the last
committed batch, and no record is copied twice or left out.

* **Words** (FTS): the new table, ``memory_fts_next``, is built beside the old one, which
  keeps answering, queried with the terms of the tokenizer that built it. Writes meanwhile
  (state/search.py ``add``/``remove``) keep the old table current, and the new one for the
  records the copy has passed (``seq <= cursor``); a record beyond the cursor is copied as
  it is when the copy reaches it. An update keeps its seq, so it lands on the right side
  of the cursor too. The batch that finds nothing left swaps the tables in its own
  transaction, so no write falls between the last copy and the swap.
* **Vectors**: the new table replaces the old one at once and fills the same way. Not
  beside it: sqlite-vec's tables cannot be renamed (their shadow tables keep the old name),
  and the old vectors could only be compared with queries embedded by the old embedder,
  which this code no longer has. Until the table is complete, search ranks by words alone.

Words go first (they find most), then vectors, then the discarded tables' trash
(state/index_builds.py ``empty_trash``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from state.db import Connection, transaction
from state.ids import now_iso
from state.index_builds import (
    FTS,
    FTS_NEXT,
    SUITES,
    VECTORS,
    IndexBuild,
    create_fts,
    describe_identity,
    discard_index,
    empty_trash,
    read_builds,
    save_build,
    table_exists,
    tokenizer_for,
    trash_tables,
    vector_ddl,
    vector_identity,
    wanted_tokenizer,
)
from state.json_text import loads
from state.search import insert_fts_row, insert_vector, record_text

# The records the indexes hold: live, and whose current version is not redacted.
SEARCHABLE = (
    "select r.seq, r.namespace, r.title, r.content, r.triggers from memory_records r"
    " where r.deleted_at is null and not exists (select 1 from memory_versions v"
    " where v.memory_id = r.id and v.version = r.version and v.redacted_at is not null)"
)
# A batch's defaults (the daemon's come from the [jobs] settings): a batch stops at whichever
# comes first. 20 ms keeps a request that arrives meanwhile waiting no longer than that.
BATCH_RECORDS = 1000
BATCH_SECONDS = 0.02


def plan(store: Any, *, force: bool = False) -> list[str]:
    """Record the rebuilds this code needs (every index with ``force``: ``doctor --repair``);
    returns the indexes whose rebuild starts now. A rebuild already under way for the same
    target is left to continue. Cheap at any size, except that an index with nothing to copy
    is finished here, and the suites' index is rebuilt here (see :func:`_reindex_suites`)."""
    conn = store.conn
    started: list[str] = []
    if not force and _current(conn, vector_identity(store.embedder)):
        return started  # the usual open: no write transaction at all
    with transaction(conn):
        builds = read_builds(conn)
        _reindex_suites(store, builds[SUITES], force)
        if _plan_fts(conn, builds[FTS], force):
            started.append(FTS)
        if _plan_vectors(
            conn, builds[VECTORS], vector_identity(store.embedder), store.embedder.dimension, force
        ):
            started.append(VECTORS)
    if (
        started
        and not conn.execute("select 1 from memory_records where deleted_at is null limit 1").fetchone()
    ):
        while step(store) is not None:  # nothing to copy: swap and clear up now
            pass
    return started


def _current(conn: Connection, vectors: str) -> bool:
    """Whether every index is built, or being built, for what this code wants."""
    builds, words = read_builds(conn), wanted_tokenizer()
    fts, vec = builds[FTS], builds[VECTORS]
    return (
        builds[SUITES].built_with == words
        and (fts.target or fts.built_with) == words
        and (vec.target or vec.built_with) == vectors
        and table_exists(conn, VECTORS)
        and (fts.target is None or table_exists(conn, FTS_NEXT))
    )


def _start(build: IndexBuild, target: str) -> IndexBuild:
    return replace(build, target=target, cursor=0, done=0, started_at=now_iso(), finished_at=None)


def _plan_fts(conn: Connection, fts: IndexBuild, force: bool) -> bool:
    wanted = wanted_tokenizer()
    if not force:
        if fts.target == wanted and table_exists(conn, FTS_NEXT):
            return False  # under way: continue
        if fts.target is None and fts.built_with == wanted:
            return False  # current
        if fts.built_with == wanted:  # a rebuild towards something else, no longer wanted
            discard_index(conn, FTS_NEXT)
            save_build(conn, replace(fts, target=None))
            return False
    discard_index(conn, FTS_NEXT)  # a rebuild for another tokenizer, half done
    create_fts(conn, FTS_NEXT, tokenizer_for(wanted))
    save_build(conn, _start(fts, wanted))
    return True


def _plan_vectors(conn: Connection, vectors: IndexBuild, wanted: str, dimension: int, force: bool) -> bool:
    # The table holds the target's vectors while a rebuild fills it, else built_with's.
    holds = vectors.target if vectors.target is not None else vectors.built_with
    if not force and holds == wanted and table_exists(conn, VECTORS):
        return False
    discard_index(conn, VECTORS)
    conn.execute(vector_ddl(dimension))
    save_build(conn, _start(vectors, wanted))
    return True


def _reindex_suites(store: Any, suites: IndexBuild, force: bool) -> None:
    """The suites' catalog index is rebuilt at once, here: it holds a slug, title, summary
    and tags per suite (a few hundred at most on a machine, and milliseconds to index), and
    a catalog search needs no index half made."""
    wanted = wanted_tokenizer()
    if suites.built_with == wanted and not force:
        return
    store.suites.reindex(tokenizer_for(wanted))
    save_build(store.conn, replace(suites, built_with=wanted, target=None, finished_at=now_iso()))


def step(
    store: Any, *, max_records: int = BATCH_RECORDS, budget_seconds: float = BATCH_SECONDS
) -> str | None:
    """One batch of the first unfinished work, in one transaction: ``"fts"``, ``"vectors"``
    or ``"trash"`` (what it worked on), None when nothing is left. A failing embedder raises
    (the batch is rolled back and the next run tries again; search keeps ranking by words)."""
    conn = store.conn
    with transaction(conn):
        builds = read_builds(conn)
        if builds[FTS].rebuilding:
            _copy_fts(conn, builds[FTS], max_records, budget_seconds)
            return "fts"
        if builds[VECTORS].rebuilding:
            _copy_vectors(store, builds[VECTORS], max_records, budget_seconds)
            return "vectors"
        if trash_tables(conn):
            empty_trash(conn, budget_seconds)
            return "trash"
    return None


def _copy(
    conn: Connection,
    build: IndexBuild,
    write: Callable[[int, str, str], None],
    max_records: int,
    budget_seconds: float,
) -> tuple[IndexBuild, bool]:
    """Copy the searchable records after the cursor with ``write(seq, namespace, text)``
    until the budget or ``max_records`` is spent; the advanced build, and whether there was
    nothing left to copy. Only then does the caller finish the rebuild, so the swap's DDL
    (about 25 ms at 10k records: five renames, each parsing the schema) has a batch of its
    own rather than adding to a full one (74 ms together, measured)."""
    started = time.perf_counter()
    # Read as the copy goes (SQLite steps the query row by row): a batch that stops at its
    # budget pays for no row it does not copy (reading 1,000 ahead cost 5 ms a batch).
    rows = conn.execute(
        SEARCHABLE + " and r.seq > ? order by r.seq limit cast(? as integer)", (build.cursor, max_records)
    )
    cursor, copied = build.cursor, 0
    for seq, namespace, title, content, triggers in rows:
        write(seq, namespace, record_text(title, content, loads(triggers)))
        cursor, copied = seq, copied + 1
        if time.perf_counter() - started >= budget_seconds:
            break
    rows.close()
    return replace(build, cursor=cursor, done=build.done + copied), copied == 0


def _copy_fts(conn: Connection, build: IndexBuild, max_records: int, budget: float) -> None:
    tokenizer = tokenizer_for(build.target)

    def write(seq: int, namespace: str, text: str) -> None:
        # In seq order, so the turns before a turn (its context) are copied already.
        insert_fts_row(conn, FTS_NEXT, tokenizer, seq, text)

    build, finished = _copy(conn, build, write, max_records, budget)
    if finished:  # the swap, in the transaction that found nothing left to copy
        discard_index(conn, FTS)
        conn.execute(f"alter table {FTS_NEXT} rename to {FTS}")
        build = replace(build, built_with=build.target, target=None, finished_at=now_iso())
    save_build(conn, build)


def _copy_vectors(store: Any, build: IndexBuild, max_records: int, budget: float) -> None:
    conn, embedder = store.conn, store.embedder

    def write(seq: int, namespace: str, text: str) -> None:
        store.search.pending_vectors.discard(seq)
        insert_vector(conn, seq, namespace, embedder.embed(text))

    build, finished = _copy(conn, build, write, max_records, budget)
    if finished:
        build = replace(build, built_with=build.target, target=None, finished_at=now_iso())
    save_build(conn, build)


def rebuild_now(
    store: Any, *, force: bool = True, progress: Callable[[str, int], None] | None = None
) -> dict[str, int]:
    """Rebuild (every index with ``force``) and run the batches to the end, synchronously:
    ``doctor --repair``, with the daemon stopped. The records each index holds afterwards."""
    plan(store, force=force)
    while (what := step(store, max_records=5000, budget_seconds=0.5)) is not None:
        if progress is not None:
            progress(what, read_builds(store.conn)[VECTORS if what == "vectors" else FTS].done)
    conn = store.conn
    return {
        "fts": conn.execute("select count(*) from memory_fts").fetchone()[0],
        "vectors": conn.execute("select count(*) from memory_vec").fetchone()[0],
    }


# How far a rebuild is, for an engine that counts it otherwise than by its cursor (PostgreSQL's
# vectors, made by its vector writer: state/pg/reindex.py): (done, total, what search does
# meanwhile), or None for the cursor's count.
Progress = Callable[[Connection, IndexBuild], "tuple[int, int, str] | None"]


def status(conn: Connection, progress: Progress | None = None) -> dict[str, Any]:
    """How the search index stands, for ``daemon status``, the TUI and ``doctor``: the
    rebuild in progress (what for, records done of how many, since when), or current. The
    total is what is done plus the live records after the cursor, so records written during
    the rebuild count too."""
    builds = read_builds(conn)
    active = next((builds[name] for name in (FTS, VECTORS) if builds[name].rebuilding), None)
    out: dict[str, Any] = {
        "state": "current",
        "indexes": {
            name: {
                k: getattr(build, k)
                for k in ("built_with", "target", "cursor", "done", "started_at", "finished_at")
            }
            for name, build in builds.items()
        },
    }
    if active is None:
        out["text"] = "search index: current"
        return out
    counted = progress(conn, active) if progress is not None else None
    if counted is None:
        remaining = conn.execute(
            "select count(*) from memory_records where seq > ? and deleted_at is null", (active.cursor,)
        ).fetchone()[0]
        done, total, meanwhile = active.done, active.done + remaining, "; search ranks by words until then"
    else:
        done, total, meanwhile = counted
    percent = done * 100 // total if total else 100
    words = active.name == FTS
    text = (
        f"search index: rebuilding {'' if words else 'vectors '}for"
        f" {describe_identity(active.target)} — {done:,} of {total:,} records"
        f" ({percent} %), started {_clock(active.started_at)}"
    )
    if words and builds[VECTORS].rebuilding:
        text += "; the vectors follow"
    if not words:
        text += meanwhile
    out.update(
        state="rebuilding",
        index="words" if words else "vectors",
        reason=describe_identity(active.target),
        done=done,
        total=total,
        percent=percent,
        started_at=active.started_at,
        text=text,
    )
    return out


def _clock(stamp: str | None) -> str:
    """An RFC 3339 UTC time as the person's local clock: 12:01, or 2026-12-01 12:01."""
    if not stamp:
        return "-"
    local = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone()
    today = datetime.now().astimezone().date()
    return local.strftime("%H:%M" if local.date() == today else "%Y-%m-%d %H:%M")
