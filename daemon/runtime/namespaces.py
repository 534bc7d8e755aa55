"""The namespaces of the one store by what they are, for a person (the TUI): an AMP
workspace and its name, a Memory Store and its name, an agent-memory1.0 user and scope, a
suite's collection and its title. The raw id is always there beside the name."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from daemon.runtime.access import dialect_of
from daemon.runtime.distill import collection
from state.namespace_records import NamespaceRecords
from state.store import Store


def mem1_parts(namespace: str) -> tuple[str, str] | None:
    """(user_id, scope_id) of ``mem1:<user>:<scope>`` (parts percent-encoded, see
    daemon/runtime/mem1.py), or None when it is not one."""
    parts = namespace.split(":")
    if len(parts) != 3 or parts[0] != "mem1":
        return None
    return unquote(parts[1]), unquote(parts[2])


class NamespaceDirectory:
    def __init__(self, store: Store) -> None:
        self.records = NamespaceRecords(store.conn)

    def list(self) -> dict[str, Any]:
        """Every named namespace: ``namespace`` (the raw id), ``dialect``, ``kind``, ``name``
        and the kind's own fields (a workspace's ``is_default``, a store's ``status``, a
        mem1 namespace's ``user_id`` and ``scope_id``, a suite's ``slug``)."""
        items: list[dict[str, Any]] = [
            {"namespace": w["id"], "kind": "workspace", "name": w["name"], "is_default": w["is_default"]}
            for w in self.records.workspaces()
        ]
        items += [
            {"namespace": s["id"], "kind": "memory_store", "name": s["name"], "status": s["status"]}
            for s in self.records.memory_stores()
        ]
        for namespace in self.records.mem1_namespaces():
            parts = mem1_parts(namespace)
            if parts:
                items.append(
                    {
                        "namespace": namespace,
                        "kind": "mem1_scope",
                        "name": f"{parts[0]}/{parts[1]}",
                        "user_id": parts[0],
                        "scope_id": parts[1],
                    }
                )
        items += [
            {
                "namespace": collection(s["slug"]),
                "kind": "suite_collection",
                "name": s["title"],
                "slug": s["slug"],
            }
            for s in self.records.suites()
        ]
        return {
            "schema": "memorycloud.namespaces.v1",
            "namespaces": [{**item, "dialect": dialect_of(item["namespace"])} for item in items],
        }
