"""Rows of collaboration claims (the collaboration_claim memory tool). Plain data access; who
may claim, extend and release is decided in daemon/runtime/claims.py, which builds this over
the store's connection."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from state.db import Connection


class ClaimRecord(TypedDict):
    """A row of claims: who holds a workspace's resource, and until when."""

    id: str
    workspace_id: str
    resource: str
    identity_id: str
    holder_name: str
    purpose: str
    created_at: str
    expires_at: str
    released_at: str | None


def _claim(row: Any) -> ClaimRecord:
    return cast(ClaimRecord, dict(row))


class ClaimRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def held(self, workspace_id: str, resource: str, now: str) -> ClaimRecord | None:
        """The newest claim on ``resource`` neither released nor expired at ``now``, or None."""
        row = self.conn.execute(
            "select * from claims where workspace_id = ? and resource = ? and released_at is null"
            " and expires_at > ? order by created_at desc limit 1",
            (workspace_id, resource, now),
        ).fetchone()
        return _claim(row) if row is not None else None

    def extend(self, claim_id: str, expires_at: str, purpose: str) -> None:
        """The holder claims again: a new expiry and purpose."""
        self.conn.execute(
            "update claims set expires_at = ?, purpose = ? where id = ?", (expires_at, purpose, claim_id)
        )

    def insert(
        self,
        claim_id: str,
        *,
        workspace_id: str,
        resource: str,
        identity_id: str,
        holder_name: str,
        purpose: str,
        created_at: str,
        expires_at: str,
    ) -> None:
        """A new claim."""
        self.conn.execute(
            "insert into claims (id, workspace_id, resource, identity_id, holder_name,"
            " purpose, created_at, expires_at) values (?,?,?,?,?,?,?,?)",
            (claim_id, workspace_id, resource, identity_id, holder_name, purpose, created_at, expires_at),
        )

    def get(self, claim_id: str) -> ClaimRecord | None:
        """One claim's row, or None."""
        row = self.conn.execute("select * from claims where id = ?", (claim_id,)).fetchone()
        return _claim(row) if row is not None else None

    def release(self, claim_id: str, now: str) -> None:
        """Released at ``now``; a claim released before keeps its first release time."""
        self.conn.execute(
            "update claims set released_at = coalesce(released_at, ?) where id = ?", (now, claim_id)
        )

    def active(self, workspace_id: str, now: str, resource: str | None = None) -> list[ClaimRecord]:
        """The workspace's claims neither released nor expired at ``now`` (on ``resource``
        only, if given), oldest first."""
        query = "select * from claims where workspace_id = ? and released_at is null and expires_at > ?"
        params: list[Any] = [workspace_id, now]
        if resource:
            query, params = query + " and resource = ?", [*params, resource]
        return [_claim(r) for r in self.conn.execute(query + " order by created_at", params)]
