"""agent-memory1.0 (seed 004) over the one store.

Each (user_id, scope_id) is its own namespace; nothing reads, updates or deletes across it.
Messages are kept and traceable (message id -> role, content, timestamp). Memories are
derived without any LLM, honouring the enable_* flags: an episodic memory per message (a
user's statement about themselves becomes a user_profile memory instead), one summary per
session (updated as the session grows), and profile variables (from ``mem_variables``
defaults and ``update_variables``). Semantic extraction needs a model and is not done.

The session summary is the costly part of a write (up to 2,000 characters re-versioned,
re-indexed and re-embedded), so in the daemon it is rebuilt later, not on every turn
(:meth:`Mem1Service.flush_summaries`): by a timer at most :data:`SUMMARY_DELAY_SECONDS`
after a turn, before any request that is not itself an ``add_messages`` (the endpoint
wrapper calls :func:`settle_summaries`), at shutdown, and at start for summaries a crash
left behind. A turn marks its session's summary in the same transaction as its messages
(``provenance.pending_message_id``), so a rebuild never depends on memory that a kill -9
loses. The rebuilt text is the one the eager rebuild would have written after that turn.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

from state.errors import InvalidRequest, NotFound, ValidationFailed
from state.identities import IdentityRecord
from state.ids import new_id

# SUMMARY_OF_SESSION is named here too: tests/daemon/test_mem1_summaries.py checks its plan.
from state.mem1_records import SUMMARY_OF_SESSION as SUMMARY_OF_SESSION
from state.mem1_records import Mem1Records
from state.memories import MemoryRecord, NewMemory
from state.search import best_score
from state.store import Store

FRAGMENT_TYPES = ("user_profile", "semantic_memory", "episodic_memory")
SELF_STATEMENT = re.compile(r"^\s*(i|i'm|i am|my|i've|i have|我|我的)\b", re.I)
SUMMARY_CHARS = 2000
# A busy session's summary is rebuilt at most every 5 s. The timer is per session, so with
# many sessions written at once each gets few turns per delay: with 1 s, 8 clients writing
# 160 sessions (bench/writes.py) rebuilt a 2,000-character summary for nearly every turn,
# which was most of a turn's cost (bench/RESULTS.md, "where the time goes"). No request
# reads a stale summary meanwhile: every request but a turn rebuilds the pending ones first
# (settle_summaries). What gives: a CLI command that opens the store file itself may see a
# summary up to 5 s behind its session (it was 1 s), and a read after a burst of turns
# waits for the rebuilds of every session still pending (as before: with 1 s, a burst to
# many sessions also left them all pending).
SUMMARY_DELAY_SECONDS = 5.0
# Requests that do not need summaries up to date: they only defer more rebuilds.
DEFERRING_PATHS = frozenset({"/add_messages/"})

log = logging.getLogger(__name__)


def namespace(user_id: str, scope_id: str) -> str:
    """Percent-encoded parts, so no user or scope id can collide with another's."""
    return f"mem1:{quote(user_id, safe='')}:{quote(scope_id, safe='')}"


def local_timestamp() -> str:
    return datetime.now().astimezone().isoformat()


def settle_summaries(services: Any, path: str) -> None:
    """Before a request is handled: rebuild the deferred session summaries it could read."""
    if path not in DEFERRING_PATHS:
        services.mem1.flush_summaries()


@dataclass
class _Pending:
    """A session whose summary is behind: its record, who wrote the latest turn, and the
    timer that rebuilds it (None without an event loop)."""

    namespace: str
    session: str
    summary_id: str
    identity: IdentityRecord
    timer: asyncio.TimerHandle | None = None


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # a script or the CLI: no timer to wait for, so summarize at once
        return None


class Mem1Service:
    def __init__(self, store: Store, *, summary_delay: float = SUMMARY_DELAY_SECONDS) -> None:
        self.store = store
        self.records = Mem1Records(store.conn)
        self.summary_delay = summary_delay
        self._pending: dict[tuple[str, str], _Pending] = {}
        self.rebuild_marked_summaries()

    # -- writing ------------------------------------------------------------------------------

    def add_messages(self, identity: IdentityRecord, body: dict[str, Any]) -> dict[str, Any]:
        messages = [
            m
            for m in body["messages"]
            if isinstance(m, dict) and isinstance(m.get("content"), str) and m["content"].strip()
        ]
        if not messages:  # seed 004 v1.1: 422 with exactly this detail
            raise ValidationFailed("No valid messages (all content is empty)")
        user, scope, session = body["user_id"], body["scope_id"], body["session_id"]
        if not scope or "/" in scope or len(scope) > 128:
            raise InvalidRequest("scope_id must be non-empty, without '/', at most 128 characters")
        ns = namespace(user, scope)
        ids = []
        with self.store.transaction():
            for message in messages:
                message_id = new_id("msg_")
                role = str(message.get("role") or "user")
                self.records.add_message(
                    message_id, ns, user, scope, session, role, message["content"], local_timestamp()
                )
                ids.append(message_id)
                if body["enable_long_term_mem"]:
                    self._fragment(identity, ns, role, message["content"], message_id, session, body)
            for variable in body.get("mem_variables") or []:
                if (
                    isinstance(variable, dict)
                    and variable.get("name")
                    and variable.get("default") is not None
                ):
                    self.records.default_variable(
                        ns, str(variable["name"]), str(variable["default"]), local_timestamp()
                    )
            if body["enable_long_term_mem"] and body["enable_summary_memory"]:
                self._summary_after_turn(identity, ns, session, ids[-1])
        return {"status": "success", "message": "Messages added successfully", "message_ids": ids}

    def _fragment(
        self,
        identity: IdentityRecord,
        ns: str,
        role: str,
        content: str,
        message_id: str,
        session: str,
        flags: dict[str, Any],
    ) -> None:
        kind = (
            "user_profile"
            if role == "user" and SELF_STATEMENT.match(content) and flags["enable_user_profile"]
            else "episodic_memory"
        )
        if kind == "episodic_memory" and not flags["enable_episodic_memory"]:
            return
        self.store.memories.create(
            NewMemory(
                namespace=ns,
                kind=kind,
                title=content[:200],
                content=content,
                source="mem1",
                provenance={
                    "message_id": message_id,
                    "session_id": session,
                    "role": role,
                    "agent": identity["name"],
                },
                identity_id=identity["id"],
            )
        )

    def _summary_after_turn(self, identity: IdentityRecord, ns: str, session: str, last_message: str) -> None:
        """Rebuild the session summary now, or mark it behind and rebuild it later.

        A session's first summary is made at once, so that records keep the order the eager
        rebuild gave them (summary right after the first turn's fragments). Later turns only
        mark the summary; without an event loop there is nothing to defer to."""
        key = (ns, session)
        pending = self._pending.get(key)
        summary_id = pending.summary_id if pending else self.records.summary_id(ns, session)
        loop = _running_loop()
        if summary_id is None or loop is None:
            self._summarize(identity["id"], ns, session, last_message)
            return
        self.records.mark_summary_behind(summary_id, last_message)
        if pending is not None:
            pending.identity = identity  # its timer stays: one rebuild per delay, however busy
            return
        # One timer per session, not one for all: rebuilds spread out instead of stalling
        # the event loop for every session at once.
        self._pending[key] = _Pending(
            ns, session, summary_id, identity, loop.call_later(self.summary_delay, self._flush_session, key)
        )

    def _summarize(
        self, identity_id: str | None, ns: str, session: str, last_message: str, marked: str | None = None
    ) -> None:
        """The session's summary as of ``last_message`` (later turns, which a rebuild after
        the fact may find, are not in it: they may have been added without a summary),
        written by ``identity_id``. ``marked``: a summary record whose mark (``PENDING``)
        this rebuild clears."""
        rows = self.records.session_lines(ns, session, last_message)
        lines = [f"{r['role']}: {' '.join(r['content'].split())}" for r in rows]
        text = f"Session {session}:\n" + "\n".join(lines)
        if len(text) > SUMMARY_CHARS:  # keep the newest lines: they matter most for recall
            text = f"Session {session} (latest):\n" + "\n".join(lines)[-SUMMARY_CHARS:]
        existing = self.records.summary_id(ns, session)
        if marked is not None and marked != existing:
            # The marked record is not the session's live summary any more (deleted
            # meanwhile): its mark goes, and the summary is written where it now lives.
            self.records.clear_summary_mark(marked)
        if existing:
            self.store.memories.update(existing, content=text, identity_id=identity_id)
            self.records.summary_written(existing, last_message)
        else:
            self.store.memories.create(
                NewMemory(
                    namespace=ns,
                    kind="summary",
                    title=f"Session {session}",
                    content=text,
                    source="mem1",
                    provenance={"session_id": session, "message_id": last_message},
                    identity_id=identity_id,
                )
            )

    # -- deferred summaries -------------------------------------------------------------------

    def _flush_session(self, key: tuple[str, str]) -> None:
        """A session's timer: rebuild its summary if no read did already."""
        item = self._pending.pop(key, None)
        if item is not None:
            self._rebuild([(key, item)])

    def flush_summaries(self) -> int:
        """Rebuild every summary marked behind (before a read, at shutdown); the number
        rebuilt. Cheap when nothing is pending: every request but a turn calls it."""
        if not self._pending:
            return 0
        items = list(self._pending.items())
        self._pending.clear()
        for _, item in items:
            if item.timer is not None:
                item.timer.cancel()
        return self._rebuild(items)

    def _rebuild(self, items: list[tuple[tuple[str, str], _Pending]]) -> int:
        """Rebuild in one transaction (one commit for all), each in a savepoint of its own.
        One that fails (a full disk) stays pending for a retry; the caller still goes on."""
        done, failed = 0, []
        try:
            with self.store.transaction():
                for key, item in items:
                    try:
                        with self.store.transaction():
                            done += self._rebuild_marked(item.summary_id, item.identity["id"])
                    except Exception:
                        log.exception("mem1: could not rebuild the summary of session %r", item.session)
                        failed.append((key, item))
        except Exception:
            log.exception("mem1: could not write %d rebuilt session summaries", len(items))
            done, failed = 0, items
        loop = _running_loop()
        for key, item in failed:
            item.timer = loop.call_later(self.summary_delay, self._flush_session, key) if loop else None
            self._pending.setdefault(key, item)
        return done

    def _rebuild_marked(self, summary_id: str, identity_id: str | None) -> int:
        """Rebuild one summary up to the turn its mark names (the database, not memory, says
        which: a turn whose write was rolled back left no mark). 1 if it was rebuilt."""
        row = self.records.summary_mark(summary_id)
        if row is None or row[2] is None:
            return 0
        # The rebuild's own update clears the mark (if the record was deleted meanwhile,
        # _summarize clears it apart and makes a new summary).
        self._summarize(identity_id, row[0], row[1], row[2], marked=summary_id)
        return 1

    def rebuild_marked_summaries(self) -> int:
        """At start: rebuild the summaries a stop without :meth:`close` left marked behind
        (kill -9, power loss). Their last writer is not known any more: the record's own
        identity stands in. The scan stays within mem1 namespaces (an index range)."""
        done = 0
        for summary_id, identity_id in self.records.marked_summaries():
            try:
                with self.store.transaction():
                    done += self._rebuild_marked(summary_id, identity_id)
            except Exception:  # the next turn of that session rebuilds it as well
                log.exception("mem1: could not rebuild summary %s at start", summary_id)
        if done:
            log.info("mem1: rebuilt %d session summaries left behind by an unclean stop", done)
        return done

    def close(self) -> None:
        """At shutdown: every deferred summary written, no timer left."""
        self.flush_summaries()
        for item in self._pending.values():  # failed again: the next start rebuilds them
            if item.timer is not None:
                item.timer.cancel()
        self._pending.clear()

    # -- reading ---------------------------------------------------------------------------------

    def _search(
        self, ns: str, query: str, num: int, threshold: float | None, kinds: tuple[str, ...]
    ) -> dict[str, Any]:
        """The best ``num`` records of ``kinds``. The index is asked for 4 x ``num`` hits,
        to have enough left after the other kinds, ranked as a page of ``num`` (``page``:
        the vectors fill in only when the words find fewer than ``num``). Ranked as a page
        of 4 x ``num`` (before), a query with fewer matches than that brought vector
        neighbours into the first ten and on: recall@10 of a conversation's turns 0.787 /
        0.792 / 0.890 against 0.814 / 0.796 / 0.912 for the same search over the store
        (bench/RESULTS.md, "turns through agent-memory1.0")."""
        hits = self.store.search.search(query, [ns], limit=max(num * 4, 20), page=num)
        records = self.store.memories.by_seqs([h.seq for h in hits])
        best = best_score(hits, self.store.search.bm25_weight, self.store.search.vector_weight)
        results: list[dict[str, Any]] = []
        for hit in hits:
            memory = records.get(hit.seq)
            if memory is None or memory["kind"] not in kinds:
                continue
            # A rank-based score in 0..1 (1 = first in every ranking the search used); the
            # threshold filters on it.
            score = round(min(1.0, hit.score / best), 4)
            if threshold is not None and score < threshold:
                continue
            results.append(
                {"mem_id": memory["id"], "content": memory["content"], "type": memory["kind"], "score": score}
            )
            if len(results) >= num:
                break
        return {"results": results}

    def search_memory(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._search(
            namespace(body["user_id"], body["scope_id"]),
            body["query"],
            body["num"],
            body["threshold"],
            FRAGMENT_TYPES,
        )

    def search_summary(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._search(
            namespace(body["user_id"], body["scope_id"]),
            body["query"],
            body["num"],
            body["threshold"],
            ("summary",),
        )

    def page(self, body: dict[str, Any], *, with_total: bool) -> dict[str, Any]:
        ns = namespace(body["user_id"], body["scope_id"])
        size = body["page_size"] if isinstance(body["page_size"], int) and body["page_size"] > 0 else 10
        size = min(size, 100)
        index = body["page_idx"] if isinstance(body["page_idx"], int) and body["page_idx"] > 0 else 1
        index = min(index, 10**9)  # past any store's last page; SQLite offsets are 64-bit
        kind = (body.get("memory_type") or "").lower()
        kinds = (kind,) if kind in (*FRAGMENT_TYPES, "summary") else (*FRAGMENT_TYPES, "summary")
        rows = self.records.page(ns, kinds, size, size * (index - 1))
        results = []
        for row in rows:
            item: dict[str, Any] = {"mem_id": row["id"], "content": row["content"], "type": row["kind"]}
            if with_total:
                item["timestamp"] = (
                    datetime.fromisoformat(row["created_at"].replace("Z", "+00:00")).astimezone().isoformat()
                )
                item["source_id"] = row["provenance"].get("message_id")
            results.append(item)
        total = self.records.count(ns, kinds) if with_total else len(results)
        return {"results": results, "total": total}

    def message(
        self, message_id: str, user_id: str | None = None, scope_id: str | None = None
    ) -> dict[str, Any]:
        """Trace a message. The seed's call names only the id and the skill adds its
        user_id; ``user_id`` and ``scope_id`` are independent filters (each one given must
        match), so a caller that names its user or scope never sees another's message."""
        row = self.records.message(message_id, user_id, scope_id)
        if row is None:
            return {"found": False, "message_id": message_id}
        return {
            "found": True,
            "message_id": row["id"],
            "role": row["role"],
            "content": row["content"],
            "timestamp": row["timestamp"],
            "session_id": row["session_id"],
        }

    # -- variables ---------------------------------------------------------------------------------

    def get_variables(self, body: dict[str, Any]) -> dict[str, Any]:
        ns = namespace(body["user_id"], body["scope_id"])
        stored = self.records.variables(ns)
        names = body.get("names")
        return {"variables": stored if names is None else {n: stored.get(n) for n in names}}

    def update_variables(self, body: dict[str, Any]) -> dict[str, Any]:
        ns = namespace(body["user_id"], body["scope_id"])
        bad = [k for k, v in body["variables"].items() if not isinstance(v, str)]
        if bad:
            raise InvalidRequest(f"variable values must be strings: {', '.join(bad)}")
        with self.store.transaction():
            for name, value in body["variables"].items():
                self.records.set_variable(ns, name, value, local_timestamp())
        return {
            "status": "success",
            "message": "Variables updated successfully",
            "updated_count": len(body["variables"]),
        }

    def delete_variables(self, body: dict[str, Any]) -> dict[str, Any]:
        ns = namespace(body["user_id"], body["scope_id"])
        with self.store.transaction():
            deleted = self.records.delete_variables(ns, body["names"])
        return {"status": "success", "deleted": True, "deleted_count": deleted}

    # -- changing memories (never across user + scope) -------------------------------------------

    def _own(self, body: dict[str, Any], mem_id: str) -> MemoryRecord:
        memory = self.store.memories.find(mem_id)
        if (
            memory is None
            or memory["deleted_at"]
            or memory["namespace"] != namespace(body["user_id"], body["scope_id"])
        ):
            raise NotFound(f"Memory {mem_id} not found for this user_id and scope_id")
        return memory

    def update(self, identity: IdentityRecord, body: dict[str, Any]) -> dict[str, Any]:
        self._own(body, body["mem_id"])
        if not body["memory"].strip():
            raise InvalidRequest("memory must not be empty")
        with self.store.transaction():
            self.store.memories.update(
                body["mem_id"], content=body["memory"], title=body["memory"][:200], identity_id=identity["id"]
            )
        return {"status": "success", "message": f"Memory {body['mem_id']} updated successfully"}

    def delete(self, identity: IdentityRecord, body: dict[str, Any]) -> dict[str, Any]:
        self._own(body, body["mem_id"])
        with self.store.transaction():
            self.store.memories.delete(body["mem_id"], identity_id=identity["id"])
        return {"status": "success", "message": f"Memory {body['mem_id']} deleted successfully"}

    def batch_delete(self, identity: IdentityRecord, body: dict[str, Any]) -> dict[str, Any]:
        deleted, errors = 0, []
        with self.store.transaction():
            for mem_id in body["mem_ids"]:
                try:
                    self._own(body, mem_id)
                    self.store.memories.delete(mem_id, identity_id=identity["id"])
                    deleted += 1
                except NotFound as exc:
                    errors.append({"mem_id": mem_id, "error": exc.message})
        return {"status": "success", "deleted": deleted, "failed": len(errors), "errors": errors}

    def delete_scope(self, identity: IdentityRecord, body: dict[str, Any]) -> dict[str, Any]:
        """Every memory of one user in a scope (seed 004: "delete a user's memories by
        scope"). Other users of the scope keep theirs: user_id + scope_id isolate here too."""
        with self.store.transaction():
            ids = self.records.live_ids(namespace(body["user_id"], body["scope_id"]))
            for mem_id in ids:
                self.store.memories.delete(mem_id, identity_id=identity["id"])
        return {"status": "success", "deleted": True, "deleted_count": len(ids)}
