"""Which workspace a caller may use, and the public shape of identities and memories."""

from __future__ import annotations

from typing import Any

from state.errors import Forbidden, NotFound
from state.store import Store


def resolve_workspace(store: Store, identity: dict[str, Any], workspace_id: str | None) -> dict[str, Any]:
    """The workspace a request acts on: the one asked for if allowed, else the caller's own.

    The owner may use every workspace; an agent only the workspace it was created in.
    """
    if not workspace_id:
        workspace_id = identity.get("workspace_id") or store.identities.default_workspace()["id"]
    workspace = store.identities.workspace(workspace_id)
    if identity["kind"] != "owner" and identity.get("workspace_id") != workspace_id:
        raise Forbidden(f"this agent has no access to workspace {workspace_id}")
    return workspace


# Namespaces of the other dialects (Memory Stores, agent-memory1.0) and suite collections are
# shared by every key with memory:read on this machine; workspaces belong to their agents.
SHARED_PREFIXES = ("memstore_", "mem1:", "suite:")


def dialect_of(namespace: str) -> str:
    if namespace.startswith("memstore_"):
        return "memory_stores"
    if namespace.startswith("mem1:"):
        return "agent_memory1"
    if namespace.startswith("suite:"):
        return "suite_collection"
    return "amp"


def can_read_namespace(identity: dict[str, Any], namespace: str) -> bool:
    return (identity["kind"] == "owner" or identity.get("workspace_id") == namespace
            or namespace.startswith(SHARED_PREFIXES))


def readable_memory(store: Store, identity: dict[str, Any], memory_id: str) -> dict[str, Any]:
    """A live memory the caller may read; others' memories look exactly like missing ones."""
    memory = store.memories.find(memory_id)
    if memory is None or memory["deleted_at"] or not can_read_namespace(identity, memory["namespace"]):
        raise NotFound(f"memory {memory_id} not found")
    return memory


def public_identity(identity: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": identity["id"],
        "handle": identity["name"],
        "name": identity["name"],
        "auth_type": identity["auth_type"],
        "kind": identity["kind"],
        "runtime": identity.get("runtime"),
        "scopes": identity["scopes"],
        "workspace_id": identity.get("workspace_id"),
        "created_at": identity["created_at"],
    }


def public_workspace(workspace: dict[str, Any]) -> dict[str, Any]:
    return {"id": workspace["id"], "name": workspace["name"],
            "is_default": bool(workspace["is_default"]), "created_at": workspace["created_at"]}


def public_memory(memory: dict[str, Any]) -> dict[str, Any]:
    """A memory record as agents see it (no internal seq)."""
    return {
        "id": memory["id"],
        "schema": "amp.memory-record.v1",
        "namespace": memory["namespace"],
        "dialect": dialect_of(memory["namespace"]),
        "path": memory["path"],
        "workspace_id": memory["namespace"],
        "project_key": memory["project_key"],
        "memory_type": memory["kind"],
        "title": memory["title"],
        "content": memory["content"],
        "importance": memory["importance"],
        "retrieval_triggers": memory["triggers"],
        "provenance": memory["provenance"],
        "source": memory["source"],
        "written_by": memory["identity_id"],
        "content_sha256": memory["content_sha256"],
        "version": memory["version"],
        "created_at": memory["created_at"],
        "updated_at": memory["updated_at"],
    }
