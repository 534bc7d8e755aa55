"""Rows of collaboration claims (the collaboration_claim memory tool). Plain data access; who
may claim, extend and release is decided in daemon/runtime/claims.py, which builds this over
the store's connection."""

from __future__ import annotations

from typing import Any

from state.db import Connection


class ClaimRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def held(self, workspace_id: str, resource: str, now: str) -> Any:
        """The newest claim on ``resource`` neither released nor expired at ``now``, or None."""
        return self.conn.execute(
            "select * from claims where workspace_id = ? and resource = ? and released_at is null"
            " and expires_at > ? order by created_at desc limit 1",
            (workspace_id, resource, now),
        ).fetchone()

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

    def get(self, claim_id: str) -> Any:
        """One claim's row, or None."""
        return self.conn.execute("select * from claims where id = ?", (claim_id,)).fetchone()

    def release(self, claim_id: str, now: str) -> None:
        """Released at ``now``; a claim released before keeps its first release time."""
        self.conn.execute(
            "update claims set released_at = coalesce(released_at, ?) where id = ?", (now, claim_id)
        )

    def active(self, workspace_id: str, now: str, resource: str | None = None) -> list[Any]:
        """The workspace's claims neither released nor expired at ``now`` (on ``resource``
        only, if given), oldest first."""
        query = "select * from claims where workspace_id = ? and released_at is null and expires_at > ?"
        params: list[Any] = [workspace_id, now]
        if resource:
            query, params = query + " and resource = ?", [*params, resource]
        return self.conn.execute(query + " order by created_at", params).fetchall()
