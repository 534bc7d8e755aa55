"""Upstream sync: the outbox of local changes, links between local and upstream records, the
sync state, the changes feed a daemon in the cloud role serves, and idempotent replays.

Triggers fill the outbox and the change log, so every writer in every dialect is covered in
the same transaction as its write, and nothing a writer forgets can be lost.
"""

SQL = r"""
create table upstream_state (
    key text primary key,                -- url, credential_ref, identity_id, local_workspace_id, ...
    value text not null
);

-- Local changes waiting to reach the upstream. Rows reference the record; the body is built
-- when sent, so a redaction made meanwhile is honoured and no content is copied here.
create table upstream_outbox (
    seq integer primary key autoincrement,
    memory_id text not null,
    version integer not null,
    operation text not null,             -- created | updated | deleted | reverted | redacted
    content_sha256 text,                 -- the redacted content, for 'redacted'
    body text,                           -- the original request, for 'suite_sync' (memory_id = suite:SLUG)
    idempotency_key text not null default (lower(hex(randomblob(16)))),
    status text not null default 'pending' check (status in
        ('pending', 'sent', 'interrupted', 'held', 'superseded', 'skipped', 'discarded')),
    attempts integer not null default 0,
    next_attempt_at text,
    last_error text,
    upstream_sync_intent_id text,
    result text,
    created_at text not null,
    finished_at text
);
create index upstream_outbox_status on upstream_outbox (status, seq);
create index upstream_outbox_memory on upstream_outbox (memory_id, status);

create trigger upstream_outbox_on_version after insert on memory_versions
when exists (select 1 from upstream_state where key = 'local_workspace_id')
begin
    insert into upstream_outbox (memory_id, version, operation, created_at)
    select new.memory_id, new.version, new.operation, new.created_at
    from memory_records r where r.id = new.memory_id and (
        r.namespace = (select value from upstream_state where key = 'local_workspace_id')
        or r.namespace like 'memstore\_%' escape '\');
end;

create trigger upstream_outbox_on_redaction after update of redacted_at on memory_versions
when new.redacted_at is not null and old.redacted_at is null
     and exists (select 1 from upstream_state where key = 'local_workspace_id')
begin
    insert into upstream_outbox (memory_id, version, operation, content_sha256, created_at)
    select new.memory_id, new.version, 'redacted', new.content_sha256, new.redacted_at
    from memory_records r where r.id = new.memory_id and (
        r.namespace = (select value from upstream_state where key = 'local_workspace_id')
        or r.namespace like 'memstore\_%' escape '\');
end;

-- Which upstream object a local one is (memory records, and briefs created upstream to carry
-- brief events). The versions and digest are the base of the three-way conflict check.
create table upstream_links (
    local_id text primary key,
    upstream_id text not null unique,
    kind text not null,                  -- memory | delta | brief
    upstream_version integer,
    local_version integer,
    synced_sha256 text,
    updated_at text not null
);

-- The changes feed served to downstream daemons (cloud role): one row per new version or
-- redaction, in commit order.
create table sync_changelog (
    seq integer primary key autoincrement,
    memory_id text not null,
    version integer not null,
    change text not null,                -- version | redaction
    content_sha256 text,
    created_at text not null
);

create trigger sync_changelog_on_version after insert on memory_versions
begin
    insert into sync_changelog (memory_id, version, change, content_sha256, created_at)
    values (new.memory_id, new.version, 'version', new.content_sha256, new.created_at);
end;

create trigger sync_changelog_on_redaction after update of redacted_at on memory_versions
when new.redacted_at is not null and old.redacted_at is null
begin
    insert into sync_changelog (memory_id, version, change, content_sha256, created_at)
    values (new.memory_id, new.version, 'redaction', new.content_sha256, new.redacted_at);
end;

-- Responses to writes sent with an Idempotency-Key: a retry gets the first answer again.
create table idempotent_responses (
    identity_id text not null,
    key text not null,
    status integer not null,
    body text not null,
    created_at text not null,
    primary key (identity_id, key)
);

-- A pairing code may name the workspace its agent joins (a team's shared workspace).
alter table pairing_codes add column workspace_id text;
"""
