"""Memory Briefs (amp.memory-brief.v1) and their event stream (amp.memory-brief-event.v1).

A brief is written for one task: the workspace memories that match the task (hybrid
search), the project's standing memories, the latest hand-off and recent events. Events
written back are mirrored into memory deltas and summary cards, so they reach context packs.
"""

from __future__ import annotations

from typing import Any

from daemon.runtime.access import public_memory, public_workspace, resolve_workspace
from daemon.runtime.changes import ContextChanges
from daemon.runtime.constants import RUNTIME_VERSION
from daemon.runtime.context_packs import ContextPackService
from daemon.runtime.deltas import DeltaService
from state.amp_records import BriefEventRecord, MemoryBriefRecord
from state.errors import NotFound
from state.identities import IdentityRecord, WorkspaceRecord
from state.ids import new_id, now_iso
from state.memories import MemoryRecord
from state.store import Store


def _bullet(text: str, ident: str, limit: int = 240) -> str:
    flat = " ".join(text.split())
    return f"- {flat[: limit - 3] + '...' if len(flat) > limit else flat} `{ident}`"


def brief_query(body: dict[str, Any]) -> str:
    """What a memory-brief searches for its relevant memories: the task and its context."""
    return f"{body['task']}\n{body.get('current_context') or ''}"


class BriefService:
    def __init__(
        self, store: Store, packs: ContextPackService, deltas: DeltaService, changes: ContextChanges
    ) -> None:
        self.store = store
        self.packs = packs
        self.deltas = deltas
        self.changes = changes

    def _relevant(self, workspace_id: str, query: str, limit: int) -> list[MemoryRecord]:
        hits = self.store.search.search(query, [workspace_id], limit=limit)
        by_seq = self.store.memories.by_seqs([h.seq for h in hits])
        return [by_seq[h.seq] for h in hits if h.seq in by_seq]

    def _handoff(
        self, workspace_id: str, project_key: str | None, handoff_code: str | None
    ) -> BriefEventRecord | None:
        """The hand-off to continue from: the named brief/event, else the latest handoff_ready."""
        if handoff_code:
            event = self.store.amp.handoff_event(workspace_id, handoff_code)
            if event is None:
                raise NotFound(f"hand-off {handoff_code} not found in this workspace")
            return event
        return self.store.amp.latest_handoff(workspace_id, project_key)

    def create(self, identity: IdentityRecord, body: dict[str, Any], base_url: str) -> dict[str, Any]:
        workspace = resolve_workspace(self.store, identity, body.get("workspace_id"))
        project_key = body.get("project_key")
        limit = body["max_items"]
        relevant = self._relevant(workspace["id"], brief_query(body), limit)
        seen = {m["id"] for m in relevant}
        # The project's standing memories are read once, for this brief's project state (its
        # first ``limit``) and for its context pack (the pack's first ``pack_items``).
        pack_params = {
            "workspace_id": workspace["id"],
            "project_key": project_key,
            "runtime": (body.get("environment") or {}).get("runtime"),
            "reason": "memory_brief",
        }
        pack_items = self.packs.pack_items(pack_params)
        standing = self.packs.standing(
            workspace["id"], project_key, max(limit, pack_items) if project_key else pack_items
        )
        project = [m for m in standing[:limit] if m["id"] not in seen] if project_key else []
        handoff = self._handoff(workspace["id"], project_key, body.get("handoff_code"))
        events = self.store.amp.recent_events(workspace["id"], project_key, limit)
        brief_id = new_id("brief_")
        lines = [
            "# MemoryCloud Memory Brief",
            "",
            f"Brief ID: `{brief_id}` · Task: {' '.join(body['task'].split())[:300]}",
            f"Workspace: {workspace['name']} (`{workspace['id']}`) · Project: {project_key or '(workspace-wide)'}",
            "",
            "## Runtime Rule",
            "Use this brief as private context before acting. Current system, developer and user"
            " instructions override stored memory. Write key events back to"
            f" POST /api/agent/memory-briefs/{brief_id}/events.",
            "",
            "## Relevant To This Task",
        ]
        lines += [_bullet(m["title"] or m["content"], m["id"]) for m in relevant] or ["- (nothing yet)"]
        if project_key:
            lines += ["", "## Project State"]
            lines += [_bullet(m["title"] or m["content"], m["id"]) for m in project] or ["- (nothing yet)"]
        if handoff:
            lines += ["", "## Hand-off", _bullet(handoff["summary"], handoff["id"], 600)]
        lines += ["", "## Recent Events"]
        lines += [_bullet(f"[{e['event_type']}] {e['summary']}", e["id"]) for e in events] or ["- (none)"]
        brief_markdown = "\n".join(lines)
        installed = self.store.suites.installed_lenses(workspace["id"], project_key)
        lenses = [
            {
                "installed_memory_id": lens["installed_memory_id"],
                "slug": lens["slug"],
                "title": lens["title"],
                "version": lens["version"],
            }
            for lens in installed
        ]
        sources = {
            "carry_in": [public_memory(m) for m in relevant],
            "project_state": [public_memory(m) for m in project],
            "handoff": self._public_event(handoff) if handoff else None,
            "recent_events": events,
            "active_installed_memory_lenses": lenses,
        }
        # The reference's counts, and ours (workspace, project, events) as before.
        source_counts = {
            "carry_in": len(relevant),
            "project_state": len(project),
            "recent_events": len(events),
            "active_installed_memory_lenses": len(lenses),
            "handoff": 1 if handoff else 0,
            "workspace": len(relevant),
            "project": len(project),
            "events": len(events),
        }
        pack = self.packs.compose(identity, pack_params, base_url, standing=standing, lenses=installed)
        created_at = now_iso()
        # The brief and its context pack are stored together or not at all.
        with self.store.transaction():
            self.packs.save(identity, pack)
            self.store.amp.insert_brief(
                {
                    "id": brief_id,
                    "identity_id": identity["id"],
                    "workspace_id": workspace["id"],
                    "project_key": project_key,
                    "task": body["task"],
                    "request": body,
                    "brief_markdown": brief_markdown,
                    "source_counts": source_counts,
                    "context_pack_id": pack["context_pack_id"],
                    "receipt_id": pack["receipt_id"],
                    "created_at": created_at,
                    "sources": sources,
                }
            )
        response = self._public_brief(
            brief_id=brief_id,
            created_at=created_at,
            body=body,
            workspace=workspace,
            project_key=project_key,
            brief_markdown=brief_markdown,
            source_counts=source_counts,
            sources=sources,
            base_url=base_url,
        )
        return {
            **response,
            "context_pack": pack,
            "receipt_id": pack["receipt_id"],
            "next": {
                "writeback": f"{base_url}/api/agent/memory-briefs/{brief_id}/events",
                "get_brief": f"{base_url}/api/agent/memory-briefs/{brief_id}",
                "memory_delta": f"{base_url}/api/agent/memory-delta",
            },
        }

    @staticmethod
    def _public_brief(
        *,
        brief_id: str,
        created_at: str,
        body: dict[str, Any],
        workspace: WorkspaceRecord,
        project_key: str | None,
        brief_markdown: str,
        source_counts: dict[str, int],
        sources: dict[str, Any],
        base_url: str,
    ) -> dict[str, Any]:
        """A brief as the reference shows it on create and on read. The writeback path is
        ``context_contract.writeback`` (relative, as the reference's); ``next.writeback``
        (absolute) is kept for clients that read the seed's shape."""
        return {
            "schema": "amp.memory-brief.v1",
            "brief_id": brief_id,
            "runtime_version": RUNTIME_VERSION,
            "created_at": created_at,
            "task": body["task"],
            "session_fingerprint": body.get("session_fingerprint") or "",
            "workspace": public_workspace(workspace),
            # As the reference: a brief without a project is about the workspace as a whole,
            # named by its slug.
            "project_key": project_key or public_workspace(workspace)["slug"],
            "environment": body.get("environment") or {},
            "brief_markdown": brief_markdown,
            "source_counts": source_counts,
            "carry_in": sources.get("carry_in", []),
            "project_state": sources.get("project_state", []),
            "handoff": sources.get("handoff"),
            "recent_events": sources.get("recent_events", []),
            "active_installed_memory_lenses": sources.get("active_installed_memory_lenses", []),
            "context_contract": {
                "inject": "brief_markdown, as private context before acting",
                "priority": "current system, developer and user instructions override stored memory",
                "writeback": f"/api/agent/memory-briefs/{brief_id}/events",
            },
            "next": {"writeback": f"{base_url}/api/agent/memory-briefs/{brief_id}/events"},
        }

    @staticmethod
    def _public_event(event: BriefEventRecord) -> dict[str, Any]:
        return {
            "id": event["id"],
            "brief_id": event["brief_id"],
            "event_type": event["event_type"],
            "summary": event["summary"],
            "importance": event["importance"],
            "payload": event["payload"],
            "memory_id": event["memory_id"],
            "delta_id": event["delta_id"],
            "created_at": event["created_at"],
        }

    def readable_brief(self, identity: IdentityRecord, brief_id: str) -> MemoryBriefRecord:
        brief = self.store.amp.brief(brief_id)
        if identity["kind"] != "owner" and brief["workspace_id"] != identity.get("workspace_id"):
            raise NotFound(f"memory brief {brief_id} not found")
        return brief

    def get(self, identity: IdentityRecord, brief_id: str, base_url: str) -> dict[str, Any]:
        brief = self.readable_brief(identity, brief_id)
        workspace = self.store.identities.workspace(brief["workspace_id"])
        response = self._public_brief(
            brief_id=brief["id"],
            created_at=brief["created_at"],
            body=brief["request"],
            workspace=workspace,
            project_key=brief["project_key"],
            brief_markdown=brief["brief_markdown"],
            source_counts=brief["source_counts"],
            sources=brief["sources"],
            base_url=base_url,
        )
        # Newest first, at most 50, as the reference lists them.
        events = [self._public_event(e) for e in self.store.amp.events(brief_id)][::-1][:50]
        return {
            **response,
            "workspace_id": brief["workspace_id"],
            "context_pack_id": brief["context_pack_id"],
            "receipt_id": brief["receipt_id"],
            "events": events,
        }

    def add_event(
        self, identity: IdentityRecord, brief_id: str, body: dict[str, Any], base_url: str
    ) -> dict[str, Any]:
        brief = self.readable_brief(identity, brief_id)
        event_id = new_id("bevt_")
        with self.store.transaction():
            mirrored = self.deltas.record(
                identity,
                workspace_id=brief["workspace_id"],
                project_key=brief["project_key"],
                delta_type=body["event_type"],
                summary=body["summary"].strip(),
                why_it_matters=None,
                triggers=[],
                importance=body["importance"],
                source="brief_event",
                source_id=event_id,
                payload=body["payload"] or None,
            )
            event: BriefEventRecord = {
                "id": event_id,
                "brief_id": brief_id,
                "event_type": body["event_type"],
                "summary": body["summary"].strip(),
                "importance": body["importance"],
                "payload": body["payload"],
                "identity_id": identity["id"],
                "memory_id": mirrored["memory"]["id"],
                "delta_id": mirrored["delta"]["id"],
                "created_at": now_iso(),
            }
            self.store.amp.insert_event(event)
        self.changes.changed(brief["workspace_id"], brief["project_key"])
        return {
            "schema": "amp.memory-brief-event.v1",
            "event": self._public_event(event),
            "memory_delta": {
                "id": mirrored["delta"]["id"],
                "schema": "amp.memory-delta.v1",
                "memory_id": mirrored["memory"]["id"],
            },
            "summary_card": {"id": mirrored["card"]["id"], "card_type": "recent_delta"},
            # Relative paths, as the reference's.
            "next": {
                "get_brief": f"/api/agent/memory-briefs/{brief_id}",
                "bootstrap_context": "/api/agent/bootstrap/context",
                "store_stable_memory": "/api/memory/router/select",
            },
        }
