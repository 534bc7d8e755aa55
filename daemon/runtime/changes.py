"""Telling interested parts of the daemon that a project's memory changed.

Writers call ``changed`` after their transaction commits; the startup-item refresher
subscribes so fallback caches and rule files follow the memory. Listeners must be quick
(they schedule work, they do not do it), and run on the event loop: a write running in a
worker thread on PostgreSQL (state/pg/apart_pool.py) leaves them to the loop.
"""

from __future__ import annotations

from collections.abc import Callable

from state.group_commit import later_on_loop

Listener = Callable[[str, "str | None"], None]


class ContextChanges:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def changed(self, workspace_id: str, project_key: str | None) -> None:
        if later_on_loop(lambda: self.changed(workspace_id, project_key)):
            return
        for listener in self._listeners:
            listener(workspace_id, project_key)
