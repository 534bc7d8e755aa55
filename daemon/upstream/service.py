"""The daemon as a MemoryCloud client: connect, sync in the background, report.

Local reads and writes never wait for the upstream: writes land in the local store and the
outbox (a trigger, same transaction); a scheduler job and a debounced kick after local
changes run :meth:`UpstreamService.sync` which checks updates, resumes interrupted writes,
pushes and pulls. A slow or absent upstream only grows the backlog shown in the status.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from daemon.runtime.changes import ContextChanges
from daemon.upstream.client import (
    UpstreamClient,
    UpstreamInterrupted,
    UpstreamRejected,
    UpstreamUnreachable,
)
from daemon.upstream.follower import FeedFollower
from daemon.upstream.puller import Puller
from daemon.upstream.pusher import Pusher
from daemon.upstream.read_puller import ReadPuller
from daemon.upstream.registration import register
from daemon.upstream.updates import UpdateFollower
from state.config import Settings
from state.errors import Conflict, InvalidRequest, NotFound
from state.ids import iso_from_datetime, now_iso, parse_iso
from state.secrets import SecretStore
from state.store import Store
from state.upstream_records import OutboxEntryRecord

log = logging.getLogger(__name__)

KICK_DELAY = 1.0  # seconds between a local write and the push it triggers (bursts coalesce)
# Outbox statuses: what still has to reach the upstream, and what is done with (sent, or
# given up for a reason the status lists).
UNSENT = ("pending", "held", "interrupted")
FINISHED = ("sent", "superseded", "skipped", "discarded")


def credential_ref_for(url: str) -> str:
    parts = urlsplit(url)
    return f"upstream:{parts.hostname or 'upstream'}:{parts.port or ''}".rstrip(":")


def normalize_url(url: str) -> str:
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidRequest(f"upstream URL must look like https://memory.example.com, got {url!r}")
    return url


class UpstreamService:
    def __init__(
        self, store: Store, secrets: SecretStore, changes: ContextChanges, settings: Settings
    ) -> None:
        self.store = store
        self.secrets = secrets
        self.changes = changes
        self.settings = settings
        self._client: UpstreamClient | None = None
        self._lock = asyncio.Lock()
        self._kick: asyncio.TimerHandle | None = None
        self._kick_due = 0.0  # wall-clock time of the pending kick, for the status
        self._kicked_round: asyncio.Future[str] | None = None  # the round a kick started
        self._notices_handled = 0
        changes.subscribe(lambda workspace_id, project_key: self.kick())
        self.follower = FeedFollower(
            self.client,
            lambda: int(self.store.upstream.get("cursor") or 0),
            lambda: settings.follow_upstream and self.connected and self._flag("sync_extension"),
            self.sync,
            settings.upstream_timeout_seconds,
        )

    # -- connection -----------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self.store.upstream.get("local_workspace_id") is not None

    def client(self) -> UpstreamClient:
        if not self.connected:
            raise Conflict("no upstream is connected: run `memorycloud upstream connect URL`")
        if self._client is None:
            state = self.store.upstream.state()
            key = self.secrets.get(state["credential_ref"])
            if not key:
                raise Conflict(
                    f"the upstream key {state['credential_ref']!r} is missing from"
                    f" {self.secrets.describe()}: connect again"
                )
            self._client = UpstreamClient(state["url"], key, timeout=self.settings.upstream_timeout_seconds)
        return self._client

    async def connect(
        self,
        url: str,
        *,
        pairing_code: str | None = None,
        key: str | None = None,
        handle: str | None = None,
        backfill: bool = True,
    ) -> dict[str, Any]:
        """Register (or reuse a key) on the upstream and start syncing the default workspace."""
        url = normalize_url(url)
        if self.connected and self.store.upstream.get("url") != url:
            raise Conflict(f"already connected to {self.store.upstream.get('url')}: disconnect first")
        ref = credential_ref_for(url)
        handle = handle or f"companion-{socket.gethostname()}"[:40]
        probe = UpstreamClient(
            url, key or self.secrets.get(ref), timeout=self.settings.upstream_timeout_seconds
        )
        try:
            registration = None
            if probe.key is None or pairing_code:
                registration = await register(probe, pairing_code=pairing_code, handle=handle)
                probe.key = registration["api_key"]
            me = await probe.call("GET", "/api/me")
            user = me.get("user") if isinstance(me.get("user"), dict) else me
            manifest = await probe.call("GET", "/api/agent/updates/manifest")
            try:
                info = await probe.call("GET", "/api/sync/info")
            except UpstreamRejected as exc:
                if exc.status not in (404, 405):
                    raise
                info = None
        except UpstreamUnreachable as exc:
            raise Conflict(f"cannot reach {url}: {exc}") from exc
        except UpstreamRejected as exc:
            raise Conflict(f"{url} refused: {exc.message}", details={"upstream_status": exc.status}) from exc
        finally:
            await probe.close()
        self.secrets.set(ref, probe.key)
        local_workspace = self.store.identities.default_workspace()["id"]
        with self.store.transaction():
            self.store.upstream.put(
                url=url,
                credential_ref=ref,
                handle=user.get("handle") or handle,
                upstream_identity_id=user.get("id"),
                upstream_workspace_id=(info or {}).get("workspace_id") or user.get("workspace_id"),
                upstream_runtime_version=manifest.get("runtime_version"),
                upstream_protocol_version=manifest.get("protocol_version"),
                sync_extension=int(info is not None),
                connected_at=now_iso(),
                registered=int(registration is not None),
            )
            # Reconnecting (a new key, say) keeps the outbox and links: nothing to backfill.
            queued = self.store.upstream.backfill(local_workspace) if backfill and not self.connected else 0
            # Last: this key switches the outbox trigger on.
            self.store.upstream.put(local_workspace_id=local_workspace)
        await self._drop_client()
        self.kick()
        self.follower.start()
        return {**self.status(), "queued": queued}

    async def disconnect(self) -> dict[str, Any]:
        if not self.connected:
            raise Conflict("no upstream is connected: `memorycloud upstream connect URL` connects one")
        await self.follower.stop()  # before the key goes: it may wait upstream now
        ref = self.store.upstream.get("credential_ref")
        backlog = self.backlog()
        with self.store.transaction():
            self.store.upstream.forget()
        if ref:
            self.secrets.delete(ref)
        await self._drop_client()
        return {
            "schema": "memorycloud.upstream-status.v1",
            "connected": False,
            "dropped_backlog": backlog,
            "local_memory": "kept",
        }

    async def _drop_client(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def close(self) -> None:
        if self._kick is not None:
            self._kick.cancel()
        await self.follower.stop()
        await self._drop_client()

    # -- background sync ----------------------------------------------------------------------

    def kick(self) -> None:
        """Sync soon (after local writes); bursts of writes cost one round."""
        if not self.connected or self._kick is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (CLI process): the daemon's job picks the change up
        self._kick = loop.call_later(KICK_DELAY, self._kicked)
        self._kick_due = time.time() + KICK_DELAY

    def scheduled_at(self) -> str | None:
        """When the round that local changes asked for starts (None: none is waiting)."""
        if self._kick is None:
            return None
        return iso_from_datetime(datetime.fromtimestamp(self._kick_due, UTC))

    def syncing(self) -> bool:
        """A round runs, or a kick's round has started but not yet taken the lock (between
        the two the status would otherwise show nothing running and nothing due)."""
        started = self._kicked_round is not None and not self._kicked_round.done()
        return self._lock.locked() or started

    def _kicked(self) -> None:
        self._kick = None
        task = self._kicked_round = asyncio.ensure_future(self.sync())
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    async def sync(self) -> str:
        """One round: updates, resumes, push, pull. Never raises for upstream trouble."""
        if not self.connected:
            return "no upstream"
        async with self._lock:
            client = self.client()
            pusher = Pusher(self.store, client, {"sync_extension": self._flag("sync_extension")})
            follower = UpdateFollower(self.store, client)
            outcome: dict[str, Any] = {}
            with self.store.transaction():
                self.store.upstream.put(last_sync_at=now_iso())
            try:
                if self._check_due(client):
                    outcome["updates"] = await follower.check()
                    self._notices_handled = client.notices_seen
                outcome["resumed"] = await self._resume(pusher, follower)
                outcome["push"] = await pusher.push()
                if self._flag("sync_extension"):
                    outcome["pull"] = await Puller(self.store, client, self.changes).pull()
                else:  # any AMP upstream: through its read endpoints (read_puller.py)
                    outcome["pull"] = await ReadPuller(
                        self.store, client, self.changes, timeout=self.settings.upstream_timeout_seconds
                    ).pull()
                if client.notices_seen > self._notices_handled or self.store.upstream.counts().get(
                    "interrupted"
                ):
                    # Notices or a fresh interrupt: check now rather than at the next interval.
                    outcome["updates"] = await follower.check()
                    self._notices_handled = client.notices_seen
                    outcome["resumed_after_check"] = await self._resume(pusher, follower)
            except (UpstreamUnreachable, UpstreamRejected) as exc:
                with self.store.transaction():
                    self.store.upstream.put(last_error=str(exc), last_error_at=now_iso())
                log.warning("upstream sync stopped: %s", exc)
                return f"error: {exc}"
            with self.store.transaction():
                self.store.upstream.put(last_success_at=now_iso(), last_error=None, last_error_at=None)
            return json.dumps(outcome, separators=(",", ":"))

    def _flag(self, key: str) -> bool:
        return self.store.upstream.get(key) == "1"

    def _check_due(self, client: UpstreamClient) -> bool:
        checked = self.store.upstream.get("updates_checked_at")
        if checked is None or client.notices_seen > self._notices_handled:
            return True
        age = (datetime.now(UTC) - parse_iso(checked)).total_seconds()
        return age >= self.settings.poll_updates_minutes * 60

    async def _resume(self, pusher: Pusher, follower: UpdateFollower) -> int:
        """Resume writes the upstream interrupted, once its required updates are acked."""
        if follower.required_pending():
            return 0
        resumed = 0
        client = pusher.client
        for entry in reversed(self.store.upstream.entries("interrupted")):
            intent_id = entry["upstream_sync_intent_id"]
            memory = self.store.memories.find(entry["memory_id"])
            result: dict[str, Any] | None = None
            try:
                if not intent_id:
                    raise UpstreamRejected(400, None, "no sync intent to resume")
                answer = await client.call(
                    "POST",
                    f"/api/agent/sync-intents/{intent_id}/resume",
                    headers={"Idempotency-Key": f"resume:{entry['idempotency_key']}"},
                )
                result = answer.get("result") or {}
            except UpstreamInterrupted:
                continue  # still gated upstream
            except UpstreamRejected as exc:
                if exc.status == 409:
                    state = await client.call("GET", f"/api/agent/sync-intents/{intent_id}")
                    if state.get("status") == "blocked":
                        continue  # the upstream still waits for updates
                    if state.get("status") == "resumed":
                        result = state.get("result") or {}
                if result is None:
                    # Not resumable there (the reference server answers 400 for memory-delta
                    # intents) or gone: the write was never applied, so send it again, once.
                    with self.store.transaction():
                        self.store.upstream.requeue(entry["seq"])
                    continue
            if memory is not None:
                pusher.link_result(memory, result)
            with self.store.transaction():
                self.store.upstream.finish(entry["seq"], "sent", {"resumed": intent_id})
            resumed += 1
        return resumed

    # -- the person's side ----------------------------------------------------------------------

    async def ack(self, update_ids: list[str] | None) -> dict[str, Any]:
        """The person acks upstream updates the daemon could not apply alone; then resume."""
        async with self._lock:
            client = self.client()
            try:
                await UpdateFollower(self.store, client).ack(update_ids)
            except UpstreamUnreachable as exc:
                raise Conflict(f"the upstream is unreachable, nothing was acked: {exc}") from exc
            except UpstreamRejected as exc:
                raise Conflict(f"the upstream refused the ack: {exc.message}") from exc
        self.kick()
        return self.status()

    def discard(self, seq: int) -> dict[str, Any]:
        """Give up an interrupted write upstream; the local record stays."""
        entry = self._entry(seq)
        if entry["status"] not in ("interrupted", "pending", "held"):
            raise Conflict(f"outbox entry {seq} is already {entry['status']}")
        with self.store.transaction():
            self.store.upstream.finish(seq, "discarded")
        return self.public_entry(self._entry(seq))

    def _entry(self, seq: int) -> OutboxEntryRecord:
        entry = self.store.upstream.entry(seq)
        if entry is None:
            raise NotFound(f"outbox entry {seq} not found")
        return entry

    # -- status ---------------------------------------------------------------------------------

    def backlog(self) -> int:
        """Local writes not yet at the upstream: pending, held by a conflict, interrupted."""
        counts = self.store.upstream.counts()
        return sum(counts.get(s, 0) for s in UNSENT)

    def public_entry(self, entry: OutboxEntryRecord) -> dict[str, Any]:
        memory = self.store.memories.find(entry["memory_id"])
        return {
            "seq": entry["seq"],
            "memory_id": entry["memory_id"],
            "version": entry["version"],
            "operation": entry["operation"],
            "status": entry["status"],
            "attempts": entry["attempts"],
            "last_error": entry["last_error"],
            "upstream_sync_intent_id": entry["upstream_sync_intent_id"],
            "interrupt": entry["result"] if entry["status"] == "interrupted" else None,
            "title": memory["title"] if memory else None,
            "importance": memory["importance"] if memory else None,
            "created_at": entry["created_at"],
            "finished_at": entry["finished_at"],
        }

    def _pull_status(self, state: dict[str, str]) -> dict[str, Any]:
        if state.get("sync_extension") == "1":
            return {
                "via": "sync_extension",
                "cursor": int(state.get("cursor") or 0),
                "following": self.follower.running,  # a pull waits upstream for the next change
            }
        return {
            "via": "read_endpoints",
            "mark": state.get("pull_mark"),
            "last_pull_at": state.get("last_pull_at"),
            "unavailable": state.get("pull_unavailable"),
            "failures": int(state.get("pull_failures") or 0),
            "retry_at": state.get("pull_retry_at"),
            "gap": json.loads(state["pull_gap"]) if state.get("pull_gap") else None,
        }

    def status(self) -> dict[str, Any]:
        state = self.store.upstream.state()
        base = {
            "schema": "memorycloud.upstream-status.v1",
            "connected": self.connected,
            "role": self.settings.role,
        }
        if not self.connected:
            return base
        counts = self.store.upstream.counts()
        return {
            **base,
            "url": state.get("url"),
            "handle": state.get("handle"),
            "credential_ref": state.get("credential_ref"),
            "upstream_identity_id": state.get("upstream_identity_id"),
            "upstream_workspace_id": state.get("upstream_workspace_id"),
            "local_workspace_id": state.get("local_workspace_id"),
            "upstream_runtime_version": state.get("upstream_runtime_version"),
            "sync_extension": state.get("sync_extension") == "1",
            "connected_at": state.get("connected_at"),
            "last_sync_at": state.get("last_sync_at"),
            # A round now, or one due soon after local changes: what a script waits out
            # before it reads a settled state.
            "syncing": self.syncing(),
            "sync_scheduled_at": self.scheduled_at(),
            "last_success_at": state.get("last_success_at"),
            "last_error": state.get("last_error"),
            "last_error_at": state.get("last_error_at"),
            # The outbox is what waits (it sums to the backlog); finished entries are counted
            # apart, each as what it is, so no script reads a backlog where there is none.
            "backlog": self.backlog(),
            "outbox": {s: counts.get(s, 0) for s in UNSENT},
            "finished": {s: counts.get(s, 0) for s in FINISHED},
            "cursor": int(state.get("cursor") or 0),
            "pull": self._pull_status(state),
            "pending_updates": json.loads(state.get("pending_updates") or "[]"),
            "applied_updates": json.loads(state.get("applied_updates") or "[]"),
            "interrupted": [self.public_entry(e) for e in self.store.upstream.entries("interrupted")],
            "held": [self.public_entry(e) for e in self.store.upstream.entries("held")],
            "skipped": [self.public_entry(e) for e in self.store.upstream.entries("skipped", 20)],
        }
