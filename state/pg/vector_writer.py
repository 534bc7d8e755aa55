"""Vectors on PostgreSQL made after the write, on a connection of their own (issue #18).

Why: pgvector's HNSW insert was most of a memory delta's time on the server, and all of it
inside the write transaction. Under 50 agents through one cloud process (bench/pg_team.py's
load, every statement's duration logged for 20 s, 1,050 deltas and as many searches): the
vector insert took 7.85 ms of the 11.6 ms of statement time a delta and a search cost, while
that transaction held the write lock every process on the database waits for
(state/pg/connection.py) and, psycopg's calls being synchronous, the process's event loop.

So in the daemon (daemon/vector_worker.py) a write on PostgreSQL only marks its record's
vector as pending, and this writer makes the vectors after the commit, in a worker thread,
on its own connection, in transactions that take no write lock: requests go on meanwhile,
and the other processes' writes too. Until its vector is stored a record ranks by its words,
as with the SQLite engine's deferred vectors.

What keeps a vector true to its record's current text:

* The texts are read and embedded with no lock held (a model may take tens of milliseconds a
  text); then, in one transaction, each record's row is locked (``for update skip locked``)
  and its text read again, and the vector is stored only if the text is still the one
  embedded. A record a write holds is skipped and kept pending (that write marks it pending
  again anyway); a write that starts meanwhile waits until this short transaction has
  stored the vector, then replaces it.
* ``lock_timeout``: the writer never waits long on a lock a write transaction holds (which
  would keep the write lock held meanwhile), and can never deadlock with one.
* A record this transaction cannot see is either not committed yet (its ``seq`` is above the
  highest committed one: write transactions commit in ``seq`` order, one at a time) and
  stays pending, or gone (deleted, or its write rolled back) and leaves the set.
* Each mark has a generation: a record marked again while its vector was being made keeps
  its mark, so the newer text gets its vector too.
* Nothing is lost at a crash: records without a vector are found again when the daemon
  starts (:meth:`VectorWriter.find_missing`).
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from typing import Any

from state.json_text import loads
from state.pg.engine import OwnConnection
from state.search import record_text

log = logging.getLogger(__name__)

# How long the writer waits for a lock a write transaction holds before it leaves the record
# for its next batch. Short: the write that holds it may hold the cluster's write lock too.
LOCK_TIMEOUT_MS = 200

_READ = (
    "select seq, namespace, title, content, triggers from memory_records"
    " where seq = any(%s) and deleted_at is null"
)
_READ_LOCKED = f"{_READ} for update skip locked"
_STORE = (
    "insert into memory_vectors (seq, namespace, embedding)"
    " select s, n, e::vector from unnest(%s::bigint[], %s::text[], %s::text[]) as u(s, n, e)"
)
# Indexed records (the full-text index holds every searchable one) without a vector.
MISSING = (
    "select s.seq from memory_search s where not exists (select 1 from memory_vectors v where v.seq = s.seq)"
)


class VectorWriter:
    """The pending vectors of one process and the connection that makes them.

    ``connect`` opens a psycopg connection (autocommit) to the store's database; ``embed``
    turns a record's text into pgvector's text form (None for no vector)."""

    def __init__(self, connect: Callable[[], Any], embed: Callable[[str], str | None]) -> None:
        self._conn = OwnConnection(connect)
        self._embed = embed
        self._pending: dict[int, int] = {}  # seq -> the generation of its latest mark
        self._generations = itertools.count(1)
        self._lock = threading.Lock()  # the marks: writes mark on the loop, batches clear
        self._working = threading.Lock()  # the connection: one batch or scan at a time

    # -- marks (the event loop's thread) ------------------------------------------------------

    def mark(self, seq: int) -> None:
        """Record ``seq``'s vector is to be made (after its write commits)."""
        with self._lock:
            self._pending[seq] = next(self._generations)

    def unmark(self, seq: int) -> None:
        with self._lock:
            self._pending.pop(seq, None)

    @property
    def pending(self) -> set[int]:
        with self._lock:
            return set(self._pending)

    # -- work (a worker thread) ---------------------------------------------------------------

    def make(self, limit: int) -> tuple[int, bool]:
        """Make and store the vectors of up to ``limit`` pending records, oldest first, in one
        transaction: (vectors stored, whether any record had to stay pending for now)."""
        with self._lock:
            batch = dict(itertools.islice(sorted(self._pending.items()), limit))
        if not batch:
            return 0, False
        with self._working:
            stored, done, kept = self._conn.run(lambda conn: self._store(conn, batch))
        with self._lock:
            for seq in done:
                if self._pending.get(seq) == batch[seq]:  # not marked again meanwhile
                    del self._pending[seq]
        return stored, bool(kept)

    def _store(self, conn: Any, batch: dict[int, int]) -> tuple[int, set[int], set[int]]:
        """(vectors stored, records done with, records kept pending) for ``batch``: the texts
        read and embedded first, with no lock held (a model may take tens of milliseconds a
        text), then stored in one transaction for the records whose text is still that one."""
        import psycopg

        seqs = sorted(batch)
        rows = conn.execute(_READ, (seqs,)).fetchall()
        kept = self._not_committed(conn, sorted(set(seqs) - {row[0] for row in rows}))
        texts = {
            seq: (namespace, record_text(title, content, loads(triggers)))
            for seq, namespace, title, content, triggers in rows
            if content
        }
        made = {}
        for seq, (namespace, text) in texts.items():
            vector = self._embed(text)
            if vector is not None:
                made[seq] = (namespace, text, vector)
        if not made:
            return 0, set(seqs) - kept, kept
        try:
            with conn.transaction():
                conn.execute(f"set local lock_timeout = {LOCK_TIMEOUT_MS}")
                current = {
                    seq: record_text(title, content, loads(triggers))
                    for seq, _, title, content, triggers in conn.execute(_READ_LOCKED, (sorted(made),))
                }
                ids = [seq for seq in sorted(made) if current.get(seq) == made[seq][1]]
                if ids:
                    conn.execute("delete from memory_vectors where seq = any(%s)", (ids,))
                    conn.execute(_STORE, (ids, [made[i][0] for i in ids], [made[i][2] for i in ids]))
        except psycopg.errors.LockNotAvailable:
            ids = []  # a write holds one of them: the next batch
        # Not stored: held by a write, changed or deleted since the read: the next batch
        # reads them again (and a change marked them again anyway).
        kept |= set(made) - set(ids)
        return len(ids), set(seqs) - kept, kept

    @staticmethod
    def _not_committed(conn: Any, unseen: list[int]) -> set[int]:
        """Of records the read did not find, those not committed yet (above the highest
        committed ``seq``): the others are gone (deleted, or their write rolled back)."""
        if not unseen:
            return set()
        newest = conn.execute("select coalesce(max(seq), 0) from memory_records").fetchone()[0]
        return {seq for seq in unseen if seq > newest}

    def find_missing(self) -> int:
        """Mark the indexed records without a vector (left by a process stopped before it
        made them); the number marked. One scan of both tables: the daemon runs it once, at
        start, in a worker thread."""

        def scan(conn: Any) -> list[int]:
            if not conn.execute("select to_regclass('memory_vectors') is not null").fetchone()[0]:
                return []
            return [row[0] for row in conn.execute(MISSING)]

        with self._working:
            missing = self._conn.run(scan)
        with self._lock:
            for seq in missing:
                self._pending.setdefault(seq, next(self._generations))
        if missing:
            log.info("%d records have no vector yet: making them", len(missing))
        return len(missing)

    def close(self) -> None:
        with self._working:
            self._conn.close()
