"""Redaction that really removes the content from the database file.

Nulling ``memory_versions.content`` is not enough on its own: SQLite leaves deleted cells in
free space, FTS5 keeps deleted tokens in its segments until they are merged, the WAL keeps
old page images, and AMP writes copy a memory's text into other tables (the delta log,
summary cards, brief events, context packs as they were returned, mem1's message log).
This module does the rest; ``tests/reliability/test_redaction_bytes.py`` scans the file's
bytes to prove it.

* Every write connection runs with ``pragma secure_delete = on`` (state/db.py), so freed
  cells and pages are zeroed. FTS5 deletes are plain deletes, which leave a deleted row's
  tokens in the index segments until a merge, so a redaction merges the index
  (:func:`merge_fts_index`, 0.3 s at 100k memories) and the old segments' pages are freed,
  and so zeroed. FTS5's own ``secure-delete`` option is not used: mixed with plain deletes
  it damages the index (:func:`stop_fts_secure_delete`).
* :func:`scrub_copies` replaces the copies of the redacted text with ``[redacted]``, inside
  the redaction's transaction. Metadata stays (ids, sha256, sizes, times, paths), except a
  title that is itself a piece of the content (an AMP delta's title is its summary).
* :func:`purge_wal` folds the WAL back into the file and truncates it, after the commit.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from state.db import Connection, transaction
from state.group_commit import after_commit
from state.json_text import loads

if TYPE_CHECKING:  # state/memories.py imports this module
    from state.memories import MemoryRecord, MemoryVersionRecord

log = logging.getLogger(__name__)

REDACTED = "[redacted]"
# Shorter pieces of text are too likely to occur elsewhere by chance to be worth scrubbing.
MIN_NEEDLE = 8


def stop_fts_secure_delete(conn: Connection) -> bool:
    """Turn off FTS5 ``secure-delete`` where an earlier release turned it on, and rebuild the
    index if it was damaged by then; True if it was rebuilt.

    Those releases re-indexed mem1 session summaries with plain deletes and everything else
    with secure ones. A secure delete of a row that an earlier plain delete left in older
    segments corrupts the index ("malformed inverted index", tests/state/test_fts_index.py),
    so every delete is now plain and redaction merges the index instead."""
    row = conn.execute("select v from memory_fts_config where k = 'secure-delete'").fetchone()
    if row is None or row[0] != 1:
        return False
    with transaction(conn):
        conn.execute("insert into memory_fts (memory_fts, rank) values ('secure-delete', 0)")
        try:
            conn.execute("insert into memory_fts (memory_fts, rank) values ('integrity-check', 0)")
            return False
        except Exception as exc:  # the damage this release's deletes cannot make any more
            log.warning("the search index was damaged (%s): rebuilding it from its rows", exc)
            conn.execute("insert into memory_fts (memory_fts) values ('rebuild')")
            return True


def merge_fts_index(conn: Connection, table: str = "memory_fts") -> None:
    """Merge an FTS index into one segment, dropping every deleted token (0.3 s at 100k
    memories): what a redaction needs, as deletes leave the tokens in the segments."""
    conn.execute(f"insert into {table} ({table}) values ('optimize')")


def _normalized(text: str) -> str:
    return " ".join(text.split())


def _needles(content: str, title: str) -> list[str]:
    """Pieces of the redacted text as other tables hold them (whole, or cut and normalized)."""
    found: list[str] = []
    for text in (content, title):
        for piece in (text, _normalized(text), text[:120], _normalized(text)[:60]):
            if len(piece.strip()) >= MIN_NEEDLE and piece not in found:
                found.append(piece)
    return found


def _scrub_json(value: Any, memory_id: str, needles: list[str]) -> Any:
    """A JSON value with every string that shows the redacted text replaced; in multi-line
    text (a pack's summary_markdown) only the lines that do."""
    if isinstance(value, dict):
        return {k: _scrub_json(v, memory_id, needles) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_json(v, memory_id, needles) for v in value]
    if not isinstance(value, str):
        return value
    if "\n" in value:
        lines = value.split("\n")
        return "\n".join(
            f"- {REDACTED} `{memory_id}`" if memory_id in line or any(n in line for n in needles) else line
            for line in lines
        )
    if any(n in value for n in needles):
        return REDACTED
    return value


def scrub_copies(conn: Connection, memory: MemoryRecord, version: MemoryVersionRecord) -> bool:
    """Remove the copies of a redacted version's text from the other tables (call inside the
    redaction's transaction). Returns True if the memory's title was scrubbed too (its index
    entry then needs rebuilding)."""
    content, title, memory_id = version["content"] or "", version["title"] or "", memory["id"]
    title_is_content = bool(title.strip()) and (
        title in content or _normalized(title) in _normalized(content)
    )
    provenance = dict(memory["provenance"] or {})
    # The AMP copies written with the memory (delta log, summary card, brief event) hold the
    # text of its first version, and the provenance what the agent wrote along with it.
    origin = version["version"] == 1 and memory["source"] in ("memory_delta", "brief_event")
    extra = [str(provenance.get("why_it_matters") or "")] if origin else []
    needles = _needles(content, title if title_is_content else "")
    needles += [n for text in extra for n in _needles(text, "") if n not in needles]
    if not needles:
        return False
    if title_is_content:
        conn.execute(
            "update memory_versions set title = ? where memory_id = ? and title = ?",
            (REDACTED, memory_id, title),
        )
    if origin:
        conn.execute(
            "update memory_deltas set summary = ?, why_it_matters = null where memory_id = ?",
            (REDACTED, memory_id),
        )
        conn.execute(
            "update summary_cards set title = ?, body = ? where memory_id = ?",
            (REDACTED, REDACTED, memory_id),
        )
        conn.execute(
            "update brief_events set summary = ?, payload = '{}' where memory_id = ?", (REDACTED, memory_id)
        )
        for key in ("why_it_matters", "payload"):
            if key in provenance:
                provenance[key] = REDACTED
    message_id = provenance.get("message_id")
    if message_id:  # agent-memory1.0 keeps the message the memory came from
        conn.execute(
            "update mem1_messages set content = ? where id = ? and instr(?, content) > 0",
            (REDACTED, message_id, content),
        )
    record_title = memory["title"]
    if title_is_content and record_title == title:
        record_title = REDACTED
    conn.execute(
        "update memory_records set provenance = ?, title = ? where id = ?",
        (json.dumps(provenance, ensure_ascii=False), record_title, memory_id),
    )
    # Context packs are kept as they were returned; the lines that showed this memory go.
    rows = conn.execute(
        "select id, body from context_packs where instr(body, ?) > 0"
        + " or instr(body, ?) > 0" * len(needles),
        (memory_id, *needles),
    ).fetchall()
    for pack_id, body in rows:
        scrubbed = _scrub_json(loads(body), memory_id, needles)
        conn.execute(
            "update context_packs set body = ? where id = ?",
            (json.dumps(scrubbed, ensure_ascii=False), pack_id),
        )
    return record_title != memory["title"]


def purge_wal(conn: Connection) -> None:
    """Copy the WAL into the database and truncate it, so no old page image stays on disk.

    Call after the redaction's ``transaction()``. On the daemon's connection (group mode)
    the redaction may not be committed yet: the truncation then runs right after its group's
    COMMIT (a checkpoint cannot copy uncommitted pages, and would leave the WAL in place).
    If a reader holds the WAL, the truncation waits for the busy timeout and then gives up;
    the regular checkpoints finish the job later."""
    after_commit(conn, lambda: _truncate_wal(conn))


def _truncate_wal(conn: Connection) -> None:
    try:
        conn.execute("pragma wal_checkpoint(truncate)").fetchone()
    except Exception:
        log.warning("could not truncate the WAL after a redaction", exc_info=True)
