"""The domain services of one daemon, built once per app over its Store."""

from __future__ import annotations

from dataclasses import dataclass

from daemon.runtime.adaptive import AdaptiveService
from daemon.runtime.briefs import BriefService
from daemon.runtime.context_packs import ContextPackService
from daemon.runtime.deltas import DeltaService
from daemon.runtime.projects import ProjectService
from state.store import Store


@dataclass(frozen=True)
class Services:
    store: Store
    packs: ContextPackService
    deltas: DeltaService
    briefs: BriefService
    adaptive: AdaptiveService
    projects: ProjectService

    @classmethod
    def build(cls, store: Store) -> "Services":
        packs = ContextPackService(store)
        deltas = DeltaService(store)
        return cls(store=store, packs=packs, deltas=deltas,
                   briefs=BriefService(store, packs, deltas), adaptive=AdaptiveService(store),
                   projects=ProjectService(store))
