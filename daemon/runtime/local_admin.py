"""The owner's local API (CLI and TUI) where no other service owns the subject: the store's
counts and facts for the status, the inbox of what waits for a person, and the agents with
their keys."""

from __future__ import annotations

from typing import Any

from daemon.runtime.updates import UpdateService
from daemon.upstream.service import UpstreamService
from state.identities import IdentityRecord
from state.store import Store


def public_agent(agent: IdentityRecord) -> dict[str, Any]:
    """An agent as the local API shows it: never its key's hash."""
    return {
        "id": agent["id"],
        "name": agent["name"],
        "runtime": agent["runtime"],
        "scopes": agent["scopes"],
        "workspace_id": agent["workspace_id"],
        "created_at": agent["created_at"],
        "disabled_at": agent["disabled_at"],
    }


class LocalAdmin:
    def __init__(self, store: Store, updates: UpdateService, upstream: UpstreamService) -> None:
        self.store = store
        self.updates = updates
        self.upstream = upstream

    def counts(self) -> dict[str, int]:
        store = self.store
        return {
            "memories": store.memories.count(),
            "agents": len(store.identities.agents()),
            "workspaces": len(store.identities.workspaces()),
            "project_bindings": store.projects.count(),
            "context_packs": store.amp.count_packs(),
        }

    def store_facts(self) -> dict[str, Any]:
        """Where the store is (its file, or its database URL masked), size, schema versions,
        embedder and the search index's rebuild, if one runs."""
        store = self.store
        return {
            "database": store.location(),
            "store_bytes": store.size_bytes(),
            "versions": store.versions(),
            "embedder": {"name": store.embedder.name, "dimension": store.embedder.dimension},
            "search_index": store.index_status(),
        }

    def active_agents(self) -> list[IdentityRecord]:
        return [a for a in self.store.identities.agents() if not a["disabled_at"]]

    def inbox(self) -> dict[str, int]:
        """What waits for a person (the TUI's home screen)."""
        store = self.store
        return {
            "startup_plans_to_approve": len(store.startup.plans("pending_approval")),
            "conflicts": len(store.conflicts.conflicts("open")),
            "agents_with_pending_updates": sum(1 for a in self.active_agents() if self.updates.pending(a)),
            "blocked_sync_intents": len(store.updates.intents(None, "blocked")),
            "upstream_updates_to_ack": len(self.upstream.status().get("pending_updates", [])),
            "interrupted_upstream_writes": store.upstream.counts().get("interrupted", 0),
        }

    def agents(self) -> list[dict[str, Any]]:
        """Every agent, revoked ones too, with when it last wrote."""
        last_seen = self.store.memories.last_write_by_identity()
        return [
            {**public_agent(a), "last_write_at": last_seen.get(a["id"])}
            for a in self.store.identities.agents()
        ]

    def create_agent(self, name: str, runtime: str, scopes: list[str] | None) -> tuple[dict[str, Any], str]:
        """The new agent and its key (shown once)."""
        with self.store.transaction():
            agent, key = self.store.identities.create_agent(name, runtime, scopes=scopes)
        return public_agent(agent), key

    def revoke_agent(self, agent: IdentityRecord) -> dict[str, Any]:
        with self.store.transaction():
            self.store.identities.disable_agent(agent["id"])
        return public_agent(self.store.identities.get(agent["id"]))
