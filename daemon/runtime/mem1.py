"""agent-memory1.0 (seed 004) over the one store.

Each (user_id, scope_id) is its own namespace; nothing reads, updates or deletes across it.
Messages are kept and traceable (message id -> role, content, timestamp). Memories are
derived without any LLM, honouring the enable_* flags: an episodic memory per message (a
user's statement about themselves becomes a user_profile memory instead), one summary per
session (updated as the session grows), and profile variables (from ``mem_variables``
defaults and ``update_variables``). Semantic extraction needs a model and is not done.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any
from urllib.parse import quote

from daemon.validation import ValidationFailed
from state.errors import InvalidRequest, NotFound
from state.ids import new_id
from state.memories import NewMemory
from state.store import Store

DEFAULT = "__default__"
FRAGMENT_TYPES = ("user_profile", "semantic_memory", "episodic_memory")
SELF_STATEMENT = re.compile(r"^\s*(i|i'm|i am|my|i've|i have|我|我的)\b", re.I)
SUMMARY_CHARS = 2000


def namespace(user_id: str, scope_id: str) -> str:
    """Percent-encoded parts, so no user or scope id can collide with another's."""
    return f"mem1:{quote(user_id, safe='')}:{quote(scope_id, safe='')}"


def local_timestamp() -> str:
    return datetime.now().astimezone().isoformat()


class Mem1Service:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.conn = store.conn

    # -- writing ------------------------------------------------------------------------------

    def add_messages(self, identity: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        messages = [m for m in body["messages"] if isinstance(m, dict)
                    and isinstance(m.get("content"), str) and m["content"].strip()]
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
                self.conn.execute(
                    "insert into mem1_messages (id, namespace, user_id, scope_id, session_id, role,"
                    " content, timestamp) values (?,?,?,?,?,?,?,?)",
                    (message_id, ns, user, scope, session, role, message["content"], local_timestamp()))
                ids.append(message_id)
                if body["enable_long_term_mem"]:
                    self._fragment(identity, ns, role, message["content"], message_id, session, body)
            for variable in body.get("mem_variables") or []:
                if isinstance(variable, dict) and variable.get("name") and variable.get("default") is not None:
                    self.conn.execute(
                        "insert or ignore into mem1_variables (namespace, name, value, updated_at)"
                        " values (?,?,?,?)", (ns, str(variable["name"]), str(variable["default"]),
                                              local_timestamp()))
            if body["enable_long_term_mem"] and body["enable_summary_memory"]:
                self._summarize(identity, ns, session, ids[-1])
        return {"status": "success", "message": "Messages added successfully", "message_ids": ids}

    def _fragment(self, identity: dict[str, Any], ns: str, role: str, content: str,
                  message_id: str, session: str, flags: dict[str, Any]) -> None:
        kind = ("user_profile" if role == "user" and SELF_STATEMENT.match(content)
                and flags["enable_user_profile"] else "episodic_memory")
        if kind == "episodic_memory" and not flags["enable_episodic_memory"]:
            return
        self.store.memories.create(NewMemory(
            namespace=ns, kind=kind, title=content[:200], content=content, source="mem1",
            provenance={"message_id": message_id, "session_id": session, "role": role,
                        "agent": identity["name"]}, identity_id=identity["id"]))

    def _summarize(self, identity: dict[str, Any], ns: str, session: str, last_message: str) -> None:
        rows = self.conn.execute(
            "select role, content from mem1_messages where namespace = ? and session_id = ?"
            " order by seq", (ns, session)).fetchall()
        lines = [f"{r['role']}: {' '.join(r['content'].split())}" for r in rows]
        text = f"Session {session}:\n" + "\n".join(lines)
        if len(text) > SUMMARY_CHARS:  # keep the newest lines: they matter most for recall
            text = f"Session {session} (latest):\n" + "\n".join(lines)[-SUMMARY_CHARS:]
        existing = self.conn.execute(
            "select id from memory_records where namespace = ? and kind = 'summary'"
            " and deleted_at is null and json_extract(provenance, '$.session_id') = ?",
            (ns, session)).fetchone()
        if existing:
            self.store.memories.update(existing[0], content=text, identity_id=identity["id"])
            self.conn.execute("update memory_records set provenance = json_set(provenance,"
                              " '$.message_id', ?) where id = ?", (last_message, existing[0]))
        else:
            self.store.memories.create(NewMemory(
                namespace=ns, kind="summary", title=f"Session {session}", content=text,
                source="mem1", provenance={"session_id": session, "message_id": last_message},
                identity_id=identity["id"]))

    # -- reading ---------------------------------------------------------------------------------

    def _search(self, ns: str, query: str, num: int, threshold: float | None,
                kinds: tuple[str, ...]) -> dict[str, Any]:
        hits = self.store.search.search(query, [ns], limit=max(num * 4, 20))
        records = self.store.memories.by_seqs([h.seq for h in hits])
        best = (self.store.search.bm25_weight + self.store.search.vector_weight) / 61
        results = []
        for hit in hits:
            memory = records.get(hit.seq)
            if memory is None or memory["kind"] not in kinds:
                continue
            # A rank-based score in 0..1 (1 = first in both rankings); threshold filters on it.
            score = round(min(1.0, hit.score / best), 4)
            if threshold is not None and score < threshold:
                continue
            results.append({"mem_id": memory["id"], "content": memory["content"],
                            "type": memory["kind"], "score": score})
            if len(results) >= num:
                break
        return {"results": results}

    def search_memory(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._search(namespace(body["user_id"], body["scope_id"]), body["query"], body["num"],
                            body["threshold"], FRAGMENT_TYPES)

    def search_summary(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._search(namespace(body["user_id"], body["scope_id"]), body["query"], body["num"],
                            body["threshold"], ("summary",))

    def page(self, body: dict[str, Any], *, with_total: bool) -> dict[str, Any]:
        ns = namespace(body["user_id"], body["scope_id"])
        size = body["page_size"] if isinstance(body["page_size"], int) and body["page_size"] > 0 else 10
        size = min(size, 100)
        index = body["page_idx"] if isinstance(body["page_idx"], int) and body["page_idx"] > 0 else 1
        index = min(index, 10**9)  # past any store's last page; SQLite offsets are 64-bit
        kind = (body.get("memory_type") or "").lower()
        kinds = (kind,) if kind in (*FRAGMENT_TYPES, "summary") else (*FRAGMENT_TYPES, "summary")
        marks = ",".join("?" * len(kinds))
        where = f"namespace = ? and deleted_at is null and kind in ({marks})"
        rows = self.conn.execute(
            f"select id, kind, content, created_at, provenance from memory_records where {where}"
            " order by seq limit ? offset ?", (ns, *kinds, size, size * (index - 1))).fetchall()
        results = []
        for row in rows:
            item = {"mem_id": row["id"], "content": row["content"], "type": row["kind"]}
            if with_total:
                item["timestamp"] = datetime.fromisoformat(row["created_at"].replace("Z", "+00:00")
                                                           ).astimezone().isoformat()
                item["source_id"] = json.loads(row["provenance"]).get("message_id")
            results.append(item)
        total = (self.conn.execute(f"select count(*) from memory_records where {where}",
                                   (ns, *kinds)).fetchone()[0] if with_total else len(results))
        return {"results": results, "total": total}

    def message(self, message_id: str, user_id: str | None = None,
                scope_id: str | None = None) -> dict[str, Any]:
        """Trace a message. The seed's call names only the id; a caller that also names its
        user and scope never sees another namespace's message."""
        row = self.conn.execute("select * from mem1_messages where id = ?", (message_id,)).fetchone()
        if row is not None and (user_id is not None or scope_id is not None):
            if row["namespace"] != namespace(user_id or DEFAULT, scope_id or DEFAULT):
                row = None
        if row is None:
            return {"found": False, "message_id": message_id}
        return {"found": True, "message_id": row["id"], "role": row["role"], "content": row["content"],
                "timestamp": row["timestamp"], "session_id": row["session_id"]}

    # -- variables ---------------------------------------------------------------------------------

    def get_variables(self, body: dict[str, Any]) -> dict[str, Any]:
        ns = namespace(body["user_id"], body["scope_id"])
        stored = {r["name"]: r["value"] for r in self.conn.execute(
            "select name, value from mem1_variables where namespace = ?", (ns,))}
        names = body.get("names")
        return {"variables": stored if names is None else {n: stored.get(n) for n in names}}

    def update_variables(self, body: dict[str, Any]) -> dict[str, Any]:
        ns = namespace(body["user_id"], body["scope_id"])
        bad = [k for k, v in body["variables"].items() if not isinstance(v, str)]
        if bad:
            raise InvalidRequest(f"variable values must be strings: {', '.join(bad)}")
        with self.store.transaction():
            for name, value in body["variables"].items():
                self.conn.execute(
                    "insert into mem1_variables (namespace, name, value, updated_at) values (?,?,?,?)"
                    " on conflict (namespace, name) do update set value = excluded.value,"
                    " updated_at = excluded.updated_at", (ns, name, value, local_timestamp()))
        return {"status": "success", "message": "Variables updated successfully",
                "updated_count": len(body["variables"])}

    def delete_variables(self, body: dict[str, Any]) -> dict[str, Any]:
        ns = namespace(body["user_id"], body["scope_id"])
        marks = ",".join("?" * len(body["names"])) or "''"
        with self.store.transaction():
            cursor = self.conn.execute(
                f"delete from mem1_variables where namespace = ? and name in ({marks})",
                (ns, *body["names"]))
        return {"status": "success", "deleted": True, "deleted_count": cursor.rowcount}

    # -- changing memories (never across user + scope) -------------------------------------------

    def _own(self, body: dict[str, Any], mem_id: str) -> dict[str, Any]:
        memory = self.store.memories.find(mem_id)
        if memory is None or memory["deleted_at"] or memory["namespace"] != namespace(
                body["user_id"], body["scope_id"]):
            raise NotFound(f"Memory {mem_id} not found for this user_id and scope_id")
        return memory

    def update(self, identity: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        self._own(body, body["mem_id"])
        if not body["memory"].strip():
            raise InvalidRequest("memory must not be empty")
        with self.store.transaction():
            self.store.memories.update(body["mem_id"], content=body["memory"], title=body["memory"][:200],
                                       identity_id=identity["id"])
        return {"status": "success", "message": f"Memory {body['mem_id']} updated successfully"}

    def delete(self, identity: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        self._own(body, body["mem_id"])
        with self.store.transaction():
            self.store.memories.delete(body["mem_id"], identity_id=identity["id"])
        return {"status": "success", "message": f"Memory {body['mem_id']} deleted successfully"}

    def batch_delete(self, identity: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
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

    def delete_scope(self, identity: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """Every memory of one user in a scope (seed 004: "delete a user's memories by
        scope"). Other users of the scope keep theirs: user_id + scope_id isolate here too."""
        with self.store.transaction():
            ids = [r[0] for r in self.conn.execute(
                "select id from memory_records where namespace = ? and deleted_at is null",
                (namespace(body["user_id"], body["scope_id"]),))]
            for mem_id in ids:
                self.store.memories.delete(mem_id, identity_id=identity["id"])
        return {"status": "success", "deleted": True, "deleted_count": len(ids)}
