"""Push: send the outbox to the upstream, oldest first, each change exactly once.

New records go through AMP's own write endpoints, so any AMP server can be the upstream:

* memory deltas (and adaptive memories, which have no single AMP call) -> POST
  /api/agent/memory-delta, with a receipt from POST /api/agent/bootstrap/context;
* brief events -> POST /api/agent/memory-briefs/{brief}/events on a brief created upstream
  for the local one (a resumable endpoint, so a sync interrupt can be resumed upstream);
* records with no AMP write endpoint (store documents, imports, ...) -> the sync extension's
  POST /api/sync/records when the upstream serves it, else a memory delta.

Edits, deletes and redactions need the sync extension (AMP has no endpoint for them); on an
upstream without it they are marked ``skipped`` with that reason, visible in the status.

Every request carries an ``Idempotency-Key`` (the outbox row's): a retry after a timeout gets
the first answer from upstreams that keep them, and pulled records are matched back to
their origin by ``origin_memory_id``, so a lost answer never makes a local duplicate.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from daemon.upstream.client import (
    UpstreamClient,
    UpstreamInterrupted,
    UpstreamRejected,
    UpstreamUnreachable,
)
from state.amp_records import BriefEventRecord
from state.group_commit import flush_now
from state.ids import iso_from_datetime, now_iso
from state.memories import MemoryRecord
from state.store import Store
from state.upstream_records import OutboxEntryRecord, UpstreamLinkRecord

log = logging.getLogger(__name__)

MAX_SUMMARY = 4000  # AMP's memory-delta summary limit (seed 000 and its reference server)


def backoff_seconds(attempts: int) -> float:
    """2, 4, 8 ... seconds, at most five minutes."""
    return min(2.0 ** (attempts + 1), 300.0)


class Pusher:
    def __init__(self, store: Store, client: UpstreamClient, features: dict[str, Any]) -> None:
        self.store = store
        self.client = client
        self.features = features
        self.receipts: dict[str | None, str] = {}

    @property
    def extension(self) -> bool:
        return bool(self.features.get("sync_extension"))

    async def push(self, limit: int = 200) -> dict[str, int]:
        """Send what is due; stop at the first sign that the upstream is down."""
        done = {"sent": 0, "interrupted": 0, "conflicts": 0, "skipped": 0}
        seen: set[str] = set()
        # Only committed writes go upstream: with group commit (state/group_commit.py) the
        # outbox may hold rows of this loop turn's writes, which no one has acknowledged yet.
        flush_now(self.store.conn)
        for entry in self.store.upstream.due(now_iso(), limit):
            current = self.store.upstream.entry(entry["seq"])
            if current is None or current["status"] != "pending":
                continue  # superseded by a newer change of the same record in this round
            if entry["operation"] != "redacted" and entry["memory_id"] in seen:
                continue
            seen.add(entry["memory_id"])
            try:
                outcome = await self._send(entry)
            except UpstreamUnreachable as exc:
                delay = backoff_seconds(entry["attempts"])
                when = iso_from_datetime(datetime.now(UTC) + timedelta(seconds=delay))
                with self.store.transaction():
                    self.store.upstream.retry_later(entry["seq"], str(exc), when)
                raise
            except UpstreamInterrupted as exc:
                with self.store.transaction():
                    self.store.upstream.interrupt(
                        entry["seq"], exc.interrupt.get("sync_intent_id"), exc.interrupt
                    )
                outcome = "interrupted"
            except UpstreamRejected as exc:
                with self.store.transaction():
                    self.store.upstream.finish(entry["seq"], "skipped", error=str(exc))
                log.warning("upstream refused outbox entry %s: %s", entry["seq"], exc)
                outcome = "skipped"
            done[outcome] = done.get(outcome, 0) + 1
        return done

    async def _send(self, entry: OutboxEntryRecord) -> str:
        if entry["operation"] == "suite_sync":
            return await self._send_suite_sync(entry)
        memory = self.store.memories.find(entry["memory_id"])
        if memory is None:
            with self.store.transaction():
                self.store.upstream.finish(entry["seq"], "skipped", error="the record is gone")
            return "skipped"
        if self._in_conflict(memory["id"]):
            with self.store.transaction():
                self.store.upstream.hold(memory["id"])
            return "conflicts"
        if entry["operation"] == "redacted":
            return await self._send_redaction(entry, memory)
        with self.store.transaction():
            self.store.upstream.supersede_older(memory["id"], entry["seq"])
        link = self.store.upstream.link(memory["id"])
        if link is None:
            return await self._send_new(entry, memory)
        return await self._send_change(entry, memory, link)

    def _in_conflict(self, memory_id: str) -> bool:
        return self.store.conflicts.is_open("upstream_sync", memory_id)

    def _finish(
        self, entry: OutboxEntryRecord, status: str, result: Any = None, error: str | None = None
    ) -> str:
        with self.store.transaction():
            self.store.upstream.finish(entry["seq"], status, result, error)
        return "sent" if status == "sent" else "skipped"

    # -- new records --------------------------------------------------------------------------

    async def _send_new(self, entry: OutboxEntryRecord, memory: MemoryRecord) -> str:
        if memory["deleted_at"]:
            return self._finish(entry, "skipped", error="deleted before it reached the upstream")
        if not memory["content"]:
            return self._finish(entry, "skipped", error="redacted before it reached the upstream")
        headers = {"Idempotency-Key": entry["idempotency_key"]}
        event = self.store.amp.event_for_memory(memory["id"]) if memory["source"] == "brief_event" else None
        if event is not None:
            upstream_id, kind, version = await self._send_event(memory, event, headers)
        elif memory["source"] in ("memory_delta", "adaptive_memory") or not self.extension:
            upstream_id, kind, version = await self._send_delta(memory, headers)
        else:
            body = await self.client.call(
                "POST",
                "/api/sync/records",
                headers=headers,
                json={
                    "origin_memory_id": memory["id"],
                    "kind": memory["kind"],
                    "content": memory["content"],
                    "title": memory["title"],
                    "importance": memory["importance"],
                    "project_key": memory["project_key"],
                    "path": memory["path"],
                    "source": memory["source"],
                    "triggers": memory["triggers"],
                },
            )
            record = body["record"]
            upstream_id, kind, version = record["memory_id"], "memory", record["version"]
        self._link(memory, upstream_id, kind, version)
        return self._finish(entry, "sent", {"upstream_id": upstream_id})

    def _link(self, memory: MemoryRecord, upstream_id: str, kind: str, version: int | None) -> None:
        with self.store.transaction():
            self.store.upstream.save_link(
                memory["id"],
                upstream_id,
                kind,
                upstream_version=version,
                local_version=memory["version"],
                synced_sha256=memory["content_sha256"],
            )

    def _link_suite(self, entry: OutboxEntryRecord, slug: str) -> None:
        """A suite's record stands for the suite upstream (no versions to compare: its syncs
        are sent whole). Called inside the caller's transaction."""
        self.store.upstream.save_link(
            entry["memory_id"],
            f"suite:{slug}",
            "suite",
            upstream_version=None,
            local_version=None,
            synced_sha256=None,
        )

    def link_result(self, memory: MemoryRecord, result: dict[str, Any]) -> None:
        """Link a record to what a resumed or re-sent write created upstream."""
        delta = result.get("memory_delta") or result.get("delta") or {}
        if delta.get("memory_id"):
            self._link(memory, delta["memory_id"], "memory", 1)
        elif delta.get("id"):
            self._link(memory, delta["id"], "delta", None)

    async def _receipt(self, project_key: str | None, *, fresh: bool = False) -> str:
        if fresh or project_key not in self.receipts:
            body = await self.client.call(
                "POST",
                "/api/agent/bootstrap/context",
                json={
                    "project_key": project_key,
                    "reason": "memorycloud_companion_sync",
                    "task": "sync local memory",
                    "runtime": "memorycloud_companion",
                    "max_items": 1,
                },
            )
            self.receipts[project_key] = body["receipt_id"]
        return self.receipts[project_key]

    async def _send_delta(self, memory: MemoryRecord, headers: dict[str, str]):
        content = memory["content"]
        why = memory["provenance"].get("why_it_matters")
        summary = content.split("\n\nWhy it matters:", 1)[0] if why else content
        if len(summary) > MAX_SUMMARY:
            raise UpstreamRejected(
                413,
                None,
                f"content longer than {MAX_SUMMARY} characters has no"
                " AMP write endpoint on this upstream (no sync extension)",
            )
        body = {
            "summary": summary,
            "delta_type": memory["kind"],
            "importance": memory["importance"],
            "retrieval_triggers": memory["triggers"][:20],
            "project_key": memory["project_key"],
            "detail_payload": {"origin_memory_id": memory["id"], "source": memory["source"]},
        }
        if why:
            body["why_it_matters"] = why[:3000]
        for attempt in (0, 1):
            receipt = await self._receipt(memory["project_key"], fresh=attempt == 1)
            try:
                result = await self.client.call(
                    "POST",
                    "/api/agent/memory-delta",
                    json={**body, "context_receipt_id": receipt},
                    headers={**headers, "X-AMP-Context-Receipt": receipt},
                )
                break
            except UpstreamRejected as exc:
                # 428: the receipt expired upstream; one fresh receipt, then give up.
                if exc.status != 428 or attempt == 1:
                    raise
        delta = result.get("delta") or {}
        if delta.get("memory_id"):
            return delta["memory_id"], "memory", 1
        return delta.get("id") or result.get("id"), "delta", None

    async def _send_event(self, memory: MemoryRecord, event: BriefEventRecord, headers: dict[str, str]):
        upstream_brief = await self._upstream_brief(event["brief_id"])
        result = await self.client.call(
            "POST",
            f"/api/agent/memory-briefs/{upstream_brief}/events",
            headers=headers,
            json={
                "event_type": event["event_type"],
                "summary": event["summary"][:MAX_SUMMARY],
                "payload": {**event["payload"], "origin_memory_id": memory["id"]},
                "importance": event["importance"],
            },
        )
        delta = result.get("memory_delta") or {}
        if delta.get("memory_id"):
            return delta["memory_id"], "memory", 1
        return delta.get("id") or (result.get("event") or {}).get("id"), "delta", None

    async def _upstream_brief(self, brief_id: str) -> str:
        link = self.store.upstream.link(brief_id)
        if link is not None:
            return link["upstream_id"]
        brief = self.store.amp.brief(brief_id)
        body = await self.client.call(
            "POST",
            "/api/agent/memory-brief",
            headers={"Idempotency-Key": f"brief:{brief_id}"},
            json={
                "task": brief["task"][:5000] if len(brief["task"]) >= 4 else f"task: {brief['task']}",
                "project_key": brief["project_key"],
                "max_items": 1,
            },
        )
        with self.store.transaction():
            self.store.upstream.save_link(
                brief_id,
                body["brief_id"],
                "brief",
                upstream_version=None,
                local_version=None,
                synced_sha256=None,
            )
        return body["brief_id"]

    # -- memory suites ----------------------------------------------------------------------

    async def _send_suite_sync(self, entry: OutboxEntryRecord) -> str:
        """POST /api/memories/{slug}/sync upstream; a suite the upstream lacks is imported
        whole first (its archive already holds the pending syncs)."""
        slug = entry["memory_id"].removeprefix("suite:")
        if entry["body"] is None:  # enqueue_suite_sync always keeps the request
            return self._finish(entry, "skipped", error="a suite sync without its request")
        if self.store.upstream.link(entry["memory_id"]) is None:
            try:
                await self.client.call("GET", f"/api/catalog/{slug}/versions")
            except UpstreamRejected as exc:
                if exc.status != 404:
                    raise
                from daemon.runtime.suite_archive import write_zip

                stored = self.store.suites.version(slug)
                # The upload as it was imported here (byte for byte: binary members too), or
                # the suite's files; with its visibility, so a private suite stays private.
                archive = self.store.suites.archive(stored["id"]) or write_zip(stored["files"])
                await self.client.call(
                    "POST",
                    "/api/memories/import",
                    headers={"Idempotency-Key": f"suite:{slug}"},
                    params={"visibility": stored["suite"].get("visibility") or "private"},
                    files={"file": (f"{slug}-{stored['version']}.zip", archive, "application/zip")},
                )
                with self.store.transaction():
                    self._link_suite(entry, slug)
                    self.store.upstream.cover_suite_syncs(slug)
                return "sent"
            with self.store.transaction():
                self._link_suite(entry, slug)
        result = await self.client.call(
            "POST",
            f"/api/memories/{slug}/sync",
            json=entry["body"],
            headers={"Idempotency-Key": entry["idempotency_key"]},
        )
        return self._finish(entry, "sent", {"version": result.get("version")})

    # -- edits, deletes, redactions -----------------------------------------------------------

    async def _send_change(
        self, entry: OutboxEntryRecord, memory: MemoryRecord, link: UpstreamLinkRecord
    ) -> str:
        if link["local_version"] == memory["version"] or (
            not memory["deleted_at"] and memory["content_sha256"] == link["upstream_sha256"]
        ):
            # Nothing to send: unchanged, or now what the upstream has (an incoming change
            # the read-endpoint pull applied, or the person took).
            return self._finish(entry, "sent", {"already": "in step"})
        if link["kind"] != "memory" or not self.extension:
            return self._finish(
                entry, "skipped", error="this upstream has no endpoint to edit or delete a record"
            )
        body = {
            "operation": "delete" if memory["deleted_at"] else "update",
            "base_version": link["upstream_version"],
            "content": memory["content"],
            "title": memory["title"],
            "importance": memory["importance"],
        }
        try:
            result = await self.client.call(
                "POST",
                f"/api/sync/records/{link['upstream_id']}",
                json=body,
                headers={"Idempotency-Key": entry["idempotency_key"]},
            )
        except UpstreamRejected as exc:
            current = (exc.body.get("detail") or {}).get("current") if isinstance(exc.body, dict) else None
            if exc.status != 409 or not isinstance(current, dict):
                raise
            from daemon.upstream.puller import record_conflict

            with self.store.transaction():
                record_conflict(self.store, memory, link, current, self.client.url)
            return "conflicts"
        record = result["record"]
        with self.store.transaction():
            self.store.upstream.save_link(
                memory["id"],
                link["upstream_id"],
                "memory",
                upstream_version=record["version"],
                local_version=memory["version"],
                synced_sha256=memory["content_sha256"],
            )
            self.store.upstream.finish(entry["seq"], "sent", {"upstream_version": record["version"]})
        return "sent"

    async def _send_redaction(self, entry: OutboxEntryRecord, memory: MemoryRecord) -> str:
        link = self.store.upstream.link(memory["id"])
        if link is None:
            # Never sent: the pending create now carries no redacted content (bodies are
            # built at send time), so there is nothing upstream to redact.
            return self._finish(entry, "sent", {"already": "never sent"})
        if link["kind"] != "memory" or not self.extension:
            return self._finish(
                entry, "skipped", error="this upstream has no endpoint to redact; redact it there too"
            )
        result = await self.client.call(
            "POST",
            f"/api/sync/records/{link['upstream_id']}/redact",
            json={"content_sha256": entry["content_sha256"]},
            headers={"Idempotency-Key": entry["idempotency_key"]},
        )
        return self._finish(entry, "sent", result)
