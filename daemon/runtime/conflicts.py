"""Resolving conflicts: the person keeps the current content, takes the incoming one, or
writes a merge. Each source knows what "current" and "incoming" are:

* memory_store_occ: current = the memory now; incoming = the losing write.
* suite_fact_contradiction: current = the workspace memory; incoming = the suite's fact.
* startup_item_drift: current = the hand-edited file; incoming = the daemon's region (taking
  it re-approves the plan with overwrite; keeping it leaves the file alone).
* upstream_sync: current = the local record; incoming = the upstream's version; base = the
  last synced content. Keeping current sends it upstream over the incoming one; taking
  incoming makes it local; a merge is sent upstream as a new version.
Every change is a new version of the memory, so nothing is lost either way.
"""

from __future__ import annotations

from typing import Any

from daemon.runtime.startup import StartupService
from state.conflict_records import ConflictRecord
from state.errors import Conflict, InvalidRequest
from state.identities import IdentityRecord
from state.memories import MemoryRecord
from state.store import Store

ACTIONS = ("keep_current", "take_incoming", "merge")


class ConflictService:
    def __init__(self, store: Store, startup: StartupService) -> None:
        self.store = store
        self.startup = startup

    def listed(self, status: str | None) -> list[dict[str, Any]]:
        """The conflicts with that status (all if None), each described."""
        return [self.describe(c) for c in self.store.conflicts.conflicts(status)]

    def describe(self, conflict: ConflictRecord) -> dict[str, Any]:
        """The conflict with current, incoming and base where known (for side by side), and
        the namespace of the memory it is about (None for a startup file)."""
        detail = conflict["detail"]
        current = incoming = base = None
        memory: MemoryRecord | None = None
        if conflict["kind"] == "memory_store_occ":
            memory = self.store.memories.find(conflict["subject_id"] or "")
            current = memory["content"] if memory else None
            incoming = detail.get("losing_content")
            base = next(
                (
                    v["content"]
                    for v in (self.store.memories.versions(memory["id"]) if memory else [])
                    if v["content_sha256"] == detail.get("expected_sha256")
                ),
                None,
            )
        elif conflict["kind"] == "suite_fact_contradiction":
            memory = self.store.memories.find(detail.get("workspace_memory_id", ""))
            current = memory["content"] if memory else detail.get("workspace_memory")
            incoming = detail.get("suite_fact")
        elif conflict["kind"] == "startup_item_drift":
            incoming = "the daemon's managed region (re-approve with overwrite)"
            current = f"your edit of {conflict['path']}"
        elif conflict["kind"] == "upstream_sync":
            memory = self.store.memories.find(conflict["subject_id"] or "")
            current = None if memory is None or memory["deleted_at"] else memory["content"]
            incoming = detail.get("incoming_content")
            base = detail.get("base_content")
        return {
            **conflict,
            "current": current,
            "incoming": incoming,
            "base": base,
            "namespace": memory["namespace"] if memory else None,
        }

    def resolve(
        self, owner: IdentityRecord, conflict_id: str, action: str, content: str | None
    ) -> dict[str, Any]:
        conflict = self.store.conflicts.conflict(conflict_id)
        if conflict["status"] != "open":
            raise Conflict(f"conflict {conflict_id} is already resolved ({conflict['resolution']})")
        if action not in ACTIONS:
            raise InvalidRequest(f"action must be one of: {', '.join(ACTIONS)}")
        if action == "merge" and not (content or "").strip():
            raise InvalidRequest("a merge needs the merged content")
        kind, detail = conflict["kind"], conflict["detail"]
        named = (
            conflict["subject_id"]
            if kind in ("memory_store_occ", "upstream_sync", "startup_item_drift")
            else detail.get("workspace_memory_id")
        )
        target = named if isinstance(named, str) else ""  # the memory (or plan) it is about
        if action != "keep_current" and not target:
            raise Conflict(f"conflict {conflict_id} names nothing to take or merge into")
        if kind == "startup_item_drift":
            if action == "merge":
                raise InvalidRequest("a managed file has no merge here: edit the file, then keep current")
            if action == "take_incoming":
                self.startup.approve(owner, target, overwrite=True)
        elif kind == "upstream_sync":
            self._resolve_upstream(owner, target, detail, action, content)
        elif action != "keep_current":
            new = (
                content
                if action == "merge"
                else (
                    detail.get("losing_content") if kind == "memory_store_occ" else detail.get("suite_fact")
                )
            )
            if not isinstance(new, str):
                raise Conflict(f"conflict {conflict_id} keeps no incoming content to take")
            with self.store.transaction():
                self.store.memories.update(target, content=new, identity_id=owner["id"])
        with self.store.transaction():
            self.store.conflicts.resolve_conflict(conflict_id, action)
        return self.describe(self.store.conflicts.conflict(conflict_id))

    def _resolve_upstream(
        self, owner: IdentityRecord, memory_id: str, detail: dict[str, Any], action: str, content: str | None
    ) -> None:
        """Whatever the person chose becomes the local record and then the upstream's: the
        held local changes are released, and the result is pushed at the incoming version."""
        memory = self.store.memories.get(memory_id)
        with self.store.transaction():
            if action == "take_incoming":
                if detail.get("incoming_deleted"):
                    self.store.memories.delete(memory_id, identity_id=owner["id"])
                elif memory["deleted_at"] or memory["content"] != detail.get("incoming_content"):
                    if memory["deleted_at"]:
                        raise InvalidRequest(
                            "the local record was deleted: keep current, or"
                            " revert it first and then take incoming"
                        )
                    self.store.memories.update(
                        memory_id, content=detail.get("incoming_content") or "", identity_id=owner["id"]
                    )
                self.store.upstream.release(memory_id, resend=False)
            elif action == "merge":
                if memory["deleted_at"]:
                    raise InvalidRequest("the local record was deleted: revert it first to merge")
                self.store.memories.update(memory_id, content=content or "", identity_id=owner["id"])
                self.store.upstream.release(memory_id, resend=False)
            else:
                self.store.upstream.release(memory_id, resend=True)
