"""Which workspace a caller may use, and the public shape of identities and memories."""

from __future__ import annotations

from typing import Any

from state.errors import Forbidden, NotFound
from state.identities import IdentityRecord, WorkspaceRecord
from state.memories import MemoryRecord
from state.projects import ProjectBindingRecord
from state.store import Store


def resolve_workspace(store: Store, identity: IdentityRecord, workspace_id: str | None) -> WorkspaceRecord:
    """The workspace a request acts on: the one asked for if allowed, else the caller's own.

    The owner may use every workspace; an agent only the workspace it was created in.
    """
    if not workspace_id:
        workspace_id = identity.get("workspace_id") or store.identities.default_workspace()["id"]
    workspace = store.identities.workspace(workspace_id)
    if identity["kind"] != "owner" and identity.get("workspace_id") != workspace_id:
        raise Forbidden(f"this agent has no access to workspace {workspace_id}")
    return workspace


def resolve_scope(
    store: Store, identity: IdentityRecord, params: dict[str, Any]
) -> tuple[WorkspaceRecord, str | None, ProjectBindingRecord | None]:
    """(workspace, project_key, binding) of a request: a project binding supplies the
    workspace and project key it was made for, else ``workspace_id`` (or the caller's own)."""
    binding = None
    workspace_id = params.get("workspace_id")
    project_key = params.get("project_key")
    if params.get("project_binding_id"):
        binding = store.projects.binding(params["project_binding_id"])
        workspace_id = workspace_id or binding["workspace_id"]
        if workspace_id != binding["workspace_id"]:
            raise NotFound(f"project binding {binding['id']} not found in workspace {workspace_id}")
        project_key = project_key or binding["project_key"]
    workspace = resolve_workspace(store, identity, workspace_id)
    return workspace, project_key, binding


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


def can_read_namespace(identity: IdentityRecord, namespace: str) -> bool:
    return (
        identity["kind"] == "owner"
        or identity.get("workspace_id") == namespace
        or namespace.startswith(SHARED_PREFIXES)
    )


def readable_memory(store: Store, identity: IdentityRecord, memory_id: str) -> MemoryRecord:
    """A live memory the caller may read; others' memories look exactly like missing ones."""
    memory = store.memories.find(memory_id)
    if memory is None or memory["deleted_at"] or not can_read_namespace(identity, memory["namespace"]):
        raise NotFound(f"memory {memory_id} not found")
    return memory


def public_identity(identity: IdentityRecord) -> dict[str, Any]:
    """Who a key belongs to: the reference's user keys (handle, username, auth_method,
    auth_scopes ...; no e-mail or phone is kept here) and ours (name, kind, scopes ...)."""
    return {
        "id": identity["id"],
        "handle": identity["name"],
        "username": identity["name"],
        "name": identity["name"],
        "email": None,
        "phone": None,
        "auth_type": identity["auth_type"],
        # The owner is this machine's person; agents are trusted as far as their scopes.
        "trust_level": 3 if identity["kind"] == "owner" else 1,
        "auth_method": "api_key",
        "auth_scopes": identity["scopes"],
        "kind": identity["kind"],
        "runtime": identity.get("runtime"),
        "scopes": identity["scopes"],
        "workspace_id": identity.get("workspace_id"),
        "created_at": identity["created_at"],
    }


def public_workspace(workspace: WorkspaceRecord) -> dict[str, Any]:
    """A workspace with the reference's keys and ours (is_default). Workspaces here are the
    owner's and private to their agents; a name is all a person gives one."""
    return {
        "id": workspace["id"],
        "owner_id": workspace.get("owner_identity_id") or "",
        "slug": workspace_slug(workspace["name"]),
        "name": workspace["name"],
        "description": "",
        "visibility": "private",
        "is_default": bool(workspace["is_default"]),
        "created_at": workspace["created_at"],
        "updated_at": workspace["created_at"],
    }


def workspace_slug(name: str) -> str:
    """'Platform Team' -> 'platform-team' (any script's letters are kept)."""
    return "-".join("".join(c if c.isalnum() else " " for c in name.lower()).split()) or "workspace"


def public_memory(memory: MemoryRecord) -> dict[str, Any]:
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


def memory_detail(memory: MemoryRecord) -> dict[str, Any]:
    """A memory as GET /api/agent/memories/{id} shows it: ours, plus the reference's keys
    (type_label, summary, compiled_markdown, entities, code_refs, visibility). An adaptive
    memory keeps the values its form gave them (``provenance.view``)."""
    view = memory["provenance"].get("view") if isinstance(memory["provenance"], dict) else None
    return {
        **public_memory(memory),
        "type_label": memory["kind"].replace("_", " ").capitalize(),
        "summary": (memory["title"] or memory["content"])[:500],
        "compiled_markdown": memory["content"],
        "entities": [],
        "code_refs": [],
        "visibility": "workspace",
        **(view or {}),
    }
