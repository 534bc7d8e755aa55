"""Platform updates (shipped, local, upstream), per-agent acks at each update's own version,
and sync intents: writes held back by the update gate, kept whole and resumable."""

SQL = """
create table platform_updates (
    id text primary key,                 -- upd_...
    version text not null,               -- the update's own version
    severity text not null check (severity in ('required', 'recommended')),
    title text not null,
    summary text not null,
    requires_repull text not null default '[]',
    next_actions text not null default '[]',
    source text not null check (source in ('builtin', 'local', 'upstream')),
    published_at text not null,          -- when this installation first knew it
    published_by text references identities(id) on delete set null,
    withdrawn_at text
);

create table update_acks (
    identity_id text not null references identities(id) on delete cascade,
    update_id text not null references platform_updates(id) on delete cascade,
    update_version text not null,
    seen_version text,                   -- what the client reported, kept for audit
    acked_by text references identities(id) on delete set null,
    acked_at text not null,
    primary key (identity_id, update_id, update_version)
);

create table sync_intents (
    id text primary key,                 -- syncint_...
    identity_id text not null references identities(id) on delete cascade,
    endpoint text not null,              -- memory_brief_event, adaptive_memory_submit, ...
    method text not null,
    path text not null,
    path_params text not null,
    body text not null,                  -- the original write, in full
    importance integer not null,
    blocking_updates text not null,      -- JSON [{update_id, version}]
    status text not null check (status in ('blocked', 'resumed', 'discarded', 'expired')),
    result text,
    created_at text not null,
    expires_at text not null,
    finished_at text
);
create index sync_intents_identity on sync_intents (identity_id, status);
create index sync_intents_expiry on sync_intents (status, expires_at);
"""
