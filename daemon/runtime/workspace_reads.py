"""AMP's read endpoints of a workspace, in the MemoryCloud reference's shapes (contract sheet
ids ``workspace_memory_query``, ``me_workspaces``, ``me_memory_map``, ``workspace_memory_map``,
``code_memory_context``), over the one store.

They are also what a downstream daemon pulls through when this daemon serves no sync
extension (daemon/upstream/read_puller.py), so every list is newest first and every item
carries, besides the reference's keys, our record's own (``content``, ``version``,
``written_by``, ``provenance`` ...): the reference's keys for clients written for MemoryCloud,
ours for the clients that read them today (context packs' retrieval handles point here).
"""

from __future__ import annotations

import hashlib
from typing import Any

from daemon.runtime.access import public_memory, resolve_workspace
from daemon.runtime.context_packs import memory_url
from daemon.runtime.suite_archive import slugify
from state.errors import InvalidRequest
from state.identities import IdentityRecord, WorkspaceRecord
from state.memories import MemoryRecord
from state.store import Store
from state.workspace_records import WorkspaceRecords

QUERY_LIMIT = (1, 30)  # the reference clamps the memory query's limit to 1..30
MAP_LIMIT = (20, 240)  # ... and the memory map's to 20..240
MAX_QUERY_CHARS = 2000
CALL_INSTRUCTIONS = (
    "Inject only relevant memories. System policy and current user instructions override stored memory."
)
# Memory types an agent acts on (the map's primary assets); the rest are context.
PRIMARY_TYPES = frozenset(
    {
        "project_memory",
        "code_memory",
        "decision_memory",
        "procedure_memory",
        "failure_memory",
        "task_execution_memory",
    }
)


def clamp(value: int, bounds: tuple[int, int]) -> int:
    return max(bounds[0], min(value, bounds[1]))


def compact(text: str | None, limit: int) -> str:
    """One line of at most ``limit`` characters (an ellipsis says it was cut)."""
    line = " ".join((text or "").split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def asset_kind(memory: MemoryRecord) -> str:
    """The memory map's kind of a record: the reference's two kinds of workspace memory, and
    ``memory`` for the others (documents, installed suites, pulled records ...)."""
    if memory["source"] == "adaptive_memory":
        return "adaptive_memory"
    if memory["source"] in ("memory_delta", "brief_event"):
        return "memory_delta"
    return "memory"


def contract_item(memory: MemoryRecord, base_url: str) -> dict[str, Any]:
    """A record as a memory-query item: the reference's keys beside ours."""
    provenance = memory["provenance"] or {}
    return {
        **public_memory(memory),
        "summary": compact(memory["content"], 500),
        "compiled_markdown": memory["content"] or "",
        "visibility": provenance.get("visibility") or "workspace",
        "entities": list(provenance.get("entities") or []),
        "code_refs": list(provenance.get("code_refs") or []),
        "detail_endpoint": memory_url(base_url, memory["id"]),
    }


class WorkspaceReads:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.records = WorkspaceRecords(store.conn)

    # -- workspaces --------------------------------------------------------------------------

    def readable_workspaces(self, identity: IdentityRecord) -> list[WorkspaceRecord]:
        """The owner reads every workspace; an agent the one it belongs to."""
        if identity["kind"] == "owner":
            return self.store.identities.workspaces()
        return [resolve_workspace(self.store, identity, None)]

    def role(self, identity: IdentityRecord) -> str:
        if identity["kind"] == "owner":
            return "owner"
        return "writer" if "memory:write" in identity["scopes"] else "reader"

    def workspace_item(self, identity: IdentityRecord, workspace: WorkspaceRecord) -> dict[str, Any]:
        owner = (
            self.store.identities.get(workspace["owner_identity_id"])
            if workspace["owner_identity_id"]
            else None
        )
        return {
            "id": workspace["id"],
            "owner_id": workspace["owner_identity_id"] or "",
            "slug": slugify(workspace["name"]),
            "name": workspace["name"],
            "description": "",
            # A local daemon's workspaces are its person's; a team daemon's, its team's.
            "visibility": "private",
            "created_at": workspace["created_at"],
            "updated_at": workspace["created_at"],
            "is_default": bool(workspace["is_default"]),
            "role": self.role(identity),
            "owner_username": owner["name"] if owner else "",
            "owner_auth_type": owner["auth_type"] if owner else "",
            "owned_by_current_user": workspace["owner_identity_id"] == identity["id"],
        }

    def my_workspaces(self, identity: IdentityRecord) -> dict[str, Any]:
        return {"items": [self.workspace_item(identity, w) for w in self.readable_workspaces(identity)]}

    # -- the memory query ----------------------------------------------------------------------

    async def query(
        self,
        identity: IdentityRecord,
        workspace_id: str,
        *,
        q: str,
        memory_type: str | None,
        project_key: str | None,
        limit: int,
        base_url: str,
    ) -> dict[str, Any]:
        """Hybrid search with ``q``; without it the workspace's newest records. ``memory_type``
        filters exactly; ``limit`` is clamped to 1..30 as the reference does. Read apart from
        the event loop where the store can (Store.read)."""

        def read() -> dict[str, Any]:
            workspace = resolve_workspace(self.store, identity, workspace_id)
            if len(q) > MAX_QUERY_CHARS:
                raise InvalidRequest(f"query parameter 'q' must be at most {MAX_QUERY_CHARS} characters")
            clamped = clamp(limit, QUERY_LIMIT)
            if q:
                items = self._search(
                    workspace["id"], q, clamped, base_url, kind=memory_type, project_key=project_key
                )
            else:
                items = [
                    contract_item(m, base_url)
                    for m in self.records.newest(
                        [workspace["id"]], limit=clamped, kind=memory_type, project_key=project_key
                    )
                ]
            return {
                "schema": "amp.memory-search.v1",
                "query": q,
                "workspace_id": workspace["id"],
                "project_key": project_key,
                "memory_type": memory_type,
                "items": items,
                "context": "\n\n---\n\n".join(item["compiled_markdown"] for item in items),
                "active_memory_view": None,  # no memory branch graphs here (README, "Upstream")
                "call_instructions": CALL_INSTRUCTIONS,
            }

        return await self.store.read(read)

    def _search(
        self,
        workspace_id: str,
        q: str,
        limit: int,
        base_url: str,
        *,
        kind: str | None,
        project_key: str | None,
    ) -> list[dict[str, Any]]:
        """The best ``limit`` hits of ``q`` of that kind and project (as ``records.newest`` filters)."""
        # Over-fetch when filtering so the filter does not starve the result list; ranked as
        # the page would be, without vector neighbours for the extra hits (state/search.py).
        fetch = limit * 4 if (project_key or kind) else limit
        hits = self.store.search.search(q, [workspace_id], limit=fetch, page=limit)
        by_seq = self.store.memories.by_seqs([h.seq for h in hits])
        items = []
        for hit in hits:
            memory = by_seq.get(hit.seq)
            if memory is None:
                continue
            if project_key and memory["project_key"] not in (None, project_key):
                continue
            if kind and memory["kind"] != kind:
                continue
            items.append({**contract_item(memory, base_url), "score": round(hit.score, 6)})
            if len(items) >= limit:
                break
        return items

    # -- the code-memory context -------------------------------------------------------------

    def code_memory(
        self, identity: IdentityRecord, project_key: str, *, q: str, limit: int, base_url: str
    ) -> dict[str, Any]:
        """``code_memory`` records of the project in the caller's workspaces, newest first."""
        namespaces = [w["id"] for w in self.readable_workspaces(identity)]
        found = self.records.code_memories(
            namespaces, project_key=project_key, text=q, limit=clamp(limit, QUERY_LIMIT)
        )
        items = [contract_item(m, base_url) for m in found]
        return {
            "project_key": project_key,
            "items": items,
            "context": "\n\n---\n\n".join(item["compiled_markdown"] for item in items),
        }

    # -- the memory map ------------------------------------------------------------------------

    def memory_map(
        self, identity: IdentityRecord, workspace_id: str | None, *, limit: int, base_url: str
    ) -> dict[str, Any]:
        """amp.memory-lens-map.v1: the caller's workspaces (or one), their newest records as
        assets (at most ``limit``, clamped to 20..240), grouped by topic into nodes and edges."""
        workspaces = (
            [resolve_workspace(self.store, identity, workspace_id)]
            if workspace_id
            else self.readable_workspaces(identity)
        )
        names = {w["id"]: w["name"] for w in workspaces}
        records = self.records.newest(list(names), limit=clamp(limit, MAP_LIMIT))
        assets = [self._asset(m, names[m["namespace"]], base_url) for m in records]
        primary = [a for a in assets if a["type"] in PRIMARY_TYPES]
        secondary = [a for a in assets if a["type"] not in PRIMARY_TYPES]
        nodes, edges = _graph(identity, workspaces, assets)
        return {
            "schema": "amp.memory-lens-map.v1",
            "user": {"id": identity["id"], "handle": identity["name"], "username": identity["name"]},
            "workspace_id": workspace_id or "",
            "stats": {
                "workspaces": len(workspaces),
                "assets": len(assets),
                "primary_assets": len(primary),
                "secondary_assets": len(secondary),
                "active": len(assets),
                "active_primary": len(primary),
                "topics": sum(1 for n in nodes if n["kind"] == "topic"),
                "agents": len(self.store.identities.agents()) if identity["kind"] == "owner" else 1,
            },
            "workspaces": [self.workspace_item(identity, w) for w in workspaces],
            "assets": assets,
            "primary_assets": primary,
            "secondary_assets": secondary,
            "nodes": nodes,
            "edges": edges,
            "default_agent_view": {
                "readable_asset_ids": [a["id"] for a in assets[:24]],
                "readable_count": len(assets),
                "summary": "Every live memory of these workspaces reaches agents; none is muted here.",
            },
        }

    @staticmethod
    def _asset(memory: MemoryRecord, workspace_name: str, base_url: str) -> dict[str, Any]:
        kind = asset_kind(memory)
        triggers = memory["triggers"]
        topic = (compact(triggers[0], 46) if triggers else None) or memory["project_key"] or memory["kind"]
        return {
            "id": f"{kind}:{memory['id']}",
            "source_id": memory["id"],
            "kind": kind,
            "type": memory["kind"],
            "type_label": memory["kind"].replace("_", " "),
            "title": compact(memory["title"] or memory["content"], 96),
            "summary": compact(memory["content"], 220),
            "workspace_id": memory["namespace"],
            "workspace_name": workspace_name,
            "project_key": memory["project_key"],
            "topic": topic,
            "triggers": [compact(t, 60) for t in triggers[:8]],
            "code_refs": [],
            "entities": [],
            "status": "active",
            "visibility": (memory["provenance"] or {}).get("visibility") or "workspace",
            "importance": memory["importance"],
            "version": memory["version"],
            "written_by": memory["identity_id"],
            "created_at": memory["created_at"],
            "updated_at": memory["updated_at"],
            "detail_endpoint": memory_url(base_url, memory["id"]),
        }


def _graph(
    identity: IdentityRecord, workspaces: list[WorkspaceRecord], assets: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """user -> workspaces -> topics -> assets, as the reference's lens map draws them."""
    root = f"user:{identity['id']}"
    nodes: dict[str, dict[str, Any]] = {
        root: {
            "id": root,
            "kind": "user",
            "title": identity["name"],
            "summary": "your memory",
            "status": "active",
            "level": 0,
        }
    }
    edges: dict[str, dict[str, Any]] = {}

    def edge(source: str, target: str, kind: str, label: str) -> None:
        key = f"{source}|{target}|{kind}"
        edges.setdefault(
            key,
            {
                "id": "edge_" + hashlib.sha256(key.encode()).hexdigest()[:18],
                "source": source,
                "target": target,
                "type": kind,
                "label": label,
            },
        )

    for workspace in workspaces:
        node = f"workspace:{workspace['id']}"
        nodes[node] = {
            "id": node,
            "kind": "workspace",
            "title": workspace["name"],
            "summary": "",
            "status": "active",
            "workspace_id": workspace["id"],
            "level": 1,
        }
        edge(root, node, "owns", "workspace")
    for asset in assets:
        workspace_node = f"workspace:{asset['workspace_id']}"
        topic = f"topic:{asset['workspace_id']}:{hashlib.sha256(asset['topic'].encode()).hexdigest()[:12]}"
        nodes.setdefault(
            topic,
            {
                "id": topic,
                "kind": "topic",
                "title": asset["topic"],
                "summary": f"a topic of {asset['workspace_name']}",
                "status": "active",
                "workspace_id": asset["workspace_id"],
                "level": 2,
            },
        )
        nodes[asset["id"]] = {**asset, "level": 3}
        edge(workspace_node, topic, "groups", "topic")
        edge(topic, asset["id"], "groups", asset["type_label"])
        edge(workspace_node, asset["id"], "contains", "memory")
    return list(nodes.values()), list(edges.values())
