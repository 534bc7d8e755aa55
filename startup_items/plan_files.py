"""How a startup-item plan's files read to a person (``memorycloud setup`` and the TUI's
Setup pane show the same): one entry per file, in plan order, and the state each is in.

Standard library only: the TUI imports it, and it reaches neither the daemon's nor the
store's code (tests/test_architecture.py)."""

from __future__ import annotations

from typing import Any

ACTIVE = ("applied", "installed", "fallback_active")  # the statuses of a plan whose files are written


def files_by_path(files: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The plan's regions grouped by file, in plan order: one file may hold several regions
    (.amp/memory-config.json has the shared keys and each runtime's), the person sees it once."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in files:
        groups.setdefault(item["path"], []).append(item)
    return list(groups.items())


def file_state(plan_status: str, items: list[dict[str, Any]]) -> str:
    """written, unchanged, update or create: what a plan in ``plan_status`` did or will do to
    the file whose regions are ``items``. A plan's file list is what it was to do when planned;
    once applied, it is done."""
    if plan_status in ACTIVE:
        return "written"
    if not any(item["changes"] for item in items):
        return "unchanged"
    return "update" if items[0]["exists"] else "create"
