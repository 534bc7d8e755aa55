"""Turns stored without a session id, and a fallback chain for them, for
bench/retrieval_turns.py (and /tmp-style drivers that also run MADial-Bench):

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/no_session.py

The conversation context (state/turn_context.py) only applies to records with
``provenance.session_id``. A harness may store each turn as an AMP memory delta or a local
memory with no session id (one namespace per conversation). ``no session id`` ingests the
turns without it (the context columns stay empty, as for any note). ``fallback`` patches
turn_context so that a record without a session id takes the records before it in the same
namespace, of the same kind and also without a session id (summaries excluded), as its
context: the chain the product would need for such harnesses.

Variants of the fallback: which records get it (every kind, kind message, content with a
speaker label, or a gate written in SQL so that a partial index could hold just the
turn-like records: kind message or a colon within the first 42 characters).

Measured on tokenizer 2 (main up to a60e4a9; bench/RESULTS.md and helper-17's notes have
the figures). Since 33539fd the default does this itself (state/lemmas.py,
state/answer_cues.py, the loose turn chain), so on later code these variants stack on it;
to reproduce the figures, run them on that tree::

    git archive a60e4a9 | tar -x -C /tmp/t2 && cd /tmp/t2
    PYTHONPATH=. python bench/retrieval_turns.py bench/data/conversations/DATASET.json
        --split tune --ideas /path/to/this/bench/ideas/no_session.py
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection

import retrieval_turns as rt
from retrieval_turns import Config

import state.turn_context as turn_context
from state.db import Connection

_INGEST = rt.ingest  # the harness's own, before an idea patches it


def ingest_without_session(kind: str = "message", as_delta: bool = False):
    """rt.ingest, but the provenance carries no session id (an AMP delta's or a local
    memory's); ``as_delta``: the title is the content's start, as a memory delta's is."""
    return functools.partial(_INGEST, kind=kind, with_session=False, as_delta=as_delta)


_SESSION = (
    "namespace = ? and json_extract(provenance, '$.session_id') = ?"
    " and deleted_at is null and kind != 'summary'"
)
_NO_SESSION = (
    "namespace = ? and kind = ? and json_extract(provenance, '$.session_id') is null"
    " and deleted_at is null and kind != 'summary'"
)


# A dialogue turn's content starts with its speaker: one to four words and a colon
# ("Caroline: ...", "user: ...", "Dr. Lee: ...", "助手：...").
SPEAKER = re.compile(r"\s*[^\W\d_][\w'.\-]*(?: [\w'.\-]+){0,3} ?(?::(?:\s|$)|\uff1a)")


# Turn-like as a SQL expression, so that a partial index could hold exactly those records
# (the loose chain of 33539fd gates with a regular expression instead: same figures here).
TURN_LIKE = (
    "(kind = 'message' or instr(substr(content, 1, 42), ': ') > 1 or instr(substr(content, 1, 42), '：') > 1)"
)


def fallback_nearest(kinds: Collection[str] | None = None, speaker: bool = False, product_gate: bool = False):
    """turn_context's preceding/following with the fallback chain (namespace, kind) for
    records without a session id; ``kinds``: only those kinds get it (None: any kind but
    summaries); ``speaker``: only records whose content starts with a speaker label;
    ``product_gate``: only turn-like records (TURN_LIKE), which are also the only ones the
    chain holds. Returns (preceding, following) patches; those functions are the ones
    turn_context's callers look up, whatever _nearest looks like."""

    def chain_of(conn: Connection, seq: int) -> tuple[str, tuple] | None:
        row = conn.execute(
            "select namespace, json_extract(provenance, '$.session_id'), kind,"
            f" substr(content, 1, 64), {TURN_LIKE} from memory_records where seq = ?",
            (seq,),
        ).fetchone()
        if row is None or row[2] == "summary":
            return None
        if row[1] is not None:
            return _SESSION, (row[0], str(row[1]))
        if kinds is not None and row[2] not in kinds:
            return None
        if speaker and not SPEAKER.match(row[3] or ""):
            return None
        if product_gate:
            return (_NO_SESSION + " and " + TURN_LIKE if row[4] else None), (row[0], row[2])
        return _NO_SESSION, (row[0], row[2])

    def nearest(conn: Connection, seq: int, side: str, order: str) -> list[int]:
        chain = chain_of(conn, seq)
        if chain is None or chain[0] is None:
            return []
        where, params = chain
        rows = conn.execute(
            f"select seq from memory_records where {where} and seq {side} ? order by seq {order} limit ?",
            (*params, seq, turn_context.CONTEXT_TURNS),
        )
        return [row[0] for row in rows]

    return (
        (turn_context, "preceding", lambda conn, seq: nearest(conn, seq, "<", "desc")),
        (turn_context, "following", lambda conn, seq: nearest(conn, seq, ">", "asc")),
    )


def no_session(label: str, *extra: tuple, kind: str = "message", as_delta: bool = False) -> Config:
    patches = tuple(p for group in extra for p in group)
    return Config.shipped(label, patches=((rt, "ingest", ingest_without_session(kind, as_delta)), *patches))


FALLBACK = fallback_nearest()
FALLBACK_MESSAGES = fallback_nearest({"message"})
FALLBACK_SPEAKER = fallback_nearest(speaker=True)
FALLBACK_PRODUCT = fallback_nearest(product_gate=True)


def ideas() -> list[Config]:
    return [
        no_session("no session id"),
        no_session("no session id, AMP delta (kind task_event, title)", kind="task_event", as_delta=True),
        no_session("no session id + fallback", FALLBACK),
        no_session("no session id, AMP delta + fallback", FALLBACK, kind="task_event", as_delta=True),
        no_session("no session id + fallback (messages only)", FALLBACK_MESSAGES),
        no_session("no session id + fallback (speaker-labelled turns)", FALLBACK_SPEAKER),
        no_session(
            "no session id, AMP delta + fallback (speaker-labelled)",
            FALLBACK_SPEAKER,
            kind="task_event",
            as_delta=True,
        ),
        no_session("no session id + fallback (product gate)", FALLBACK_PRODUCT),
        no_session(
            "no session id, AMP delta + fallback (product gate)",
            FALLBACK_PRODUCT,
            kind="task_event",
            as_delta=True,
        ),
        Config.shipped("session ids + fallback", patches=FALLBACK),
        Config.shipped("session ids + fallback (speaker-labelled)", patches=FALLBACK_SPEAKER),
        Config.shipped("session ids + fallback (product gate)", patches=FALLBACK_PRODUCT),
    ]
