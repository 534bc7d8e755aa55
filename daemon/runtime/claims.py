"""Collaboration claims (the collaboration_claim memory tool): before several agents write a
shared resource, one claims it for a while; a second claimant learns who holds it and until
when. Claims are released or simply expire."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from daemon.runtime.access import resolve_workspace
from state.claim_records import ClaimRecord, ClaimRecords
from state.errors import Conflict, NotFound
from state.identities import IdentityRecord
from state.ids import iso_from_datetime, new_id, now_iso
from state.store import Store


class ClaimHeld(Conflict):
    code = "claim_held"


def _public(row: ClaimRecord) -> dict[str, Any]:
    return {
        "schema": "amp.collaboration-claim.v1",
        "claim_id": row["id"],
        "workspace_id": row["workspace_id"],
        "resource": row["resource"],
        "holder": {"identity_id": row["identity_id"], "name": row["holder_name"]},
        "purpose": row["purpose"],
        "created_at": row["created_at"],
        "expires_at": row["expires_at"],
        "released_at": row["released_at"],
    }


class ClaimService:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.records = ClaimRecords(store.conn)

    def claim(self, identity: IdentityRecord, body: dict[str, Any]) -> dict[str, Any]:
        workspace = resolve_workspace(self.store, identity, body.get("workspace_id"))
        resource = body["resource"].strip()
        expires = iso_from_datetime(datetime.now(UTC) + timedelta(seconds=body["ttl_seconds"]))
        with self.store.transaction():
            held = self.records.held(workspace["id"], resource, now_iso())
            if held is not None and held["identity_id"] != identity["id"]:
                raise ClaimHeld(
                    f"{resource!r} is claimed by {held['holder_name']} until {held['expires_at']}",
                    details={
                        "holder": held["holder_name"],
                        "holder_id": held["identity_id"],
                        "expires_at": held["expires_at"],
                        "claim_id": held["id"],
                    },
                )
            if held is not None:  # the holder claims again: extend
                self.records.extend(held["id"], expires, body.get("purpose") or held["purpose"])
                claim_id = held["id"]
            else:
                claim_id = new_id("claim_")
                self.records.insert(
                    claim_id,
                    workspace_id=workspace["id"],
                    resource=resource,
                    identity_id=identity["id"],
                    holder_name=identity["name"],
                    purpose=body.get("purpose") or "",
                    created_at=now_iso(),
                    expires_at=expires,
                )
        return self.get(identity, claim_id)

    def get(self, identity: IdentityRecord, claim_id: str) -> dict[str, Any]:
        row = self.records.get(claim_id)
        if row is None or (
            identity["kind"] != "owner" and row["workspace_id"] != identity.get("workspace_id")
        ):
            raise NotFound(f"claim {claim_id} not found")
        return _public(row)

    def release(self, identity: IdentityRecord, claim_id: str) -> dict[str, Any]:
        claim = self.get(identity, claim_id)
        if identity["kind"] != "owner" and claim["holder"]["identity_id"] != identity["id"]:
            raise Conflict(
                f"claim {claim_id} is held by {claim['holder']['name']}; only the holder"
                " (or the owner) can release it"
            )
        with self.store.transaction():
            self.records.release(claim_id, now_iso())
        return self.get(identity, claim_id)

    def active(
        self, identity: IdentityRecord, workspace_id: str | None, resource: str | None
    ) -> list[dict[str, Any]]:
        workspace = resolve_workspace(self.store, identity, workspace_id)
        return [_public(r) for r in self.records.active(workspace["id"], now_iso(), resource)]
