"""The domain services of one daemon, built once per app over its Store."""

from __future__ import annotations

from dataclasses import dataclass

from daemon.runtime.adaptive import AdaptiveService
from daemon.runtime.briefs import BriefService
from daemon.runtime.changes import ContextChanges
from daemon.runtime.claims import ClaimService
from daemon.runtime.conflicts import ConflictService
from daemon.runtime.context_packs import ContextPackService
from daemon.runtime.deltas import DeltaService
from daemon.runtime.distill import DistillService
from daemon.runtime.feed_waiters import FeedWaiters
from daemon.runtime.install_suite import SuiteInstaller
from daemon.runtime.local_admin import LocalAdmin
from daemon.runtime.mem1 import Mem1Service
from daemon.runtime.memory_admin import MemoryAdmin
from daemon.runtime.memory_stores import MemoryStoreService
from daemon.runtime.namespaces import NamespaceDirectory
from daemon.runtime.projects import ProjectService
from daemon.runtime.registration import RegistrationService
from daemon.runtime.search import MemorySearch
from daemon.runtime.startup import StartupService
from daemon.runtime.suites import SuiteService
from daemon.runtime.sync_feed import SyncFeed
from daemon.runtime.sync_gate import SyncGate
from daemon.runtime.updates import UpdateService
from daemon.runtime.workspace_reads import WorkspaceReads
from daemon.upstream.service import UpstreamService
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
    updates: UpdateService
    gate: SyncGate
    suites: SuiteService
    installer: SuiteInstaller
    claims: ClaimService
    distill: DistillService
    memory_stores: MemoryStoreService
    mem1: Mem1Service
    memory_admin: MemoryAdmin
    conflicts: ConflictService
    feed: SyncFeed
    upstream: UpstreamService
    registration: RegistrationService
    local_admin: LocalAdmin
    search: MemorySearch
    workspace_reads: WorkspaceReads
    namespaces: NamespaceDirectory

    @classmethod
    def build(cls, store: Store, paths: Paths, secrets: SecretStore) -> Services:
        changes = ContextChanges()
        packs = ContextPackService(store)
        deltas = DeltaService(store, changes)
        briefs = BriefService(store, packs, deltas, changes)
        adaptive = AdaptiveService(store, changes)
        updates = UpdateService(store)
        gate = SyncGate(store, updates)
        # What a resumed sync intent replays: the same service call the endpoint makes.
        gate.register(
            "memory_delta",
            lambda identity, params, body, base_url: deltas.write(
                identity, packs.kept_receipt(body["context_receipt_id"]), body, base_url
            ),
        )
        gate.register(
            "memory_brief_event",
            lambda identity, params, body, base_url: briefs.add_event(
                identity, params["brief_id"], body, base_url
            ),
        )
        gate.register(
            "adaptive_memory_submit",
            lambda identity, params, body, base_url: adaptive.submit(identity, params["run_id"], body),
        )
        suites = SuiteService(store)
        distill = DistillService(store)
        gate.register(
            "persona_distill_job_json",
            lambda identity, params, body, base_url: distill.start(
                identity, params["slug"], body["documents"], body["chunk_chars"]
            ),
        )
        gate.register(
            "memory_suite_sync",
            lambda identity, params, body, base_url: suites.sync(identity, params["slug"], body),
        )
        startup = StartupService(store, packs, paths, secrets)
        upstream = UpstreamService(store, secrets, changes, store.settings)
        waiters = FeedWaiters(store)
        changes.subscribe(lambda workspace_id, project_key: waiters.wake(workspace_id))
        return cls(
            store=store,
            changes=changes,
            packs=packs,
            deltas=deltas,
            briefs=briefs,
            adaptive=adaptive,
            projects=ProjectService(store),
            startup=startup,
            updates=updates,
            gate=gate,
            suites=suites,
            installer=SuiteInstaller(store, packs, changes),
            claims=ClaimService(store),
            distill=distill,
            memory_stores=MemoryStoreService(store),
            mem1=Mem1Service(store),
            memory_admin=MemoryAdmin(store, changes),
            conflicts=ConflictService(store, startup),
            feed=SyncFeed(store, changes, waiters),
            upstream=upstream,
            registration=RegistrationService(store),
            local_admin=LocalAdmin(store, updates, upstream),
            search=MemorySearch(store),
            workspace_reads=WorkspaceReads(store),
            namespaces=NamespaceDirectory(store),
        )
