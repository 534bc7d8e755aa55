"""Pull: bring the upstream workspace's changes into the local store (sync extension feed).

Each change is applied in one transaction with the new cursor, so a crash or a dropped
connection resumes exactly where it stopped. A record changed on both sides since the last
sync is never overwritten: it becomes an ``upstream_sync`` conflict for the person, with the
local content (current), the upstream's (incoming) and the last synced one (base).
"""

from __future__ import annotations

from typing import Any

from daemon.runtime.changes import ContextChanges
from daemon.runtime.context_packs import PACK_SOURCES
from daemon.upstream.client import UpstreamClient
from daemon.upstream.read_index import origin_of
from state.conflict_records import ConflictRecord
from state.memories import MemoryRecord, NewMemory
from state.store import Store
from state.upstream_records import UpstreamLinkRecord

PAGE = 200


def _origin(change: dict[str, Any]) -> str | None:
    provenance = change.get("provenance")
    return origin_of(provenance) if isinstance(provenance, dict) else None


def record_conflict(
    store: Store,
    memory: MemoryRecord,
    link: UpstreamLinkRecord,
    incoming: dict[str, Any],
    upstream_url: str,
) -> ConflictRecord:
    """Keep both sides for the person; hold the local changes until they decide. Call inside
    a transaction."""
    base = next(
        (
            v["content"]
            for v in store.memories.versions(memory["id"])
            if v["version"] == link["local_version"]
        ),
        None,
    )
    detail: dict[str, Any] = {
        "memory_id": memory["id"],
        "upstream_id": link["upstream_id"],
        "upstream": upstream_url,
        "incoming_version": incoming.get("version") or incoming.get("current_version"),
        "incoming_content": None
        if incoming.get("deleted") or incoming.get("operation") == "deleted"
        else incoming.get("content"),
        "incoming_deleted": bool(incoming.get("deleted") or incoming.get("operation") == "deleted"),
        "incoming_title": incoming.get("title"),
        "base_version": link["upstream_version"],
        "base_content": base,
        "local_version": memory["version"],
    }
    conflict = store.conflicts.add_conflict("upstream_sync", memory["id"], memory["path"], detail)
    if conflict["detail"] != detail:  # a newer upstream change for an open conflict
        store.conflicts.update_detail(conflict["id"], detail)
    store.upstream.hold(memory["id"])
    store.upstream.save_link(
        memory["id"],
        link["upstream_id"],
        link["kind"],
        upstream_version=detail["incoming_version"],
        local_version=link["local_version"],
        synced_sha256=link["synced_sha256"],
    )
    return conflict


class Puller:
    def __init__(self, store: Store, client: UpstreamClient, changes: ContextChanges) -> None:
        self.store = store
        self.client = client
        self.changes = changes

    @property
    def local_workspace(self) -> str:
        return self.store.upstream.get("local_workspace_id") or ""

    async def pull(self) -> dict[str, int]:
        done = {"applied": 0, "conflicts": 0, "skipped": 0}
        touched: set[str | None] = set()
        while True:
            cursor = int(self.store.upstream.get("cursor") or 0)
            page = await self.client.call(
                "GET", "/api/sync/changes", params={"cursor": cursor, "limit": PAGE}
            )
            for change in page["changes"]:
                with self.store.transaction():
                    outcome = self._apply(change, touched)
                    self.store.upstream.put(cursor=change["cursor"])
                done[outcome] = done.get(outcome, 0) + 1
            if not page.get("has_more") or not page["changes"]:
                break
        for project_key in touched:
            self.changes.changed(self.local_workspace, project_key)
        return done

    def _apply(self, change: dict[str, Any], touched: set[str | None]) -> str:
        if change["change"] == "redaction":
            return self._apply_redaction(change)
        link = self.store.upstream.link_by_upstream(change["memory_id"])
        if link is None:
            return self._apply_new(change, touched)
        if link["upstream_version"] is not None and change["version"] <= link["upstream_version"]:
            return "skipped"  # our own push coming back, or already applied
        if change["version"] < change["current_version"]:
            return "skipped"  # a later version of this record follows in the feed
        memory = self.store.memories.find(link["local_id"])
        if memory is None:
            return "skipped"
        deleted = change["operation"] == "deleted"
        local_changed = memory["version"] != link["local_version"]
        same = bool(memory["deleted_at"]) == deleted and (
            deleted or memory["content_sha256"] == change["content_sha256"]
        )
        if local_changed and not same:
            record_conflict(self.store, memory, link, change, self.client.url)
            return "conflicts"
        since = self.store.upstream.last_seq()
        if not same:
            if deleted:
                memory = self.store.memories.delete(memory["id"])
            elif memory["deleted_at"]:
                record_conflict(self.store, memory, link, change, self.client.url)
                return "conflicts"
            else:
                memory = self.store.memories.update(
                    memory["id"],
                    content=change["content"] or "",
                    title=change["title"],
                    importance=change["importance"],
                )
        self.store.upstream.drop_echo(memory["id"], since)
        self._link(memory, change)
        touched.add(memory["project_key"])
        return "applied"

    def _link(self, memory: MemoryRecord, change: dict[str, Any]) -> None:
        """The local memory is now at the upstream's version of ``change``, in sync."""
        self.store.upstream.save_link(
            memory["id"],
            change["memory_id"],
            "memory",
            upstream_version=change["version"],
            local_version=memory["version"],
            synced_sha256=memory["content_sha256"],
        )

    def _apply_new(self, change: dict[str, Any], touched: set[str | None]) -> str:
        origin = _origin(change)
        mine = self.store.memories.find(origin) if origin else None
        if mine is not None:
            # Our own push whose answer was lost: link it, never duplicate it.
            self._link(mine, change)
            return "skipped"
        if change["version"] < change["current_version"] or change["operation"] == "deleted":
            return "skipped"  # only a record's latest state is created here
        if change["content"] is None:
            return "skipped"  # redacted upstream
        since = self.store.upstream.last_seq()
        provenance = {
            "upstream": self.client.url,
            "upstream_id": change["memory_id"],
            "upstream_source": change["source"],
            "agent": (change.get("provenance") or {}).get("agent"),
        }
        memory = self.store.memories.create(
            NewMemory(
                namespace=self.local_workspace,
                kind=change["kind"],
                content=change["content"],
                source=change["source"] if change["source"] in PACK_SOURCES else "upstream",
                title=change["title"],
                project_key=change["project_key"],
                path=change["path"],
                importance=change["importance"],
                triggers=change.get("triggers") or [],
                provenance=provenance,
            )
        )
        self.store.upstream.drop_echo(memory["id"], since)
        self.store.upstream.save_link(
            memory["id"],
            change["memory_id"],
            "memory",
            upstream_version=change["version"],
            local_version=1,
            synced_sha256=memory["content_sha256"],
        )
        touched.add(memory["project_key"])
        return "applied"

    def _apply_redaction(self, change: dict[str, Any]) -> str:
        """Redaction on the upstream removes the same content here."""
        link = self.store.upstream.link_by_upstream(change["memory_id"])
        if link is None:
            return "skipped"
        since = self.store.upstream.last_seq()
        redacted = 0
        for version in self.store.memories.versions(link["local_id"]):
            if version["content_sha256"] == change["content_sha256"] and not version["redacted_at"]:
                self.store.memories.redact_version(version["id"])
                redacted += 1
        self.store.upstream.drop_echo(link["local_id"], since)
        return "applied" if redacted else "skipped"
