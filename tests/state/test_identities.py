"""Identity and workspace records: their keys are the tables' columns (plus auth_type)."""

from __future__ import annotations

import pytest

from state.identities import IdentityRecord, WorkspaceRecord
from state.store import Store
from tests.state.test_records import table_columns

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines


def test_the_records_name_every_column_of_their_table(store: Store) -> None:
    """A migration that adds a column to identities or workspaces adds it to the record."""
    assert set(IdentityRecord.__annotations__) == table_columns(store, "identities") | {"auth_type"}
    assert set(WorkspaceRecord.__annotations__) == table_columns(store, "workspaces")


def test_every_read_returns_the_records_keys(store: Store) -> None:
    with store.transaction():
        if store.identities.owner() is None:
            store.identities.create_owner()
        agent, _ = store.identities.create_agent("reader", "Claude Code", scopes=["memory:read"])
    owner = store.identities.owner()
    assert owner is not None
    for identity in (owner, agent, store.identities.get(agent["id"]), *store.identities.agents()):
        assert set(identity) == set(IdentityRecord.__annotations__)
    assert owner["auth_type"] == "human" and owner["runtime"] is None
    assert agent["auth_type"] == "agent" and agent["runtime"] == "claude_code"
    assert agent["scopes"] == ["memory:read"]
    assert agent["workspace_id"] == store.identities.default_workspace()["id"]
    for workspace in (store.identities.default_workspace(), *store.identities.workspaces()):
        assert set(workspace) == set(WorkspaceRecord.__annotations__)
