"""The sync interrupt (amp.sync-interrupt.v1) and sync intents.

Only agents' writes are gated; a person's never are. With a required update pending for the
agent, an important write (importance >= 4) is not applied: it is kept whole as a sync
intent and answered with 409; a less important one goes through with a warning. After the
agent applies and acks the updates, resuming replays the original write exactly once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from daemon.runtime.updates import UpdateService
from state.errors import Conflict, Gone, MemoryCloudError, NotFound
from state.ids import iso_from_datetime, new_id, now_iso, parse_iso
from state.store import Store

# The endpoints seed 000 names as resumable. The suites issue adds memory_suite_sync and
# persona_distill_job_json; multipart uploads are never stored in an intent.
RESUMABLE = ("memory_brief_event", "adaptive_memory_submit", "memory_suite_sync",
             "persona_distill_job_json")
BLOCKING_IMPORTANCE = 4

Replay = Callable[[dict[str, Any], dict[str, Any], dict[str, Any], str], dict[str, Any]]


class SyncInterrupted(MemoryCloudError):
    status = 409
    code = "sync_interrupted"


@dataclass(frozen=True)
class GatedWrite:
    """An agent write as it arrived: enough to replay it exactly."""

    endpoint: str
    method: str
    path: str
    path_params: dict[str, Any]
    body: dict[str, Any]
    importance: int
    keep: bool = True  # False for multipart uploads: files are never stored in an intent


def _brief(update: dict[str, Any]) -> dict[str, Any]:
    return {"update_id": update["id"], "version": update["version"], "title": update["title"],
            "severity": update["severity"], "requires_repull": update["requires_repull"]}


class SyncGate:
    def __init__(self, store: Store, updates: UpdateService) -> None:
        self.store = store
        self.updates = updates
        self.replays: dict[str, Replay] = {}

    def register(self, endpoint: str, replay: Replay) -> None:
        """How to replay a resumable endpoint: (identity, path_params, body, base_url)."""
        assert endpoint in RESUMABLE, endpoint
        self.replays[endpoint] = replay

    def admit(self, identity: dict[str, Any], write: GatedWrite) -> dict[str, Any] | None:
        """Let the write through (returning a warning to attach, or None) or raise the 409."""
        if identity["auth_type"] != "agent":
            return None
        pending = self.updates.pending(identity)
        required = [u for u in pending if u["severity"] == "required"]
        if not required:
            return None
        recommended = [u for u in pending if u["severity"] != "required"]
        if write.importance < BLOCKING_IMPORTANCE:
            return {
                "schema": "amp.runtime-update-warning.v1",
                "status": "written_with_pending_updates",
                "message": "Written. Required MemoryCloud updates are pending: check, apply and"
                           " ack them before your next important write.",
                "required_updates": [_brief(u) for u in required],
                "recommended_updates": [_brief(u) for u in recommended],
                "update_check": "/api/agent/updates/check",
                "ack": "/api/agent/updates/ack",
            }
        if not write.keep:
            body = {"schema": "amp.sync-interrupt.v1", "status": "blocked_for_runtime_update",
                    "sync_intent_id": None, "importance": write.importance,
                    "endpoint": write.endpoint,
                    "message": "Uploads are not kept in a sync intent: apply and ack the"
                               " MemoryCloud updates, then upload the files again.",
                    "required_updates": [_brief(u) for u in required],
                    "recommended_updates": [_brief(u) for u in recommended],
                    "update_check": "/api/agent/updates/check", "ack": "/api/agent/updates/ack"}
            raise SyncInterrupted(body["message"], details={"body": body})
        now = datetime.now(timezone.utc)
        ttl = timedelta(hours=self.store.settings.sync_intent_ttl_hours)
        intent_id = new_id("syncint_")
        with self.store.transaction():
            self.store.updates.insert_intent({
                "id": intent_id, "identity_id": identity["id"], "endpoint": write.endpoint,
                "method": write.method, "path": write.path, "path_params": write.path_params,
                "body": write.body, "importance": write.importance,
                "blocking_updates": [{"update_id": u["id"], "version": u["version"]} for u in required],
                "created_at": iso_from_datetime(now), "expires_at": iso_from_datetime(now + ttl)})
        hours = self.store.settings.sync_intent_ttl_hours
        body = {
            "schema": "amp.sync-interrupt.v1",
            "status": "blocked_for_runtime_update",
            "sync_intent_id": intent_id,
            "message": "先应用 MemoryCloud 更新，再继续同步。Apply the MemoryCloud updates, ack them,"
                       " then resume: your write is kept and nothing is lost.",
            "importance": write.importance,
            "endpoint": write.endpoint,
            "required_updates": [_brief(u) for u in required],
            "recommended_updates": [_brief(u) for u in recommended],
            "update_check": "/api/agent/updates/check",
            "ack": "/api/agent/updates/ack",
            "resume": {"after_ack": f"/api/agent/sync-intents/{intent_id}/resume", "method": "POST",
                       "expires_in": f"{hours:g}h"},
        }
        raise SyncInterrupted(body["message"], details={"body": body})

    # -- intents ------------------------------------------------------------------------------

    def _owned(self, identity: dict[str, Any], intent_id: str) -> dict[str, Any]:
        intent = self.store.updates.intent(intent_id)
        if identity["kind"] != "owner" and intent["identity_id"] != identity["id"]:
            raise NotFound(f"sync intent {intent_id} not found")
        return intent

    def public(self, intent: dict[str, Any]) -> dict[str, Any]:
        return {"schema": "amp.sync-intent.v1", "sync_intent_id": intent["id"],
                "status": intent["status"], "endpoint": intent["endpoint"],
                "method": intent["method"], "path": intent["path"], "body": intent["body"],
                "importance": intent["importance"], "blocking_updates": intent["blocking_updates"],
                "created_at": intent["created_at"], "expires_at": intent["expires_at"],
                "finished_at": intent["finished_at"], "result": intent["result"],
                "identity_id": intent["identity_id"],
                "resume": f"/api/agent/sync-intents/{intent['id']}/resume"}

    def get(self, identity: dict[str, Any], intent_id: str) -> dict[str, Any]:
        return self.public(self._owned(identity, intent_id))

    def list(self, identity: dict[str, Any], status: str | None) -> list[dict[str, Any]]:
        owner = identity["kind"] == "owner"
        return [self.public(i) for i in
                self.store.updates.intents(None if owner else identity["id"], status)]

    def _usable(self, intent: dict[str, Any]) -> None:
        if intent["status"] != "blocked":
            raise Conflict(f"sync intent {intent['id']} is already {intent['status']}; nothing was"
                           " written again", details={"status": intent["status"]})
        if parse_iso(intent["expires_at"]) <= datetime.now(timezone.utc):
            with self.store.transaction():
                self.store.updates.finish_intent(intent["id"], "expired")
            raise Gone(f"sync intent {intent['id']} expired at {intent['expires_at']}")

    def resume(self, identity: dict[str, Any], intent_id: str, base_url: str) -> dict[str, Any]:
        """Replay the original write exactly once, after the blocking updates were acked."""
        intent = self._owned(identity, intent_id)
        self._usable(intent)
        writer = self.store.identities.get(intent["identity_id"])
        required = self.updates.required_pending(writer)
        if required:
            raise Conflict(
                "required updates are still pending: check, apply and ack them, then resume;"
                " the intent is kept", details={"required_updates": [_brief(u) for u in required],
                                                "sync_intent_id": intent_id})
        replay = self.replays.get(intent["endpoint"])
        if replay is None:
            raise Conflict(f"this daemon cannot replay {intent['endpoint']} writes")
        # One transaction: the replayed write and the intent's final status commit together,
        # and finish_intent only succeeds once, so a second resume can never write twice.
        with self.store.transaction():
            if not self.store.updates.finish_intent(intent_id, "resumed"):
                raise Conflict(f"sync intent {intent_id} was resumed meanwhile")
            result = replay(writer, intent["path_params"], intent["body"], base_url)
            self.store.conn.execute("update sync_intents set result = ? where id = ?",
                                    (_json(result), intent_id))
        return {"schema": "amp.sync-intent-resume.v1", "sync_intent_id": intent_id,
                "status": "resumed", "endpoint": intent["endpoint"], "result": result,
                "resumed_at": now_iso()}

    def discard(self, identity: dict[str, Any], intent_id: str) -> dict[str, Any]:
        intent = self._owned(identity, intent_id)
        if intent["status"] != "blocked":
            raise Conflict(f"sync intent {intent_id} is already {intent['status']}")
        with self.store.transaction():
            self.store.updates.finish_intent(intent_id, "discarded")
        return self.public(self.store.updates.intent(intent_id))

    def expire(self) -> int:
        with self.store.transaction():
            return self.store.updates.expire_intents(now_iso())


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
