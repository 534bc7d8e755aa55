"""The repositories' records (state/*.py TypedDicts): their keys are their tables' columns, and
every read returns exactly those keys. IdentityRecord and WorkspaceRecord are held in
tests/state/test_identities.py."""

from __future__ import annotations

from typing import Any

import pytest

from state.amp_records import (
    AdaptiveRunRecord,
    BriefEventRecord,
    ContextPackRecord,
    MemoryBriefRecord,
    ReceiptRecord,
    RecentBriefEvent,
    SummaryCardRecord,
)
from state.claim_records import ClaimRecord, ClaimRecords
from state.conflict_records import ConflictRecord
from state.distill_records import DistillJobRecord, DistillRecords
from state.mem1_records import Mem1MessageRecord, Mem1PageRecord, Mem1Records, SessionLine
from state.memories import MemoryRecord, MemoryVersionRecord, MemoryVersionSummary, NewMemory
from state.memory_store_records import MemoryStoreRecord, MemoryStoreRecords
from state.namespace_records import NamedMemoryStore, NamedSuite, NamedWorkspace, NamespaceRecords
from state.projects import ProjectBindingRecord, RuntimeProfileRecord
from state.startup_records import HookRunRecord, ManagedRegion, StartupPlanRecord
from state.store import Store
from state.suite_records import (
    InstalledLens,
    InstalledOpenMemoryRecord,
    StoredSuiteVersion,
    SuiteRecord,
    SuiteVersionRecord,
    SuiteVersionSummary,
)
from state.update_records import SyncIntentRecord, UpdateAckRecord, UpdateRecord
from state.upstream_records import ChangeRow, OutboxEntryRecord, UpstreamLinkRecord

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines


def table_columns(store: Store, table: str) -> set[str]:
    if getattr(store.conn, "engine", "sqlite") == "postgresql":
        sql = "select column_name from information_schema.columns where table_name = ?"
        return {row[0] for row in store.conn.execute(sql, (table,))}
    return {row[1] for row in store.conn.execute(f"pragma table_info({table})")}


def _keys(record: type) -> set[str]:
    return set(record.__annotations__)


# (record, table, the table's columns a read leaves out, the keys a read adds)
FULL_ROWS: list[tuple[type, str, set[str], set[str]]] = [
    (MemoryRecord, "memory_records", set(), set()),
    (MemoryVersionRecord, "memory_versions", set(), set()),
    (ConflictRecord, "conflicts", set(), set()),
    (UpdateRecord, "platform_updates", set(), set()),
    (SyncIntentRecord, "sync_intents", set(), set()),
    (UpdateAckRecord, "update_acks", set(), set()),
    (ContextPackRecord, "context_packs", set(), set()),
    (ReceiptRecord, "receipts", set(), set()),
    (SummaryCardRecord, "summary_cards", set(), set()),
    (MemoryBriefRecord, "memory_briefs", set(), set()),
    (BriefEventRecord, "brief_events", set(), set()),
    (AdaptiveRunRecord, "adaptive_runs", set(), set()),
    (ProjectBindingRecord, "project_bindings", set(), set()),
    (RuntimeProfileRecord, "runtime_profiles", set(), set()),
    (StartupPlanRecord, "startup_plans", set(), set()),
    (SuiteRecord, "suites", set(), set()),
    # A version's zip bytes are read on their own (SuiteRecords.archive); verbatim says
    # whether there are any.
    (SuiteVersionRecord, "suite_versions", {"archive"}, {"verbatim"}),
    (StoredSuiteVersion, "suite_versions", {"archive"}, {"verbatim", "files", "file_sha256", "suite"}),
    (OutboxEntryRecord, "upstream_outbox", set(), set()),
    (UpstreamLinkRecord, "upstream_links", set(), set()),
    (MemoryStoreRecord, "memory_stores", set(), set()),
    (InstalledOpenMemoryRecord, "installed_open_memories", set(), set()),
    (ClaimRecord, "claims", set(), set()),
    (DistillJobRecord, "distill_jobs", set(), set()),
    # A message's user and scope say its namespace; seq only orders the session.
    (Mem1MessageRecord, "mem1_messages", {"seq", "namespace"}, set()),
]


@pytest.mark.parametrize(
    ("record", "table", "left_out", "added"), FULL_ROWS, ids=[f"{r.__name__}-{t}" for r, t, _, _ in FULL_ROWS]
)
def test_a_record_names_every_column_of_its_table(
    store: Store, record: type, table: str, left_out: set[str], added: set[str]
) -> None:
    """A migration that adds a column to the table adds it to the record."""
    assert _keys(record) == (table_columns(store, table) - left_out) | added


# Reads of some columns: each key is a column of its table (renamed or computed ones are
# named here).
PROJECTIONS: list[tuple[type, tuple[str, ...], set[str]]] = [
    (RecentBriefEvent, ("brief_events",), set()),
    (MemoryVersionSummary, ("memory_versions",), set()),
    (SuiteVersionSummary, ("suite_versions",), set()),
    (HookRunRecord, ("startup_hook_runs",), set()),
    (ManagedRegion, ("managed_regions",), set()),
    # sync_changelog's content_sha256 is change_sha256, memory_records' version current_version.
    (
        ChangeRow,
        ("sync_changelog", "memory_versions", "memory_records"),
        {"change_sha256", "current_version"},
    ),
    (SessionLine, ("mem1_messages",), set()),
    (Mem1PageRecord, ("memory_records",), set()),
    (NamedWorkspace, ("workspaces",), set()),
    (NamedMemoryStore, ("memory_stores",), set()),
    (NamedSuite, ("suites",), set()),
    # installed_open_memories' id is installed_memory_id; memory_count and facts are computed.
    (InstalledLens, ("installed_open_memories",), {"installed_memory_id", "memory_count", "facts"}),
]


@pytest.mark.parametrize(
    ("record", "tables", "renamed"), PROJECTIONS, ids=[r.__name__ for r, _, _ in PROJECTIONS]
)
def test_a_projection_names_columns_of_its_tables(
    store: Store, record: type, tables: tuple[str, ...], renamed: set[str]
) -> None:
    columns = set().union(*(table_columns(store, t) for t in tables))
    assert _keys(record) <= columns | renamed
    assert renamed <= _keys(record)


def _suite(store: Store, slug: str) -> SuiteRecord:
    return store.suites.add_version(
        slug=slug,
        title="A suite",
        summary="what it holds",
        version="1.0.0",
        legacy=False,
        manifest={"title": "A suite", "version": "1.0.0"},
        files={"MEMORY.md": "- a fact\n"},
        file_sha={"MEMORY.md": "0" * 64},
        archive_sha256="1" * 64,
        identity_id=None,
        tags=["demo"],
        size_bytes=10,
        changelog="initial publish",
    )


def _check(value: Any, record: type) -> None:
    assert set(value) == _keys(record), record.__name__


def _check_all(values: Any, record: type) -> None:
    values = list(values)
    assert values, f"no {record.__name__} read"
    for value in values:
        _check(value, record)


def test_every_read_returns_its_records_keys(store: Store) -> None:
    """What each read selects is what its record says (a projection, a computed key)."""
    with store.transaction():
        owner, _ = store.identities.create_owner()
        workspace = store.identities.default_workspace()["id"]
        store.upstream.put(local_workspace_id=workspace)  # so writes reach the outbox
        binding, _ = store.projects.probe(
            workspace_id=workspace,
            identity_id=owner["id"],
            runtime="codex",
            project_key="demo",
            repo_root="/tmp/demo",
            git_remote=None,
        )
        profile = store.projects.upsert_profile(owner["id"], {"runtime": "codex", "supports_mcp": True})
        store.amp.insert_pack(
            "ctxp_1",
            identity_id=owner["id"],
            workspace_id=workspace,
            project_key="demo",
            binding_id=binding["id"],
            runtime="codex",
            reason="agent_startup",
            body={"schema": "amp.context-pack.v1"},
            created_at="2026-01-01T00:00:00Z",
        )
        store.amp.insert_receipt(
            {
                "receipt_id": "amp_receipt_1",
                "context_pack_id": "ctxp_1",
                "workspace_id": workspace,
                "project_key": "demo",
                "summary_sha256": "sha256:0",
                "issued_at": "2026-01-01T00:00:00Z",
                "expires_at": "2026-01-02T00:00:00Z",
            },
            identity_id=owner["id"],
        )
        card = store.amp.insert_card(
            workspace_id=workspace,
            project_key="demo",
            source_type="memory_delta",
            source_id="mdelta_1",
            title="t",
            body="b",
            importance=3,
            memory_id=None,
        )
        memory = store.memories.create(NewMemory(workspace, "event", "the handoff", "brief_event"))
        store.amp.insert_brief(
            {
                "id": "brief_1",
                "identity_id": owner["id"],
                "workspace_id": workspace,
                "project_key": "demo",
                "task": "a task",
                "request": {"task": "a task"},
                "brief_markdown": "# brief",
                "source_counts": {"carry_in": 0},
                "context_pack_id": "ctxp_1",
                "receipt_id": "amp_receipt_1",
                "created_at": "2026-01-01T00:00:00Z",
                "sources": {"carry_in": []},
            }
        )
        store.amp.insert_event(
            {
                "id": "bevt_1",
                "brief_id": "brief_1",
                "event_type": "handoff_ready",
                "summary": "ready",
                "importance": 3,
                "payload": {"next": "review"},
                "identity_id": owner["id"],
                "memory_id": memory["id"],
                "delta_id": None,
                "created_at": "2026-01-01T00:00:01Z",
            }
        )
        store.amp.insert_run(
            {
                "id": "arun_1",
                "identity_id": owner["id"],
                "workspace_id": workspace,
                "project_key": None,
                "task": "a task",
                "request": {"task": "a task"},
                "selection": {"selected_memory_type": "decision"},
                "created_at": "2026-01-01T00:00:00Z",
            }
        )
        store.startup.insert_plan(
            {
                "id": "splan_1",
                "binding_id": binding["id"],
                "runtime": "codex",
                "repo_root": "/tmp/demo",
                "credential_ref": "ref",
                "status": "applied",
                "body": {"plan_id": "splan_1"},
                "signature": "sig",
                "created_by": owner["id"],
                "decided_by": None,
                "created_at": "2026-01-01T00:00:00Z",
                "decided_at": None,
                "applied_at": None,
                "confirmed_at": None,
                "removed_at": None,
                "last_refresh_at": None,
            }
        )
        store.startup.save_region("/tmp/demo", "AGENTS.md", "block", {"sha": "0"}, ["splan_1"])
        store.startup.record_hook_run(binding["id"], "codex", "session-start", "startup", owner["id"])
        suite = _suite(store, "demo-suite")
        store.upstream.enqueue_suite_sync("demo-suite", {"events": []})
        store.upstream.save_link(
            memory["id"], "mem_up", "memory", upstream_version=1, local_version=1, synced_sha256=None
        )
        stores = MemoryStoreRecords(store.conn)
        stores.insert(
            "memstore_1",
            name="notes",
            description="",
            metadata={"team": "a"},
            created_by=owner["id"],
            created_at="2026-01-01T00:00:00Z",
        )
        document = store.memories.create(
            NewMemory("memstore_1", "document", "text", "memory_store", path="/a.md")
        )
        store.updates.upsert_update(
            {
                "id": "upd_1",
                "version": "1.0.0",
                "severity": "required",
                "title": "t",
                "summary": "s",
                "source": "local",
            }
        )
        store.updates.ack(owner["id"], store.updates.update("upd_1"), None, owner["id"])
        store.suites.add_installed(
            {
                "id": "imem_1",
                "workspace_id": workspace,
                "project_key": "demo",
                "suite_id": suite["id"],
                "slug": "demo-suite",
                "version": "1.0.0",
                "title": "A suite",
                "provenance": {"source_type": "manual"},
                "archive_sha256": "1" * 64,
                "memory_ids": [memory["id"]],
                "conflict_ids": [],
                "steps": ["read suite/manifest.json"],
                "retrieval_test": {"query": "A suite", "hits": 1, "passed": True},
                "installed_by": owner["id"],
                "installed_at": "2026-01-01T00:00:00Z",
            }
        )
        claims = ClaimRecords(store.conn)
        claims.insert(
            "claim_1",
            workspace_id=workspace,
            resource="README.md",
            identity_id=owner["id"],
            holder_name="owner",
            purpose="edit",
            created_at="2026-01-01T00:00:00Z",
            expires_at="9999-01-01T00:00:00Z",
        )
        distill = DistillRecords(store.conn)
        distill.insert_job(
            "djob_1",
            suite_id=suite["id"],
            slug="demo-suite",
            identity_id=owner["id"],
            total_chunks=1,
            documents=1,
            created_at="2026-01-01T00:00:00Z",
        )
        mem1 = Mem1Records(store.conn)
        mem1.add_message("msg_1", "mem1:u:s", "u", "s", "sess", "user", "hello", "2026-01-01T00:00:00+00:00")
        store.memories.create(
            NewMemory("mem1:u:s", "summary", "Session sess", "mem1", provenance={"message_id": "msg_1"})
        )

    _check(memory, MemoryRecord)
    _check(store.amp.pack("ctxp_1"), ContextPackRecord)
    _check(store.amp.receipt("amp_receipt_1"), ReceiptRecord)
    _check(card, SummaryCardRecord)
    _check(store.amp.brief("brief_1"), MemoryBriefRecord)
    events = (
        store.amp.event_for_memory(memory["id"]),
        *store.amp.events("brief_1"),
        store.amp.handoff_event(workspace, "brief_1"),
        store.amp.latest_handoff(workspace, "demo"),
    )
    _check_all(events, BriefEventRecord)
    assert all(e is not None and e["payload"] == {"next": "review"} for e in events)
    _check_all(store.amp.recent_events(workspace, "demo", 5), RecentBriefEvent)
    _check(store.amp.run("arun_1"), AdaptiveRunRecord)
    _check_all(
        (binding, store.projects.binding(binding["id"]), *store.projects.bindings(workspace)),
        ProjectBindingRecord,
    )
    _check(profile, RuntimeProfileRecord)
    assert profile["supports_files"] is True and profile["capabilities"] == {"supports_mcp": True}
    _check_all(store.startup.active_plans(), StartupPlanRecord)
    _check_all((store.startup.plan("splan_1"), *store.startup.plans()), StartupPlanRecord)
    _check_all(store.startup.regions("/tmp/demo").values(), ManagedRegion)
    _check_all(store.startup.hook_runs(binding["id"], "codex").values(), HookRunRecord)
    _check_all(store.suites.catalog(None, 5), SuiteRecord)
    _check_all((suite, store.suites.suite("demo-suite"), *store.suites.created_by(None)), SuiteRecord)
    _check_all(store.suites.versions("demo-suite"), SuiteVersionSummary)
    _check(store.suites.version_info(suite), SuiteVersionRecord)
    stored = store.suites.version("demo-suite")
    _check(stored, StoredSuiteVersion)
    assert stored["verbatim"] == 0 and stored["files"] == {"MEMORY.md": "- a fact\n"}
    entries = store.upstream.entries()
    assert {e["operation"] for e in entries} == {"created", "suite_sync"}
    _check_all(entries, OutboxEntryRecord)
    _check_all(store.upstream.due("9999", 10), OutboxEntryRecord)
    assert next(e["body"] for e in entries if e["operation"] == "suite_sync") == {"events": []}
    _check_all(
        (store.upstream.link(memory["id"]), store.upstream.link_by_upstream("mem_up")), UpstreamLinkRecord
    )
    _check_all(store.upstream.changes([workspace], 0, 10), ChangeRow)
    found_store = stores.get("memstore_1")
    _check_all((found_store, *stores.after("", 10)), MemoryStoreRecord)
    assert found_store is not None and found_store["metadata"] == {"team": "a"}
    (version,) = stores.versions("memstore_1", "", 10, document["id"])
    _check_all((version, *stores.versions("memstore_1", "", 10, None)), MemoryVersionRecord)
    assert stores.version("memstore_1", version["id"]) == version
    _check_all(store.memories.versions(document["id"]), MemoryVersionSummary)
    with store.transaction():
        _check(store.memories.redact_version(version["id"]), MemoryVersionRecord)
    _check_all(store.updates.acks(owner["id"]).values(), UpdateAckRecord)
    installed = store.suites.installed("imem_1")
    _check(installed, InstalledOpenMemoryRecord)
    assert installed is not None and installed["memory_ids"] == [memory["id"]]
    assert installed["retrieval_test"]["passed"] is True
    (lens,) = store.suites.installed_lenses(workspace, "demo")
    _check(lens, InstalledLens)
    assert lens["facts"] == ["the handoff"]
    _check_all(
        (
            claims.held(workspace, "README.md", "2026"),
            claims.get("claim_1"),
            *claims.active(workspace, "2026"),
        ),
        ClaimRecord,
    )
    _check_all((distill.job("djob_1"), *distill.jobs("demo-suite")), DistillJobRecord)
    _check_all(
        (mem1.message("msg_1"), mem1.message("msg_1", "u", "s")),
        Mem1MessageRecord,
    )
    _check_all(mem1.session_lines("mem1:u:s", "sess", "msg_1"), SessionLine)
    (page,) = mem1.page("mem1:u:s", ("summary",), 10, 0)
    _check(page, Mem1PageRecord)
    assert page["provenance"] == {"message_id": "msg_1"}
    names = NamespaceRecords(store.conn)
    _check_all(names.workspaces(), NamedWorkspace)
    _check_all(names.memory_stores(), NamedMemoryStore)
    _check_all(names.suites(), NamedSuite)
