"""The upstream side of sync (a documented extension of AMP, served in every role, used by
daemons that have this daemon as their upstream).

AMP has endpoints to *add* memory (memory deltas, brief events, ...) but none to read a
workspace's changes since a point, nor to edit, delete or redact a record with a base
version. Downstream daemons push new records through AMP's own endpoints and use these for
the rest:

* ``GET /api/sync/changes?cursor=N``: new versions and redactions of the caller's workspace
  records, in commit order; ``next_cursor`` is where to continue. With ``&wait=S`` and
  nothing after the cursor, the answer waits up to S seconds (at most ``wait_max_seconds``
  of the info) for a change to commit (daemon/runtime/feed_waiters.py).
* ``POST /api/sync/records``: a record that has no AMP write endpoint (store documents ...),
  deduplicated by the sender's ``origin_memory_id``.
* ``POST /api/sync/records/{id}``: update or delete with ``base_version``; a record changed
  meanwhile answers 409 with the current record, so nothing is overwritten silently.
* ``POST /api/sync/records/{id}/redact``: remove the content with a given sha256 from
  every version of the record.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from daemon.runtime.access import resolve_workspace
from daemon.runtime.changes import ContextChanges
from daemon.runtime.constants import PROTOCOL_VERSION, RUNTIME_VERSION
from daemon.runtime.feed_waiters import FeedWaiters
from state.errors import Conflict, InvalidRequest, NotFound
from state.group_commit import flush_now
from state.identities import IdentityRecord
from state.memories import MemoryRecord, NewMemory, sha256_text
from state.store import Store

FEED_SCHEMA = "memorycloud.sync-changes.v1"
RECORD_SCHEMA = "memorycloud.sync-record.v1"
# The longest a pull may wait for a change: under the idle timeouts of the proxies a team
# server usually sits behind (60 s is common), with room for the answer.
MAX_WAIT_SECONDS = 30


def feed_record(memory: MemoryRecord) -> dict[str, Any]:
    return {
        "memory_id": memory["id"],
        "version": memory["version"],
        "kind": memory["kind"],
        "title": memory["title"],
        "content": memory["content"],
        "content_sha256": memory["content_sha256"],
        "importance": memory["importance"],
        "project_key": memory["project_key"],
        "path": memory["path"],
        "deleted": bool(memory["deleted_at"]),
        "provenance": memory["provenance"],
    }


class SyncFeed:
    def __init__(self, store: Store, changes: ContextChanges, waiters: FeedWaiters) -> None:
        self.store = store
        self.changes = changes
        self.waiters = waiters

    def _workspace(self, identity: IdentityRecord) -> str:
        return resolve_workspace(self.store, identity, None)["id"]

    def _own_record(self, identity: IdentityRecord, memory_id: str) -> MemoryRecord:
        memory = self.store.memories.find(memory_id)
        if memory is None or memory["namespace"] != self._workspace(identity):
            raise NotFound(f"memory {memory_id} not found")
        return memory

    def info(self, identity: IdentityRecord, role: str) -> dict[str, Any]:
        return {
            "schema": "memorycloud.sync-info.v1",
            "role": role,
            "runtime_version": RUNTIME_VERSION,
            "protocol_version": PROTOCOL_VERSION,
            "workspace_id": self._workspace(identity),
            "latest_cursor": self.store.upstream.latest_change(),
            "endpoints": {"changes": "/api/sync/changes", "records": "/api/sync/records"},
            "wait_max_seconds": MAX_WAIT_SECONDS,
        }

    async def follow(self, identity: IdentityRecord, cursor: int, limit: int, wait: float) -> dict[str, Any]:
        """:meth:`feed`; when it has nothing after ``cursor``, the feed as soon as a change
        of the caller's workspace commits, or empty after ``wait`` seconds. Read apart from
        the event loop where the store can (Store.read: committed rows only)."""
        if wait <= 0:
            return await self.store.read(lambda: self.feed(identity, cursor, limit))
        workspace = self._workspace(identity)
        deadline = asyncio.get_running_loop().time() + min(wait, MAX_WAIT_SECONDS)
        with self.waiters.watch(workspace) as woken:
            while True:
                woken.clear()  # before the read: a change after it sets it again
                # Committed writes only: one still in this turn's group could yet fail.
                flush_now(self.store.conn)
                answer = await self.store.read(lambda: self.feed(identity, cursor, limit))
                left = deadline - asyncio.get_running_loop().time()
                if answer["changes"] or left <= 0 or self.waiters.closing:
                    return answer
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), left)

    def feed(self, identity: IdentityRecord, cursor: int, limit: int) -> dict[str, Any]:
        rows = self.store.upstream.changes([self._workspace(identity)], cursor, limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        changes = [
            {
                "cursor": r["seq"],
                "change": r["change"],
                "memory_id": r["memory_id"],
                "version": r["version"],
                "operation": r["operation"],
                "current_version": r["current_version"],
                "kind": r["kind"],
                "title": r["title"],
                "content": r["content"],
                "content_sha256": r["change_sha256"] if r["change"] == "redaction" else r["content_sha256"],
                "redacted": r["redacted_at"] is not None,
                "importance": r["importance"],
                "project_key": r["project_key"],
                "path": r["path"],
                "triggers": r["triggers"],
                "source": r["source"],
                "provenance": r["provenance"],
            }
            for r in rows
        ]
        return {
            "schema": FEED_SCHEMA,
            "changes": changes,
            "has_more": more,
            "next_cursor": rows[-1]["seq"] if rows else cursor,
        }

    def create(self, identity: IdentityRecord, body: dict[str, Any]) -> dict[str, Any]:
        workspace = self._workspace(identity)
        origin = body["origin_memory_id"]
        existing = self.store.upstream.synced_copy(workspace, identity["id"], origin)
        if existing:  # the sender retried: the first create stands
            return {
                "schema": RECORD_SCHEMA,
                "created": False,
                "record": feed_record(self.store.memories.get(existing)),
            }
        provenance = {**(body.get("provenance") or {}), "origin_memory_id": origin, "agent": identity["name"]}
        with self.store.transaction():
            memory = self.store.memories.create(
                NewMemory(
                    namespace=workspace,
                    kind=body["kind"],
                    content=body["content"],
                    source=body.get("source") or "synced",
                    title=body.get("title") or "",
                    project_key=body.get("project_key"),
                    path=body.get("path"),
                    importance=body["importance"],
                    triggers=body.get("triggers") or [],
                    provenance=provenance,
                    identity_id=identity["id"],
                )
            )
        self.changes.changed(workspace, memory["project_key"])
        return {"schema": RECORD_SCHEMA, "created": True, "record": feed_record(memory)}

    def change(self, identity: IdentityRecord, memory_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Update or delete if the record is still at ``base_version``; else 409 with it."""
        memory = self._own_record(identity, memory_id)
        operation = body["operation"]
        if operation not in ("update", "delete"):
            raise InvalidRequest("operation must be 'update' or 'delete'")
        if operation == "update" and body.get("content") is None:
            raise InvalidRequest("an update needs 'content'")
        wanted_sha = None if operation == "delete" else sha256_text(body["content"])
        already = (
            memory["deleted_at"] is not None
            if operation == "delete"
            else not memory["deleted_at"] and memory["content_sha256"] == wanted_sha
        )
        if already:  # the same change arrived before (a retry, or both sides agree)
            return {"schema": RECORD_SCHEMA, "changed": False, "record": feed_record(memory)}
        if memory["version"] != body["base_version"]:
            raise Conflict(
                f"memory {memory_id} changed upstream since version {body['base_version']}"
                f" (now {memory['version']}); nothing was overwritten",
                details={"current": feed_record(memory), "base_version": body["base_version"]},
            )
        with self.store.transaction():
            if operation == "delete":
                memory = self.store.memories.delete(memory_id, identity_id=identity["id"])
            else:
                if memory["deleted_at"]:
                    raise Conflict(
                        f"memory {memory_id} was deleted upstream", details={"current": feed_record(memory)}
                    )
                memory = self.store.memories.update(
                    memory_id,
                    content=body["content"],
                    title=body.get("title"),
                    importance=body.get("importance"),
                    identity_id=identity["id"],
                )
        self.changes.changed(memory["namespace"], memory["project_key"])
        return {"schema": RECORD_SCHEMA, "changed": True, "record": feed_record(memory)}

    def redact(self, identity: IdentityRecord, memory_id: str, content_sha256: str) -> dict[str, Any]:
        """Redact every version of the record whose content has this digest."""
        memory = self._own_record(identity, memory_id)
        redacted = []
        with self.store.transaction():
            for version in self.store.memories.versions(memory_id):
                if version["content_sha256"] == content_sha256 and not version["redacted_at"]:
                    self.store.memories.redact_version(version["id"])
                    redacted.append(version["version"])
        self.changes.changed(memory["namespace"], memory["project_key"])
        return {
            "schema": "memorycloud.sync-redaction.v1",
            "memory_id": memory_id,
            "redacted_versions": redacted,
        }
