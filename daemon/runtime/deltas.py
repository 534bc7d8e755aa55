"""Memory deltas (amp.memory-delta.v1): small changes an agent writes back during work.

Each delta becomes, in one transaction, a ``memory_deltas`` row, a searchable memory record
(so it enters the next context pack) and a summary card. Brief events are mirrored through
the same path with ``source='brief_event'``.
"""

from __future__ import annotations

from typing import Any

from daemon.runtime.access import resolve_scope
from daemon.runtime.changes import ContextChanges
from daemon.runtime.constants import CARD_TYPES
from state.amp_records import ReceiptRecord
from state.identities import IdentityRecord
from state.ids import new_id, now_iso
from state.memories import NewMemory
from state.store import Store

# Delta types that become a card of the same type; others are "recent_delta" cards.


class DeltaService:
    def __init__(self, store: Store, changes: ContextChanges) -> None:
        self.store = store
        self.changes = changes

    def record(
        self,
        identity: IdentityRecord,
        *,
        workspace_id: str,
        project_key: str | None,
        delta_type: str,
        summary: str,
        why_it_matters: str | None,
        triggers: list[str],
        importance: int,
        source: str,
        receipt: ReceiptRecord | None = None,
        source_id: str | None = None,
        payload: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store a delta with its memory record and summary card. Call inside a transaction."""
        delta_id = new_id("mdelta_")
        provenance: dict[str, Any] = {"delta_id": delta_id, "source": source, "agent": identity["name"]}
        if why_it_matters:
            provenance["why_it_matters"] = why_it_matters
        if receipt:
            provenance["receipt_id"] = receipt["id"]
        if source_id:
            provenance["source_id"] = source_id
        if payload:
            provenance["payload"] = payload
        content = summary if not why_it_matters else f"{summary}\n\nWhy it matters: {why_it_matters}"
        memory = self.store.memories.create(
            NewMemory(
                namespace=workspace_id,
                project_key=project_key,
                kind=delta_type,
                title=summary[:200],
                content=content,
                source=source if source == "brief_event" else "memory_delta",
                importance=importance,
                triggers=triggers,
                provenance=provenance,
                identity_id=identity["id"],
            )
        )
        delta = {
            "id": delta_id,
            "receipt_id": receipt["id"] if receipt else None,
            "context_pack_id": receipt["context_pack_id"] if receipt else None,
            "identity_id": identity["id"],
            "workspace_id": workspace_id,
            "project_key": project_key,
            "delta_type": delta_type,
            "summary": summary,
            "why_it_matters": why_it_matters,
            "retrieval_triggers": triggers,
            "importance": importance,
            "source": "agent" if source == "memory_delta" else source,
            "source_id": source_id,
            "memory_id": memory["id"],
            "created_at": now_iso(),
        }
        self.store.amp.insert_delta(delta)
        card = self.store.amp.insert_card(
            workspace_id=workspace_id,
            project_key=project_key,
            source_type="memory_delta" if source == "memory_delta" else source,
            source_id=delta_id,
            title=summary[:120],
            body=content,
            importance=importance,
            memory_id=memory["id"],
        )
        return {"delta": delta, "memory": memory, "card": card}

    def target(
        self, identity: IdentityRecord, receipt: ReceiptRecord, body: dict[str, Any]
    ) -> tuple[str, str | None]:
        """(workspace id, project key) a delta is written to: the receipt's, unless the body
        names a project binding or workspace (404 when unknown, 403 when not the caller's)."""
        if not (body.get("project_binding_id") or body.get("workspace_id")):
            return receipt["workspace_id"], body.get("project_key") or receipt["project_key"]
        workspace, project_key, _ = resolve_scope(self.store, identity, body)
        return workspace["id"], project_key or receipt["project_key"]

    def write(
        self, identity: IdentityRecord, receipt: ReceiptRecord, body: dict[str, Any], base_url: str
    ) -> dict[str, Any]:
        """POST /api/agent/memory-delta after the receipt was checked."""
        workspace_id, project_key = self.target(identity, receipt, body)
        with self.store.transaction():
            result = self.record(
                identity,
                workspace_id=workspace_id,
                project_key=project_key,
                delta_type=body["delta_type"],
                summary=body["summary"].strip(),
                why_it_matters=(body.get("why_it_matters") or "").strip() or None,
                triggers=body["retrieval_triggers"],
                importance=body["importance"],
                source="memory_delta",
                receipt=receipt,
                payload=body.get("detail_payload"),
            )
            self.store.amp.touch_receipt(receipt["id"])
        delta = result["delta"]
        self.changes.changed(delta["workspace_id"], delta["project_key"])
        return {
            "schema": "amp.memory-delta.v1",
            "delta": {
                "id": delta["id"],
                "workspace_id": delta["workspace_id"],
                "project_key": delta["project_key"],
                "delta_type": delta["delta_type"],
                "summary": delta["summary"],
                "why_it_matters": delta["why_it_matters"],
                "retrieval_triggers": delta["retrieval_triggers"],
                "importance": delta["importance"],
                "context_receipt_id": delta["receipt_id"],
                "context_pack_id": delta["context_pack_id"],
                "memory_id": delta["memory_id"],
                "created_at": delta["created_at"],
            },
            "summary_card": {
                "id": result["card"]["id"],
                "card_type": delta["delta_type"] if delta["delta_type"] in CARD_TYPES else "recent_delta",
            },
            "next": {
                "refresh_context": f"{base_url}/api/agent/bootstrap/refresh",
                "memory": f"{base_url}/api/agent/memories/{delta['memory_id']}",
            },
        }
