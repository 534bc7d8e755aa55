"""Telling interested parts of the daemon that a project's memory changed.

Writers call ``changed`` after their transaction commits; the startup-item refresher
subscribes so fallback caches and rule files follow the memory. Listeners must be quick
(they schedule work, they do not do it).
"""

from __future__ import annotations

from collections.abc import Callable

Listener = Callable[[str, "str | None"], None]


class ContextChanges:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def changed(self, workspace_id: str, project_key: str | None) -> None:
        for listener in self._listeners:
            listener(workspace_id, project_key)
