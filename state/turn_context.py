"""Neighbouring turns as weak search context for conversation turns.

A turn of a conversation often means little on its own: "Saturday the 29th, at Navy Pier"
answers the question asked in the turn before it ("When is the festival?"), and "Anything
under two hours" the one about a race goal. So a record that belongs to a session
(``provenance.session_id``: mem1 messages, imported dialogues) is indexed with the tokens of
the turn before it and the turn after it in the same namespace and session, in two columns
of the full-text index that count for ``CONTEXT_WEIGHT`` of its own text. Records without a
session (notes, facts, AMP deltas) have empty context columns and rank as before.

Measured on bench/retrieval_turns.py's conversations (bench/RESULTS.md, "long
conversations"): recall@10 against the Porter BM25 baseline went from +2-3 % to +25-28 % on
both halves; weights from 0.1 to 0.3 ranked alike, 0.5 worse. Session summaries are not
turns and stay out of the chain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from state.db import Connection

IndexText = Callable[[str], str]  # a tokenizer's index_text

CONTEXT_WEIGHT = 0.2
# The FTS5 rank of the index: its own tokens at 1, each neighbour column at CONTEXT_WEIGHT.
RANK = f"bm25(1.0, {CONTEXT_WEIGHT}, {CONTEXT_WEIGHT})"

# Matches the partial index of migration m0018 (so each lookup is one index probe).
_CHAIN = ("namespace = ? and json_extract(provenance, '$.session_id') = ?"
          " and deleted_at is null and kind != 'summary'")


@dataclass(frozen=True)
class Neighbours:
    """The turns before and after a record in its session (seqs), if any."""

    before: int | None = None
    after: int | None = None


def session_of(conn: Connection, seq: int) -> tuple[str, str] | None:
    """(namespace, session id) of a record that is a conversation turn, else None."""
    row = conn.execute(
        "select namespace, json_extract(provenance, '$.session_id'), kind from memory_records"
        " where seq = ?", (seq,)).fetchone()
    if row is None or row[1] is None or row[2] == "summary":
        return None
    return row[0], str(row[1])


def neighbours(conn: Connection, seq: int) -> Neighbours:
    """The live turns on either side of ``seq`` in its session (``seq`` itself may be gone)."""
    chain = session_of(conn, seq)
    if chain is None:
        return Neighbours()
    before = conn.execute(f"select seq from memory_records where {_CHAIN} and seq < ?"
                          " order by seq desc limit 1", (*chain, seq)).fetchone()
    after = conn.execute(f"select seq from memory_records where {_CHAIN} and seq > ?"
                         " order by seq limit 1", (*chain, seq)).fetchone()
    return Neighbours(before[0] if before else None, after[0] if after else None)


def turn_tokens(conn: Connection, seq: int | None, index_text: IndexText) -> str:
    """The index tokens of a turn's content, as its neighbours see it ('' for none). Only the
    content: a title is often the content's first words again (mem1), and a redacted turn's
    content is already ''."""
    if seq is None:
        return ""
    row = conn.execute("select content from memory_records where seq = ? and deleted_at is null",
                       (seq,)).fetchone()
    return index_text(row[0]) if row else ""


def context_columns(conn: Connection, around: Neighbours, index_text: IndexText) -> tuple[str, str]:
    """(before, after): the tokens of the turns on either side of a record."""
    return turn_tokens(conn, around.before, index_text), turn_tokens(conn, around.after, index_text)


def link(conn: Connection, table: str, seq: int, around: Neighbours,
         index_text: IndexText) -> None:
    """Record ``seq`` has come (or changed) between ``around``'s turns: they see it now. A
    neighbour without a row in ``table`` (not copied yet by a rebuild) is left alone: the
    copy makes its row whole."""
    if around.before is None and around.after is None:
        return
    tokens = turn_tokens(conn, seq, index_text)
    _set(conn, table, around.before, "after", tokens)
    _set(conn, table, around.after, "before", tokens)


def unlink(conn: Connection, table: str, around: Neighbours, index_text: IndexText) -> None:
    """The record between ``around``'s turns has gone, or its text has (a redaction, an
    update): their context is made anew from the session as it is now. A deleted turn's
    neighbours then see each other; a redacted one stays between them, empty."""
    for seq in (around.before, around.after):
        if seq is not None:
            before, after = context_columns(conn, neighbours(conn, seq), index_text)
            _set(conn, table, seq, "before", before)
            _set(conn, table, seq, "after", after)


def _set(conn: Connection, table: str, seq: int | None, column: str, tokens: str) -> None:
    if seq is not None:
        conn.execute(f"update {table} set {column} = ? where rowid = ? and {column} != ?",
                     (tokens, seq, tokens))
