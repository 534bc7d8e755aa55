"""The domain services of one daemon, built once per app over its Store."""

from __future__ import annotations

from dataclasses import dataclass

from daemon.runtime.adaptive import AdaptiveService
from daemon.runtime.briefs import BriefService
from daemon.runtime.changes import ContextChanges
from daemon.runtime.context_packs import ContextPackService
from daemon.runtime.deltas import DeltaService
from daemon.runtime.projects import ProjectService
from daemon.runtime.startup import StartupService
from state.paths import Paths
from state.secrets import SecretStore
from state.store import Store


@dataclass(frozen=True)
class Services:
    store: Store
    changes: ContextChanges
    packs: ContextPackService
    deltas: DeltaService
    briefs: BriefService
    adaptive: AdaptiveService
    projects: ProjectService
    startup: StartupService

    @classmethod
    def build(cls, store: Store, paths: Paths, secrets: SecretStore) -> "Services":
        changes = ContextChanges()
        packs = ContextPackService(store)
        deltas = DeltaService(store, changes)
        return cls(store=store, changes=changes, packs=packs, deltas=deltas,
                   briefs=BriefService(store, packs, deltas, changes),
                   adaptive=AdaptiveService(store, changes), projects=ProjectService(store),
                   startup=StartupService(store, packs, paths, secrets))
