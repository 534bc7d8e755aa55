"""Namespaces by what they are, not by their ids.

The daemon names every namespace (``GET /api/local/namespaces``): an AMP workspace and its
name, a Memory Store and its name, an agent-memory1.0 user and scope, a suite collection and
its title. :class:`Namespaces` turns those into the short labels of lists and filters and the
longer line of a detail pane, which keeps the raw id. A namespace the daemon did not name (made
after the last fetch, or of a kind it does not know) is shown by its id: never hidden.
"""

from __future__ import annotations

from typing import Any

from tui.client import DaemonClient

# What the short label starts with, per kind: AMP workspaces are the usual case, so they
# carry no prefix and their name (and project) get the whole column.
PREFIX = {"workspace": "", "memory_store": "store ", "mem1_scope": "mem1 ", "suite_collection": "suite "}
# The detail line: "Memory Store **notes**", "agent-memory1.0 user **u**, scope **s**" ...
KIND = {"workspace": "workspace", "memory_store": "Memory Store", "suite_collection": "suite collection"}


class Namespaces:
    """The daemon's names of the namespaces, and the labels written from them."""

    def __init__(self, items: list[dict[str, Any]] | None = None) -> None:
        self.by_id = {item["namespace"]: item for item in items or []}

    def label(self, namespace: str, project_key: str | None = None) -> str:
        """Short, for a list or a filter: ``Personal · shop-web``, ``store notes``,
        ``mem1 alice/work``, ``suite Careful reviewer``; the id when it has no name."""
        item = self.by_id.get(namespace)
        if item is None:
            return namespace
        label = PREFIX.get(item["kind"], "") + item["name"]
        return f"{label} · {project_key}" if project_key and item["kind"] == "workspace" else label

    def describe(self, namespace: str, project_key: str | None = None) -> str:
        """Long, in Markdown, for a detail pane: what it is, its name, and the raw id."""
        item = self.by_id.get(namespace)
        if item is None:
            what = f"namespace `{namespace}`"
        elif item["kind"] == "mem1_scope":
            what = f"agent-memory1.0 user **{item['user_id']}**, scope **{item['scope_id']}** (`{namespace}`)"
        else:
            what = f"{KIND.get(item['kind'], item['kind'])} **{item['name']}** (`{namespace}`)"
        return f"{what}, project **{project_key}**" if project_key else what

    def options(self) -> list[tuple[str, str]]:
        """(label, namespace) for a filter, in the daemon's order."""
        return [(self.label(namespace), namespace) for namespace in self.by_id]


async def fetch_namespaces(client: DaemonClient) -> Namespaces:
    """The daemon's names now (one small read; every pane that shows namespaces asks)."""
    return Namespaces((await client.get("/api/local/namespaces"))["namespaces"])
