"""Resolving conflicts: the person keeps the current content, takes the incoming one, or
writes a merge. Each source knows what "current" and "incoming" are:

* memory_store_occ: current = the memory now; incoming = the losing write.
* suite_fact_contradiction: current = the workspace memory; incoming = the suite's fact.
* startup_item_drift: current = the hand-edited file; incoming = the daemon's region (taking
  it re-approves the plan with overwrite; keeping it leaves the file alone).
Every change is a new version of the memory, so nothing is lost either way.
"""

from __future__ import annotations

from typing import Any

from daemon.runtime.startup import StartupService
from state.errors import Conflict, InvalidRequest
from state.ids import now_iso
from state.store import Store

ACTIONS = ("keep_current", "take_incoming", "merge")


class ConflictService:
    def __init__(self, store: Store, startup: StartupService) -> None:
        self.store = store
        self.startup = startup

    def describe(self, conflict: dict[str, Any]) -> dict[str, Any]:
        """The conflict with current, incoming and base where known (for side by side)."""
        detail = conflict["detail"]
        current = incoming = base = None
        if conflict["kind"] == "memory_store_occ":
            memory = self.store.memories.find(conflict["subject_id"])
            current = memory["content"] if memory else None
            incoming = detail.get("losing_content")
            base = next((v["content"] for v in (self.store.memories.versions(memory["id"]) if memory else [])
                         if v["content_sha256"] == detail.get("expected_sha256")), None)
        elif conflict["kind"] == "suite_fact_contradiction":
            memory = self.store.memories.find(detail.get("workspace_memory_id", ""))
            current = memory["content"] if memory else detail.get("workspace_memory")
            incoming = detail.get("suite_fact")
        elif conflict["kind"] == "startup_item_drift":
            incoming = "the daemon's managed region (re-approve with overwrite)"
            current = f"your edit of {conflict['path']}"
        return {**conflict, "current": current, "incoming": incoming, "base": base}

    def resolve(self, owner: dict[str, Any], conflict_id: str, action: str,
                content: str | None) -> dict[str, Any]:
        conflict = self.store.conflicts.conflict(conflict_id)
        if conflict["status"] != "open":
            raise Conflict(f"conflict {conflict_id} is already resolved ({conflict['resolution']})")
        if action not in ACTIONS:
            raise InvalidRequest(f"action must be one of: {', '.join(ACTIONS)}")
        if action == "merge" and not (content or "").strip():
            raise InvalidRequest("a merge needs the merged content")
        kind, detail = conflict["kind"], conflict["detail"]
        target = (conflict["subject_id"] if kind == "memory_store_occ"
                  else detail.get("workspace_memory_id"))
        if kind == "startup_item_drift":
            if action == "merge":
                raise InvalidRequest("a managed file has no merge here: edit the file, then keep current")
            if action == "take_incoming":
                self.startup.approve(owner, conflict["subject_id"], overwrite=True)
        elif action != "keep_current":
            new = content if action == "merge" else (
                detail.get("losing_content") if kind == "memory_store_occ" else detail.get("suite_fact"))
            with self.store.transaction():
                self.store.memories.update(target, content=new, identity_id=owner["id"])
        with self.store.transaction():
            self.store.conn.execute(
                "update conflicts set status = 'resolved', resolved_at = ?, resolution = ?"
                " where id = ? and status = 'open'", (now_iso(), action, conflict_id))
        return self.describe(self.store.conflicts.conflict(conflict_id))
