"""Identities (the owner and agents), their hashed API keys, pairing codes and workspaces."""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict, cast

from state.db import Connection
from state.errors import Conflict, Gone, InvalidRequest, NotFound
from state.ids import iso_from_datetime, new_id, now_iso, parse_iso
from state.json_text import loads

OWNER_SCOPES = ("owner", "memory:read", "memory:write", "agent:sync", "skill:install", "catalog:read")
AGENT_SCOPES = ("memory:read", "memory:write", "agent:sync", "skill:install", "catalog:read")
# Editing, deleting and redacting records through the sync extension is for downstream
# daemons acting for their person, not for every agent: pairing a memorycloud_companion
# grants it, other agents only when the owner asks (--scopes).
SYNC_SCOPE = "sync:write"
DAEMON_RUNTIME = "memorycloud_companion"
KNOWN_SCOPES = frozenset(OWNER_SCOPES) | {SYNC_SCOPE}


def default_scopes(runtime: str) -> list[str]:
    scopes = list(AGENT_SCOPES)
    if normalize_runtime(runtime) == DAEMON_RUNTIME:
        scopes.append(SYNC_SCOPE)
    return scopes


def hash_key(key: str) -> str:
    """Keys are 256-bit random strings, so one sha256 is enough (no password stretching)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class IdentityRecord(TypedDict):
    """A row of identities (the owner or an agent), its scopes decoded from JSON, plus the
    computed ``auth_type``."""

    id: str
    name: str
    kind: str  # owner | agent
    runtime: str | None  # normalized (claude_code, codex, ...); None for the owner
    scopes: list[str]
    workspace_id: str | None  # the workspace an agent is bound to; the owner's is the default one
    created_at: str
    disabled_at: str | None
    auth_type: str  # computed from kind: human (the owner) | agent


class WorkspaceRecord(TypedDict):
    """A row of workspaces."""

    id: str
    name: str
    owner_identity_id: str | None
    is_default: int  # 1 for the one default workspace, else 0
    created_at: str


def _identity(row: Any) -> IdentityRecord:
    identity = dict(row)
    identity["scopes"] = loads(identity["scopes"])
    identity["auth_type"] = "human" if identity["kind"] == "owner" else "agent"
    return cast(IdentityRecord, identity)


def _workspace(row: Any) -> WorkspaceRecord:
    return cast(WorkspaceRecord, dict(row))


def normalize_runtime(runtime: str) -> str:
    """'Claude Code' -> 'claude_code'; a few common aliases are folded."""
    cleaned = "".join(c if c.isalnum() else "_" for c in runtime.strip().lower()).strip("_")
    aliases = {"claude": "claude_code", "gemini": "gemini_cli", "": "generic"}
    return aliases.get(cleaned, cleaned)


class IdentityRepository:
    """Who may talk to the daemon, and with which key."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    # -- workspaces --------------------------------------------------------------------

    def default_workspace(self) -> WorkspaceRecord:
        row = self.conn.execute("select * from workspaces where is_default = 1").fetchone()
        if row is None:
            raise NotFound("no default workspace yet: the daemon creates it on first start")
        return _workspace(row)

    def workspace(self, workspace_id: str) -> WorkspaceRecord:
        row = self.conn.execute("select * from workspaces where id = ?", (workspace_id,)).fetchone()
        if row is None:
            raise NotFound(f"workspace {workspace_id} not found")
        return _workspace(row)

    def workspaces(self) -> list[WorkspaceRecord]:
        return [_workspace(r) for r in self.conn.execute("select * from workspaces order by created_at")]

    def create_workspace(self, name: str, *, owner_id: str | None, default: bool = False) -> WorkspaceRecord:
        workspace_id = new_id("wsp_")
        self.conn.execute(
            "insert into workspaces (id, name, owner_identity_id, is_default, created_at) values (?,?,?,?,?)",
            (workspace_id, name, owner_id, int(default), now_iso()),
        )
        return self.workspace(workspace_id)

    def server_secret(self) -> bytes:
        """A secret that every process serving this store shares and nobody outside it knows
        (what registration challenges are signed with): the stored digest of the owner's
        oldest key in use; the key itself is stored nowhere. It changes when that key is
        revoked (challenges issued before then are refused: the client asks again)."""
        row = self.conn.execute(
            "select k.key_hash from api_keys k join identities i on i.id = k.identity_id"
            " where i.kind = 'owner' and k.revoked_at is null order by k.created_at, k.id limit 1"
        ).fetchone()
        if row is None:
            raise Conflict("the owner has no key yet: start the daemon once (it makes one)")
        return hashlib.sha256(b"memorycloud-server-secret:" + row[0].encode()).digest()

    # -- identities --------------------------------------------------------------------

    def owner(self) -> IdentityRecord | None:
        row = self.conn.execute("select * from identities where kind = 'owner'").fetchone()
        return _identity(row) if row else None

    def get(self, identity_id: str) -> IdentityRecord:
        row = self.conn.execute("select * from identities where id = ?", (identity_id,)).fetchone()
        if row is None:
            raise NotFound(f"identity {identity_id} not found")
        return _identity(row)

    def agents(self) -> list[IdentityRecord]:
        rows = self.conn.execute(
            "select * from identities where kind = 'agent' order by created_at"
        ).fetchall()
        return [_identity(r) for r in rows]

    def create_owner(self, name: str = "owner") -> tuple[IdentityRecord, str]:
        """Create the owner, the default workspace and the owner key (returned once)."""
        if self.owner() is not None:
            raise Conflict("the owner already exists")
        identity_id = new_id("idn_")
        now = now_iso()
        self.conn.execute(
            "insert into identities (id, name, kind, runtime, scopes, created_at)"
            " values (?, ?, 'owner', null, ?, ?)",
            (identity_id, name, json.dumps(list(OWNER_SCOPES)), now),
        )
        workspace = self.create_workspace("Personal", owner_id=identity_id, default=True)
        self.conn.execute(
            "update identities set workspace_id = ? where id = ?", (workspace["id"], identity_id)
        )
        key = self.issue_key(identity_id, prefix="mco_")
        return self.get(identity_id), key

    def create_agent(
        self,
        name: str,
        runtime: str,
        *,
        scopes: list[str] | None = None,
        workspace_id: str | None = None,
    ) -> tuple[IdentityRecord, str]:
        """Create an agent identity and return it with its new key (shown once)."""
        name = name.strip()
        if not name or len(name) > 80:
            raise InvalidRequest("agent name must be 1-80 characters")
        if self.conn.execute(
            "select 1 from identities where kind = 'agent' and name = ? and disabled_at is null",
            (name,),
        ).fetchone():
            raise Conflict(f"an agent named {name!r} already exists")
        scopes = list(AGENT_SCOPES) if scopes is None else scopes
        unknown = [s for s in scopes if s not in KNOWN_SCOPES or s == "owner"]
        if unknown:
            raise InvalidRequest(f"unknown or forbidden scopes for an agent: {', '.join(unknown)}")
        workspace_id = workspace_id or self.default_workspace()["id"]
        self.workspace(workspace_id)
        identity_id = new_id("idn_")
        self.conn.execute(
            "insert into identities (id, name, kind, runtime, scopes, workspace_id, created_at)"
            " values (?, ?, 'agent', ?, ?, ?, ?)",
            (identity_id, name, normalize_runtime(runtime), json.dumps(scopes), workspace_id, now_iso()),
        )
        return self.get(identity_id), self.issue_key(identity_id, prefix="mca_")

    def disable_agent(self, identity_id: str) -> None:
        identity = self.get(identity_id)
        if identity["kind"] != "agent":
            raise InvalidRequest("only agents can be disabled")
        now = now_iso()
        self.conn.execute("update identities set disabled_at = ? where id = ?", (now, identity_id))
        self.conn.execute(
            "update api_keys set revoked_at = ? where identity_id = ? and revoked_at is null",
            (now, identity_id),
        )

    # -- keys --------------------------------------------------------------------------

    def issue_key(self, identity_id: str, *, prefix: str) -> str:
        key = prefix + secrets.token_urlsafe(32)
        self.conn.execute(
            "insert into api_keys (id, identity_id, key_hash, key_prefix, created_at) values (?,?,?,?,?)",
            (new_id("key_"), identity_id, hash_key(key), key[:10], now_iso()),
        )
        return key

    def identity_for_key(self, key: str) -> IdentityRecord | None:
        """The active identity owning ``key``, or None (unknown, revoked or disabled)."""
        row = self.conn.execute(
            "select i.* from api_keys k join identities i on i.id = k.identity_id"
            " where k.key_hash = ? and k.revoked_at is null and i.disabled_at is null",
            (hash_key(key),),
        ).fetchone()
        return _identity(row) if row else None

    # -- pairing (agent self-registration, approved by the owner) ------------------------

    def create_pairing_code(
        self,
        name: str,
        runtime: str,
        *,
        ttl_minutes: int = 10,
        scopes: list[str] | None = None,
        workspace_id: str | None = None,
    ) -> dict[str, Any]:
        """A one-time code the owner hands to an agent; the agent exchanges it for a key.
        ``workspace_id`` is the workspace the agent joins (default: the default workspace)."""
        if workspace_id is not None:
            self.workspace(workspace_id)
        code = "-".join(secrets.token_hex(2).upper() for _ in range(3))  # e.g. 4F2A-9C01-77DE
        expires = datetime.now(UTC) + timedelta(minutes=ttl_minutes)
        self.conn.execute(
            "insert into pairing_codes (code_hash, name, runtime, scopes, created_at, expires_at,"
            " workspace_id) values (?,?,?,?,?,?,?)",
            (
                hash_key(code),
                name,
                normalize_runtime(runtime),
                json.dumps(scopes or default_scopes(runtime)),
                now_iso(),
                iso_from_datetime(expires),
                workspace_id,
            ),
        )
        return {
            "pairing_code": code,
            "name": name,
            "runtime": normalize_runtime(runtime),
            "workspace_id": workspace_id or self.default_workspace()["id"],
            "expires_at": iso_from_datetime(expires),
        }

    def find_workspace(self, name_or_id: str) -> WorkspaceRecord:
        row = self.conn.execute(
            "select * from workspaces where id = ? or name = ? order by created_at limit 1",
            (name_or_id, name_or_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"no workspace named {name_or_id!r}")
        return _workspace(row)

    def redeem_pairing_code(self, code: str) -> tuple[IdentityRecord, str]:
        """Exchange a pairing code for a new agent identity and key (once)."""
        row = self.conn.execute(
            "select * from pairing_codes where code_hash = ?", (hash_key(code.strip().upper()),)
        ).fetchone()
        if row is None:
            raise NotFound("unknown pairing code: ask the owner to run `memorycloud agent pair`")
        if row["used_at"]:
            raise Gone("this pairing code was already used")
        if parse_iso(row["expires_at"]) <= datetime.now(UTC):
            raise Gone("this pairing code has expired: ask the owner for a new one")
        identity, key = self.create_agent(
            row["name"], row["runtime"], scopes=loads(row["scopes"]), workspace_id=row["workspace_id"]
        )
        self.conn.execute(
            "update pairing_codes set used_at = ?, identity_id = ? where code_hash = ?",
            (now_iso(), identity["id"], row["code_hash"]),
        )
        return identity, key
