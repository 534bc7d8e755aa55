"""Pull through AMP's read endpoints: an upstream's workspace into the local store when the
upstream serves no sync extension (MemoryCloud itself; a daemon with
``serve_sync_extension = false``).

AMP has no changes feed. What it has, and what one round reads:

1. ``GET /api/workspaces/{wsp}/memory-map?limit=240``: the index. Its assets are the
   workspace's newest records of every kind (the reference: up to 240 adaptive memories and
   60 memory deltas; this daemon: its 240 newest records), each with ``updated_at`` and
   ``source_id`` but not the full text. An idle round costs this one request.
2. ``GET /api/workspaces/{wsp}/memory/query?memory_type=T&limit=30`` for each memory type
   that has new assets: the 30 newest records of that type, with their text.
3. ``GET /api/agent/memories/{id}`` for each new asset the type's 30 did not hold (more
   new records of one type than one page), at most MAX_DETAILS a round; the rest resume in
   the next round.
4. Records no endpoint serves in full (the reference's memory deltas, which only the map
   lists) are taken from the map's text: their summary cut to 96 characters and why it
   matters to 220, marked ``truncated`` in their provenance when cut.

What a round cannot see: a record changed upstream between two rounds that is neither among
the map's newest (240) nor among the 30 newest of its type: with more changes than that
between two rounds the older ones are never listed, so the status reports a possible gap
(``pull.gap``). Nor deletes and redactions: a record that leaves the lists may have been
deleted or only pushed out by newer ones, so nothing is deleted locally. A new connection
starts with the newest records, not the workspace's whole history.

Resumable and idempotent: a link holds each record's upstream id with the ``updated_at``
and content digest last pulled (migration m0012); records are applied oldest first, each in
one transaction with the high-water mark ``pull_mark`` (the ``updated_at`` up to which
everything listed was applied), so a crash or a budget cut resumes at the first record not
applied, and a record seen before is never fetched again.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from daemon.runtime.changes import ContextChanges
from daemon.runtime.context_packs import PACK_SOURCES
from daemon.upstream.client import UpstreamClient, UpstreamRejected, UpstreamUnreachable
from daemon.upstream.puller import record_conflict
from daemon.upstream.pusher import backoff_seconds
from daemon.upstream.read_index import Incoming, from_asset, from_item, merge
from state.ids import iso_from_datetime, now_iso, parse_iso
from state.memories import NewMemory, sha256_text
from state.store import Store

log = logging.getLogger(__name__)

MAP_LIMIT = 240  # the reference's largest memory map
QUERY_LIMIT = 30  # the reference's largest memory query page
MAX_TYPE_QUERIES = 12  # memory types queried in one round (the rest next round)
MAX_DETAILS = 40  # records fetched one by one in one round
FULL_WINDOW = 20  # the fewest records of one kind a full map window holds (the reference's)
SLOW_FRACTION = 0.5  # an answer slower than this share of the timeout backs the pull off


class ReadPuller:
    def __init__(
        self, store: Store, client: UpstreamClient, changes: ContextChanges, *, timeout: float
    ) -> None:
        self.store = store
        self.client = client
        self.changes = changes
        self.timeout = timeout
        self.slowest = 0.0

    @property
    def local_workspace(self) -> str:
        return self.store.upstream.get("local_workspace_id") or ""

    # -- one round -----------------------------------------------------------------------------

    async def pull(self) -> dict[str, Any]:
        """One bounded round; raises UpstreamUnreachable (after noting the backoff)."""
        retry_at = self.store.upstream.get("pull_retry_at")
        if retry_at and parse_iso(retry_at) > datetime.now(UTC):
            return {"deferred_until": retry_at}
        try:
            done = await self._round()
        except UpstreamUnreachable:
            self._back_off()
            raise
        slow = self.slowest > self.timeout * SLOW_FRACTION
        if slow:
            self._back_off()
            done["slow"] = round(self.slowest, 3)
        with self.store.transaction():
            self.store.upstream.put(
                last_pull_at=now_iso(),
                pull_unavailable=done.get("unavailable"),
                **({} if slow else {"pull_failures": None, "pull_retry_at": None}),
            )
        return done

    async def _round(self) -> dict[str, Any]:
        workspace = await self._workspace()
        if workspace is None:
            return {"unavailable": "the upstream lists no workspace (GET /api/me/workspaces)"}
        index = await self._index(workspace)
        if index is None:
            return {"unavailable": "the upstream serves neither the memory map nor the memory query"}
        pending = self._pending(index)
        if pending:
            pending = await self._fill(workspace, pending)
        return self._apply(pending)

    async def _get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        """The answer, or None where the upstream does not serve the path (404/405)."""
        started = time.monotonic()
        try:
            return await self.client.call("GET", path, params=params)
        except UpstreamRejected as exc:
            if exc.status in (404, 405):
                return None
            raise
        finally:
            self.slowest = max(self.slowest, time.monotonic() - started)

    async def _workspace(self) -> str | None:
        """The upstream workspace this daemon writes to (known from connecting, else the
        oldest one the key owns: the reference's personal workspace), and its slug, which
        the reference gives as the project key of records written without one."""
        known = self.store.upstream.get("upstream_workspace_id")
        if known and self.store.upstream.get("upstream_workspace_slug") is not None:
            return known
        body = await self._get("/api/me/workspaces")
        items = [w for w in (body or {}).get("items") or [] if isinstance(w, dict) and w.get("id")]
        owned = sorted(
            (w for w in items if w.get("owned_by_current_user")), key=lambda w: str(w.get("created_at") or "")
        )
        if known:
            chosen = next((w for w in items if w["id"] == known), {"id": known})
        elif items:
            chosen = (owned or items)[0]
        else:
            return None
        with self.store.transaction():
            self.store.upstream.put(
                upstream_workspace_id=chosen["id"], upstream_workspace_slug=str(chosen.get("slug") or "")
            )
        return chosen["id"]

    # -- what is new -----------------------------------------------------------------------

    async def _index(self, workspace: str) -> list[Incoming] | None:
        base = f"/api/workspaces/{quote(workspace, safe='')}"
        mark = self.store.upstream.get("pull_mark")
        body = await self._get(base + "/memory-map", {"limit": MAP_LIMIT})
        if body is not None:
            assets = [
                a
                for a in body.get("assets") or []
                if isinstance(a, dict) and a.get("workspace_id") in (None, "", workspace)
            ]
            found = [a for a in map(from_asset, assets) if a is not None]
            windows: dict[str, list[Incoming]] = {}
            for entry in found:
                windows.setdefault(entry.asset_kind, []).append(entry)
            full = [
                k
                for k, entries in windows.items()
                if len(entries) >= FULL_WINDOW
                and mark is not None
                and min(e.updated_at for e in entries) > mark
            ]
        else:  # no memory map: the query's newest of every type is the index
            body = await self._get(base + "/memory/query", {"limit": QUERY_LIMIT})
            if body is None:
                return None
            found = [from_item(item) for item in body.get("items") or []]
            full = (
                ["memory_query"]
                if len(found) >= QUERY_LIMIT and mark is not None and min(e.updated_at for e in found) > mark
                else []
            )
        if full:
            self._note_gap(full, mark)
        return found

    def _pending(self, entries: list[Incoming]) -> list[Incoming]:
        """Entries at or after the mark that this daemon has not seen in this state."""
        mark = self.store.upstream.get("pull_mark")
        pending: dict[str, Incoming] = {}
        for entry in entries:
            if self._eligible(entry, mark):
                pending.setdefault(entry.upstream_id, entry)
        return list(pending.values())

    def _eligible(self, entry: Incoming, mark: str | None) -> bool:
        if not entry.updated_at or (mark is not None and entry.updated_at < mark):
            return False
        link = self.store.upstream.link_by_upstream(entry.upstream_id)
        return link is None or link["upstream_updated_at"] != entry.updated_at

    async def _fill(self, workspace: str, pending: list[Incoming]) -> list[Incoming]:
        """Fetch the text of the pending entries: one query per memory type, then detail
        reads for what those pages did not hold (both bounded: the rest waits for the next
        round, before which the mark does not move)."""
        by_id = {p.upstream_id: p for p in pending}
        mark = self.store.upstream.get("pull_mark")
        types = list(dict.fromkeys(p.kind for p in pending if p.content is None))
        queried: set[str] = set()
        query = f"/api/workspaces/{quote(workspace, safe='')}/memory/query"
        for memory_type in types[:MAX_TYPE_QUERIES]:
            body = await self._get(query, {"memory_type": memory_type, "limit": QUERY_LIMIT})
            if body is None:
                queried.update(types)  # no memory query there: detail reads are all there is
                break
            queried.add(memory_type)
            for item in body.get("items") or []:
                full = from_item(item)
                known = by_id.get(full.upstream_id)
                if known is not None and known.content is None:
                    by_id[full.upstream_id] = merge(known, full)
                elif known is None and self._eligible(full, mark):
                    by_id[full.upstream_id] = full  # newer than the map, or beyond its window
        fetched = 0
        for entry in sorted(by_id.values(), key=lambda e: e.order):
            if entry.content is not None:
                continue
            if entry.detail_path is None:
                entry.gone = entry.kind in queried  # its type's page did not hold it: unreadable
                continue
            if fetched >= MAX_DETAILS:
                break
            fetched += 1
            body = await self._get(entry.detail_path)
            memory = body.get("memory") if isinstance(body, dict) else None
            if isinstance(memory, dict):
                by_id[entry.upstream_id] = merge(entry, from_item(memory, entry.asset_kind))
            else:
                entry.gone = True  # deleted since the map was read
        return sorted(by_id.values(), key=lambda e: e.order)

    # -- applying --------------------------------------------------------------------------

    def _apply(self, pending: list[Incoming]) -> dict[str, Any]:
        done = {"applied": 0, "conflicts": 0, "skipped": 0}
        touched: set[str | None] = set()
        for entry in pending:
            if entry.content is None and not entry.gone:
                done["resume_next_round"] = len(pending) - sum(done.values())
                break  # not fetched this round: the mark stays before it
            with self.store.transaction():
                outcome = "skipped" if entry.gone else self._apply_one(entry, touched)
                self.store.upstream.put(pull_mark=entry.updated_at)
            done[outcome] += 1
        for project_key in touched:
            self.changes.changed(self.local_workspace, project_key)
        return done

    def _seen(self, local_id: str, entry: Incoming, sha: str) -> None:
        self.store.upstream.mark_pulled(local_id, upstream_updated_at=entry.updated_at, upstream_sha256=sha)

    def _apply_one(self, entry: Incoming, touched: set[str | None]) -> str:
        content = entry.content or ""
        sha = sha256_text(content)
        link = self.store.upstream.link_by_upstream(entry.upstream_id)
        if link is None:
            return self._apply_new(entry, sha, touched)
        memory = self.store.memories.find(link["local_id"])
        if memory is None:
            return "skipped"
        # The upstream's content when last seen. A record this daemon pushed is first seen
        # here: an exact copy compares with what was sent, a rendering becomes the base.
        base = link["upstream_sha256"] or (link["synced_sha256"] if entry.exact else None)
        in_step = not memory["deleted_at"] and memory["content_sha256"] == sha
        if base is None or sha == base or in_step:
            self._seen(memory["id"], entry, sha)
            return "skipped"
        local_changed = bool(memory["deleted_at"]) or memory["content_sha256"] not in (
            link["synced_sha256"],
            link["upstream_sha256"],
        )
        if local_changed:
            record_conflict(
                self.store, memory, link, {"content": content, "title": entry.title}, self.client.url
            )
            self._seen(memory["id"], entry, sha)
            return "conflicts"
        since = self.store.upstream.last_seq()
        memory = self.store.memories.update(
            memory["id"],
            content=content,
            title=entry.title or None,
            importance=entry.importance if entry.exact else None,
        )
        self.store.upstream.drop_echo(memory["id"], since)
        self.store.upstream.save_link(
            memory["id"],
            entry.upstream_id,
            link["kind"],
            upstream_version=link["upstream_version"],
            local_version=memory["version"],
            synced_sha256=memory["content_sha256"],
        )
        self._seen(memory["id"], entry, sha)
        touched.add(memory["project_key"])
        return "applied"

    def _apply_new(self, entry: Incoming, sha: str, touched: set[str | None]) -> str:
        mine = self.store.memories.find(entry.origin) if entry.origin else None
        if mine is not None:
            # Our own push whose answer was lost: link it, never duplicate it.
            self.store.upstream.save_link(
                mine["id"],
                entry.upstream_id,
                "memory",
                upstream_version=None,
                local_version=mine["version"],
                synced_sha256=mine["content_sha256"],
            )
            self._seen(mine["id"], entry, sha)
            return "skipped"
        if not entry.content:
            return "skipped"  # empty or redacted upstream, or gone meanwhile
        provenance = {
            "upstream": self.client.url,
            "upstream_id": entry.upstream_id,
            "upstream_kind": entry.asset_kind,
            "upstream_source": entry.source,
            "upstream_updated_at": entry.updated_at,
            "author": entry.author,
            "agent": entry.provenance.get("agent"),
            "pulled_via": "read_endpoints",
        }
        if entry.truncated:
            provenance["truncated"] = True
        # The reference files a record written without a project under the workspace's slug
        # (an exact record, this daemon's kind, says null for that).
        slug = self.store.upstream.get("upstream_workspace_slug")
        project_key = None if not entry.exact and entry.project_key == slug else entry.project_key
        since = self.store.upstream.last_seq()
        memory = self.store.memories.create(
            NewMemory(
                namespace=self.local_workspace,
                kind=entry.kind,
                content=entry.content,
                source=entry.source if entry.source in PACK_SOURCES else "upstream",
                title=entry.title,
                project_key=project_key,
                importance=entry.importance,
                triggers=entry.triggers,
                provenance=provenance,
            )
        )
        self.store.upstream.drop_echo(memory["id"], since)
        self.store.upstream.save_link(
            memory["id"],
            entry.upstream_id,
            "memory",
            upstream_version=None,
            local_version=1,
            synced_sha256=memory["content_sha256"],
        )
        self._seen(memory["id"], entry, sha)
        touched.add(memory["project_key"])
        return "applied"

    # -- bookkeeping -------------------------------------------------------------------------

    def _back_off(self) -> None:
        """A failed or slow round: the next pull waits 2 s doubling to 5 min (pushes go on)."""
        failures = int(self.store.upstream.get("pull_failures") or 0)
        when = datetime.now(UTC) + timedelta(seconds=backoff_seconds(failures))
        with self.store.transaction():
            self.store.upstream.put(pull_failures=failures + 1, pull_retry_at=iso_from_datetime(when))

    def _note_gap(self, kinds: list[str], mark: str | None) -> None:
        gap = {
            "at": now_iso(),
            "kinds": kinds,
            "since": mark,
            "reason": "more records changed upstream since the last round than its lists"
            " hold: older ones of these kinds may not have been seen",
        }
        log.warning("upstream pull: possible gap in %s since %s", ", ".join(kinds), mark)
        with self.store.transaction():
            self.store.upstream.put(pull_gap=json.dumps(gap))
