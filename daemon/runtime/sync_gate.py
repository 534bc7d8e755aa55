"""The sync interrupt (amp.sync-interrupt.v1) and sync intents.

Only agents' writes are gated; a person's never are. With a required update pending for the
agent, an important write (importance >= 4) is not applied: it is kept whole as a sync
intent and answered with 409; a less important one goes through with a warning. After the
agent applies and acks the updates, resuming replays the original write exactly once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from daemon.runtime.constants import RUNTIME_VERSION
from daemon.runtime.updates import UpdateService, client_state
from state.errors import Conflict, Gone, MemoryCloudError, NotFound
from state.identities import IdentityRecord
from state.ids import iso_from_datetime, new_id, now_iso, parse_iso
from state.store import Store
from state.update_records import SyncIntentRecord, UpdateRecord

# The endpoints seed 000 names as resumable. The suites issue adds memory_suite_sync and
# persona_distill_job_json; multipart uploads are never stored in an intent. The reference
# gates memory_delta too but cannot resume it (400); here it resumes like the others.
RESUMABLE = (
    "memory_brief_event",
    "adaptive_memory_submit",
    "memory_suite_sync",
    "persona_distill_job_json",
    "memory_delta",
)
BLOCKING_IMPORTANCE = 4

# (the writer, the path parameters, the body, the base URL) -> the write's answer
Replay = Callable[[IdentityRecord, dict[str, Any], dict[str, Any], str], dict[str, Any]]


class SyncInterrupted(MemoryCloudError):
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
    # The X-MemoryCloud-* headers the write came with ({runtime_version, applied_updates}),
    # kept with its intent as the reference keeps them.
    headers: dict[str, Any] = field(default_factory=dict)


def write_headers(headers: Any) -> dict[str, Any]:
    """What a gated write records of the client's runtime headers (new or legacy names)."""
    version, applied = client_state(headers)
    return {"runtime_version": version, "applied_updates": sorted(applied)}


def _brief(update: UpdateRecord) -> dict[str, Any]:
    """An update as the interrupt and the warning list it: the reference's keys (id, summary,
    effective_at, agent_actions) and ours (update_id)."""
    return {
        "id": update["id"],
        "update_id": update["id"],
        "version": update["version"],
        "severity": update["severity"],
        "title": update["title"],
        "summary": update.get("summary", ""),
        "effective_at": update.get("published_at", ""),
        "requires_repull": update["requires_repull"],
        "agent_actions": update.get("next_actions", []),
    }


class SyncGate:
    def __init__(self, store: Store, updates: UpdateService) -> None:
        self.store = store
        self.updates = updates
        self.replays: dict[str, Replay] = {}

    def register(self, endpoint: str, replay: Replay) -> None:
        """How to replay a resumable endpoint: (identity, path_params, body, base_url)."""
        assert endpoint in RESUMABLE, endpoint
        self.replays[endpoint] = replay

    def admit(self, identity: IdentityRecord, write: GatedWrite, base_url: str = "") -> dict[str, Any] | None:
        """Let the write through (returning a warning to attach, or None) or raise the 409.

        ``base_url`` makes the check, ack and resume URLs absolute, as the reference's are."""
        if identity["auth_type"] != "agent":
            return None
        pending = self.updates.pending(identity)
        if not pending:
            return None
        required = [u for u in pending if u["severity"] == "required"]
        recommended = [u for u in pending if u["severity"] != "required"]
        check_url, ack_url = f"{base_url}/api/agent/updates/check", f"{base_url}/api/agent/updates/ack"
        if not required or write.importance < BLOCKING_IMPORTANCE:
            # As the reference answers: the write is made, and every pending update is listed
            # as recommended (a required one only blocks writes of importance >= 4).
            return {
                "schema": "amp.runtime-update-warning.v1",
                "status": "recommended_update_available",
                "runtime_version": RUNTIME_VERSION,
                "message": "Written. MemoryCloud updates are pending: check, apply and ack them"
                + (" before your next important write." if required else "."),
                "required_updates": [],
                "recommended_updates": [_brief(u) for u in [*required, *recommended]],
                "check_url": check_url,
                "ack_url": ack_url,
                "update_check": check_url,
                "ack": ack_url,
            }
        if not write.keep:
            body: dict[str, Any] = {
                "schema": "amp.sync-interrupt.v1",
                "status": "blocked_for_runtime_update",
                "sync_intent_id": None,
                "importance": write.importance,
                "endpoint": write.endpoint,
                "message": "Uploads are not kept in a sync intent: apply and ack the"
                " MemoryCloud updates, then upload the files again.",
                "required_updates": [_brief(u) for u in required],
                "recommended_updates": [_brief(u) for u in recommended],
                "update_check": check_url,
                "ack": ack_url,
            }
            raise SyncInterrupted(body["message"], details={"body": body})
        now = datetime.now(UTC)
        ttl = timedelta(hours=self.store.settings.sync_intent_ttl_hours)
        intent_id = new_id("syncint_")
        with self.store.transaction():
            self.store.updates.insert_intent(
                {
                    "id": intent_id,
                    "identity_id": identity["id"],
                    "endpoint": write.endpoint,
                    "method": write.method,
                    "path": write.path,
                    "path_params": write.path_params,
                    "body": write.body,
                    "importance": write.importance,
                    "blocking_updates": [{"update_id": u["id"], "version": u["version"]} for u in required],
                    "created_at": iso_from_datetime(now),
                    "expires_at": iso_from_datetime(now + ttl),
                    "headers": write.headers,
                }
            )
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
            "update_check": check_url,
            "ack": ack_url,
            "resume": {
                "after_ack": f"{base_url}/api/agent/sync-intents/{intent_id}/resume",
                "method": "POST",
                "expires_in": f"{hours:g}h",
            },
        }
        raise SyncInterrupted(body["message"], details={"body": body})

    # -- intents ------------------------------------------------------------------------------

    def _owned(self, identity: IdentityRecord, intent_id: str) -> SyncIntentRecord:
        intent = self.store.updates.intent(intent_id)
        if identity["kind"] != "owner" and intent["identity_id"] != identity["id"]:
            raise NotFound(f"sync intent {intent_id} not found")
        return intent

    def public(self, intent: SyncIntentRecord) -> dict[str, Any]:
        """An intent with the reference's keys (id, agent_id, path_params, headers, the update
        lists, resumed_at) and ours (sync_intent_id, path, body, blocking_updates ...)."""
        blocking = {u["update_id"] for u in intent["blocking_updates"]}
        updates = {u["id"]: u for u in self.store.updates.updates()} if blocking else {}
        required = [
            _brief(updates[u]) if u in updates else {"id": u, "update_id": u} for u in sorted(blocking)
        ]
        return {
            "schema": "amp.sync-intent.v1",
            "id": intent["id"],
            "sync_intent_id": intent["id"],
            "agent_id": intent["identity_id"],
            "identity_id": intent["identity_id"],
            "status": intent["status"],
            "endpoint": intent["endpoint"],
            "method": intent["method"],
            "path": intent["path"],
            "path_params": intent["path_params"],
            "headers": intent["headers"],
            "body": intent["body"],
            "importance": intent["importance"],
            "required_updates": required,
            "recommended_updates": [],
            "blocking_updates": intent["blocking_updates"],
            "created_at": intent["created_at"],
            "expires_at": intent["expires_at"],
            "resumed_at": intent["finished_at"] if intent["status"] == "resumed" else None,
            "finished_at": intent["finished_at"],
            "result": intent["result"],
            "resume": f"/api/agent/sync-intents/{intent['id']}/resume",
        }

    def get(self, identity: IdentityRecord, intent_id: str) -> dict[str, Any]:
        intent = self.public(self._owned(identity, intent_id))
        return {**intent, "sync_intent": intent}

    def list(self, identity: IdentityRecord, status: str | None) -> list[dict[str, Any]]:
        owner = identity["kind"] == "owner"
        return [self.public(i) for i in self.store.updates.intents(None if owner else identity["id"], status)]

    def _usable(self, intent: SyncIntentRecord) -> None:
        if intent["status"] != "blocked":
            raise Conflict(
                f"sync intent {intent['id']} is already {intent['status']}; nothing was written again",
                details={"status": intent["status"]},
            )
        if parse_iso(intent["expires_at"]) <= datetime.now(UTC):
            with self.store.transaction():
                self.store.updates.finish_intent(intent["id"], "expired")
            raise Gone(f"sync intent {intent['id']} expired at {intent['expires_at']}")

    def resume(self, identity: IdentityRecord, intent_id: str, base_url: str) -> dict[str, Any]:
        """Replay the original write exactly once, after the blocking updates were acked."""
        intent = self._owned(identity, intent_id)
        self._usable(intent)
        writer = self.store.identities.get(intent["identity_id"])
        required = self.updates.required_pending(writer)
        if required:
            raise Conflict(
                "required updates are still pending: check, apply and ack them, then resume;"
                " the intent is kept",
                details={"required_updates": [_brief(u) for u in required], "sync_intent_id": intent_id},
            )
        replay = self.replays.get(intent["endpoint"])
        if replay is None:
            raise Conflict(f"this daemon cannot replay {intent['endpoint']} writes")
        # One transaction: the replayed write and the intent's final status commit together,
        # and finish_intent only succeeds once, so a second resume can never write twice.
        with self.store.transaction():
            if not self.store.updates.finish_intent(intent_id, "resumed"):
                raise Conflict(f"sync intent {intent_id} was resumed meanwhile")
            result = replay(writer, intent["path_params"], intent["body"], base_url)
            self.store.updates.set_intent_result(intent_id, result)
        finished = self.public(self.store.updates.intent(intent_id))
        return {
            "schema": "amp.sync-intent-resume.v1",
            "resumed": True,
            "sync_intent": finished,
            "sync_intent_id": intent_id,
            "status": "resumed",
            "endpoint": intent["endpoint"],
            "result": result,
            "resumed_at": finished["resumed_at"],
        }

    def discard(self, identity: IdentityRecord, intent_id: str) -> dict[str, Any]:
        """Give the write up. As with the reference, discarding twice is not an error, and a
        resumed (or expired) intent keeps its status: ``discarded`` says which it is."""
        intent = self._owned(identity, intent_id)
        if intent["status"] == "blocked":
            with self.store.transaction():
                self.store.updates.finish_intent(intent_id, "discarded")
        finished = self.public(self.store.updates.intent(intent_id))
        return {
            **finished,
            "schema": "amp.sync-intent-discard.v1",
            "discarded": finished["status"] == "discarded",
            "sync_intent": finished,
        }

    def expire(self) -> int:
        with self.store.transaction():
            return self.store.updates.expire_intents(now_iso())
