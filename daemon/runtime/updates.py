"""Platform updates (amp.platform-updates.v1): what changed in the runtime, who still has to
apply it, acks at each update's own version, and the notices agents see while they have not.

Where updates come from: the manifest shipped with this daemon (``SHIPPED``: each release
adds its own), updates the owner publishes locally, and an upstream's (upstream issue).
An update applies to agents that existed before this installation learned of it: an agent
created later was given the current runtime from the start.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from daemon.runtime.constants import PROTOCOL_VERSION, RUNTIME_VERSION
from state.errors import InvalidRequest, NotFound
from state.identities import IdentityRecord
from state.ids import new_id, now_iso
from state.store import Store
from state.update_records import UpdateRecord

SHIPPED: tuple[dict[str, Any], ...] = (
    {
        "id": "upd_20260607_startup_item_primary",
        "version": "2026.06.07-startup-item-primary.1",
        "severity": "required",
        "title": "Startup items are the primary way to start with memory",
        "summary": "Start every session from a Runtime Context Pack (POST /api/agent/bootstrap/"
        "context), keep its receipt, send memory deltas with X-AMP-Context-Receipt, and"
        " fetch details through retrieval_handles. Native-hook names are legacy aliases.",
        "requires_repull": ["memory_tool_installer"],
        "next_actions": [
            "POST /api/agent/bootstrap/context at session start",
            "send X-AMP-Context-Receipt with every memory delta",
            "POST /api/agent/updates/ack with this update's id",
        ],
    },
    {
        "id": "upd_20260607_memory_brief_writeback",
        "version": "2026.06.07-startup-item-primary.1",
        "severity": "recommended",
        "title": "Write key task events back to your Memory Brief",
        "summary": "Brief events are mirrored into memory deltas and summary cards, so they reach"
        " the next context pack: write decisions, failures and hand-offs as they happen.",
        "requires_repull": [],
        "next_actions": ["POST /api/agent/memory-briefs/{brief_id}/events for key events"],
    },
)

RUNTIME_HEADERS = ("X-MemoryCloud-Runtime-Version", "X-Cloudmemory-Runtime-Version")
APPLIED_HEADERS = ("X-MemoryCloud-Applied-Updates", "X-Cloudmemory-Applied-Updates")


def version_key(version: str) -> tuple:
    """Order versions like 2026.06.07-startup-item-primary.1 part by part, numbers as numbers."""
    return tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[^0-9A-Za-z]+", version) if p
    )


def client_state(headers: Mapping[str, str]) -> tuple[str | None, set[str]]:
    """The runtime version and applied update ids a client reports (new or legacy headers)."""
    version = next((headers[h] for h in RUNTIME_HEADERS if headers.get(h)), None)
    applied: set[str] = set()
    for name in APPLIED_HEADERS:
        # A repeated header means the same as one comma-separated list.
        values = headers.getall(name, []) if hasattr(headers, "getall") else [headers.get(name) or ""]
        for value in values:
            applied |= {u.strip() for u in value.split(",") if u.strip()}
    return (version.strip() if version else None), applied


def _public(update: UpdateRecord) -> dict[str, Any]:
    """An update with the reference's keys (id, effective_at, agent_actions) and ours."""
    return {
        "id": update["id"],
        "update_id": update["id"],
        "version": update["version"],
        "effective_at": update["published_at"],
        "agent_actions": update["next_actions"],
        "severity": update["severity"],
        "title": update["title"],
        "summary": update["summary"],
        "requires_repull": update["requires_repull"],
        "next_actions": update["next_actions"],
        "source": update["source"],
        "published_at": update["published_at"],
    }


class UpdateService:
    def __init__(self, store: Store) -> None:
        self.store = store

    def load_shipped(self) -> int:
        """Register this release's updates (first sight = their local publish time)."""
        learned = now_iso()  # one moment for the whole release: order by id, not by clock ticks
        with self.store.transaction():
            return sum(
                self.store.updates.upsert_update({**u, "source": "builtin", "published_at": learned})
                for u in SHIPPED
            )

    def manifest(self, base_url: str = "") -> dict[str, Any]:
        return {
            "schema": "amp.platform-updates.v1",
            "service": "memorycloud-companion",
            "runtime_version": RUNTIME_VERSION,
            "protocol_version": PROTOCOL_VERSION,
            "generated_at": now_iso(),
            "manifest_url": f"{base_url}/api/agent/updates/manifest",
            "check_url": f"{base_url}/api/agent/updates/check",
            "ack_url": f"{base_url}/api/agent/updates/ack",
            # No push channel: known agents check when they come back (seed 000, updates).
            "polling_policy": {
                "known_agent_revisit": "check at every session start and when an"
                " answer carries platform_update_notice",
                "minimum_interval_seconds": 60,
                "no_long_connection_required": True,
            },
            "updates": [_public(u) for u in self.store.updates.updates()],
            # Earlier names a client may still use; each maps to its current schema.
            "legacy_components": {
                "native_hook_install_plan": "amp.startup-item-install-plan.v1",
                "native_hook_confirm": "amp.startup-item-confirm.v1",
                "mandatory_runtime_notice": "amp.runtime-connection-notice.v1",
            },
            "current_components": {
                "context_pack": "amp.context-pack.v1",
                "bootstrap_receipt": "amp.bootstrap-receipt.v1",
                "memory_delta": "amp.memory-delta.v1",
                "memory_brief": "amp.memory-brief.v1",
                "memory_brief_event": "amp.memory-brief-event.v1",
                "startup_item_install_plan": "amp.startup-item-install-plan.v1",
                "memory_config": "amp.memory-config.v1",
                "platform_updates": "amp.platform-updates.v1",
                "sync_interrupt": "amp.sync-interrupt.v1",
            },
            "check": "/api/agent/updates/check",
            "ack": "/api/agent/updates/ack",
        }

    def pending(
        self, identity: IdentityRecord, *, runtime_version: str | None = None, applied: Iterable[str] = ()
    ) -> list[UpdateRecord]:
        """Updates this identity has not applied: not acked at the update's own version, not
        reported as applied, newer than the runtime version it reports, and published after
        the identity was created."""
        if identity["kind"] == "owner":
            return []
        applied = set(applied)
        return [
            update
            for update in self.store.updates.unacked_since(identity["id"], identity["created_at"])
            if update["id"] not in applied
            and not (runtime_version and version_key(runtime_version) >= version_key(update["version"]))
        ]

    def required_pending(self, identity: IdentityRecord) -> list[UpdateRecord]:
        return [u for u in self.pending(identity) if u["severity"] == "required"]

    def check(
        self, identity: IdentityRecord, headers: Mapping[str, str], base_url: str = ""
    ) -> dict[str, Any]:
        runtime_version, applied = client_state(headers)
        pending = self.pending(identity, runtime_version=runtime_version, applied=applied)
        acks = self.store.updates.acks(identity["id"])
        actions = []
        for update in pending:
            actions += [
                f"re-pull skill {s}: GET /api/agent/skills/{s}/pull" for s in update["requires_repull"]
            ]
            actions += update["next_actions"]
        if pending:
            actions.append("POST /api/agent/updates/ack with the update_ids you applied")
        return {
            "schema": "amp.platform-update-check.v1",
            "agent": {"id": identity["id"], "handle": identity["name"], "auth_type": identity["auth_type"]},
            "runtime_version": RUNTIME_VERSION,
            "protocol_version": PROTOCOL_VERSION,
            "client_runtime_version": runtime_version,
            "client_applied_updates": sorted(applied),
            "has_pending_updates": bool(pending),
            "pending_updates": [{**_public(u), "requires_repull": u["requires_repull"]} for u in pending],
            # The reference's shape: update id -> the version acked; ``acks`` has the detail.
            "acked_updates": {a["update_id"]: a["update_version"] for a in acks.values()},
            "acks": [
                {
                    "update_id": a["update_id"],
                    "version": a["update_version"],
                    "seen_version": a["seen_version"],
                    "acked_at": a["acked_at"],
                }
                for a in acks.values()
            ],
            "next_actions": list(dict.fromkeys(actions)),
            "manifest_url": f"{base_url}/api/agent/updates/manifest",
            "ack_url": f"{base_url}/api/agent/updates/ack",
            "ack": {
                "endpoint": "/api/agent/updates/ack",
                "body": {"update_ids": [u["id"] for u in pending], "seen_version": RUNTIME_VERSION},
            },
            "checked_at": now_iso(),
        }

    def ack(
        self,
        identity: IdentityRecord,
        update_ids: list[str],
        seen_version: str | None,
        *,
        acked_by: IdentityRecord,
        base_url: str = "",
    ) -> dict[str, Any]:
        """Ack updates (all pending ones when ``update_ids`` is empty) at their own versions."""
        if identity["kind"] == "owner":
            raise InvalidRequest("the owner has no updates to apply; ack for an agent instead")
        known = {u["id"]: u for u in self.store.updates.updates()}
        unknown = [u for u in update_ids if u not in known]
        if unknown:
            # 400, as the reference answers: the request names an update that does not exist.
            raise InvalidRequest(f"unknown update ids: {', '.join(unknown)}", details={"unknown": unknown})
        chosen = [known[u] for u in update_ids] if update_ids else self.pending(identity)
        with self.store.transaction():
            newly = [
                u["id"]
                for u in chosen
                if self.store.updates.ack(identity["id"], u, seen_version, acked_by["id"])
            ]
        result = self.check(identity, {}, base_url)
        result["acked_now"] = newly
        return result

    def publish(self, owner: IdentityRecord, fields: dict[str, Any]) -> dict[str, Any]:
        """An update the owner publishes for their agents (source local)."""
        stamp = datetime.now(UTC).strftime("%Y.%m.%d")
        update = {
            "id": new_id("upd_"),
            "version": fields.get("version") or f"{stamp}-local.{new_id('')[-8:]}",
            "severity": fields["severity"],
            "title": fields["title"],
            "summary": fields["summary"],
            "requires_repull": fields.get("requires_repull") or [],
            "next_actions": fields.get("next_actions") or [],
            "source": "local",
            "published_at": now_iso(),
            "published_by": owner["id"],
        }
        with self.store.transaction():
            self.store.updates.upsert_update(update)
        return _public(self.store.updates.update(update["id"]))

    def notice(
        self, identity: IdentityRecord | None, base_url: str = "", always: bool = False
    ) -> dict[str, Any] | None:
        """amp.platform-update-notice.v1 while updates are pending for this agent; with
        ``always``, also when none are (status "current") or the caller is not an agent."""
        agent = identity is not None and identity["kind"] != "owner"
        pending = self.pending(identity) if agent and identity is not None else []
        if not pending and not always:
            return None
        required = [u for u in pending if u["severity"] == "required"]
        return {
            "schema": "amp.platform-update-notice.v1",
            "status": "check_required" if pending else ("current" if agent else "check_after_connecting"),
            "runtime_version": RUNTIME_VERSION,
            "protocol_version": PROTOCOL_VERSION,
            "required_update_count": len(required),
            "recommended_update_count": len(pending) - len(required),
            "update_ids": [u["id"] for u in pending],
            "required_updates": [_public(u) for u in required],
            "message": "MemoryCloud runtime updates are pending: call the check endpoint, apply"
            " them, then ack. Reading this notice is not enough."
            if pending
            else "No update is pending; known agents check again when they return.",
            "manifest_url": f"{base_url}/api/agent/updates/manifest",
            "check_url": f"{base_url}/api/agent/updates/check",
            "ack_url": f"{base_url}/api/agent/updates/ack",
        }

    def agent(self, name_or_id: str) -> IdentityRecord:
        for agent in self.store.identities.agents():
            if name_or_id in (agent["id"], agent["name"]) and not agent["disabled_at"]:
                return agent
        raise NotFound(f"no active agent named or with id {name_or_id!r}")
