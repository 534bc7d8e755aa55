"""The client side of Platform Updates against the upstream (seed 000).

The daemon checks ``/api/agent/updates/check`` with the X-MemoryCloud-* headers. A required
update that only asks to re-pull skills is one the daemon can apply itself: it pulls them,
keeps them, and acks. Every other pending update waits in the person's inbox until they ack
it (``memorycloud upstream ack`` or the TUI). After the acks, interrupted writes are resumed
(see :mod:`daemon.upstream.resume`).
"""

from __future__ import annotations

import json
from typing import Any

from daemon.runtime.constants import RUNTIME_VERSION
from daemon.upstream.client import UpstreamClient, UpstreamRejected
from state.ids import now_iso
from state.store import Store


def update_id(update: dict[str, Any]) -> str:
    return str(update.get("update_id") or update.get("id") or "")


class UpdateFollower:
    def __init__(self, store: Store, client: UpstreamClient) -> None:
        self.store = store
        self.client = client
        applied = json.loads(store.upstream.get("applied_updates") or "[]")
        client.applied_updates = applied

    def pending(self) -> list[dict[str, Any]]:
        return json.loads(self.store.upstream.get("pending_updates") or "[]")

    def required_pending(self) -> list[dict[str, Any]]:
        return [u for u in self.pending() if u.get("severity") == "required"]

    def _save(self, pending: list[dict[str, Any]], runtime_version: str | None) -> None:
        with self.store.transaction():
            self.store.upstream.put(
                pending_updates=json.dumps(pending, ensure_ascii=False),
                updates_checked_at=now_iso(),
                upstream_runtime_version=runtime_version,
                applied_updates=json.dumps(self.client.applied_updates),
            )

    async def check(self) -> dict[str, Any]:
        """Check, apply what the daemon can, ack that; return what is still pending."""
        body = await self.client.call("GET", "/api/agent/updates/check")
        pending = list(body.get("pending_updates") or [])
        applied = []
        for update in pending:
            if update.get("severity") == "required" and await self._apply(update):
                applied.append(update_id(update))
        if applied:
            body = await self.ack(applied)
            pending = list(body.get("pending_updates") or [])
        self._save(pending, body.get("runtime_version"))
        return {
            "pending": len(pending),
            "applied": applied,
            "required": sum(1 for u in pending if u.get("severity") == "required"),
        }

    async def _apply(self, update: dict[str, Any]) -> bool:
        """Re-pull the skills an update names; False when it asks for more than that."""
        skills = [s for s in (update.get("requires_repull") or []) if isinstance(s, str)]
        if not skills:
            return False
        for skill in skills:
            try:
                pulled = await self.client.call("GET", f"/api/agent/skills/{skill}/pull")
            except UpstreamRejected:
                return False  # the upstream does not serve it: a person decides
            with self.store.transaction():
                self.store.upstream.put(
                    **{
                        f"skill:{skill}": json.dumps(
                            {"pulled_at": now_iso(), "update_id": update_id(update), "skill": pulled},
                            ensure_ascii=False,
                        )
                    }
                )
        return True

    async def ack(self, update_ids: list[str] | None = None) -> dict[str, Any]:
        """Ack updates upstream (all pending when None); remember them as applied."""
        ids = update_ids if update_ids is not None else [update_id(u) for u in self.pending()]
        body = await self.client.call(
            "POST", "/api/agent/updates/ack", json={"update_ids": ids, "seen_version": RUNTIME_VERSION}
        )
        for uid in ids:
            if uid and uid not in self.client.applied_updates:
                self.client.applied_updates.append(uid)
        pending = list(body.get("pending_updates") or [])
        self._save(pending, body.get("runtime_version"))
        return body
