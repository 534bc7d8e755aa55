"""Startup-item install plans, the managed regions written for them, and the conflicts
inbox (later dialects add their own conflict kinds to the same table)."""

SQL = """
create table startup_plans (
    id text primary key,                 -- splan_...
    binding_id text not null references project_bindings(id) on delete cascade,
    runtime text not null,
    repo_root text not null,
    credential_ref text not null,
    status text not null check (status in ('pending_approval', 'rejected', 'conflict', 'applied',
                                           'installed', 'fallback_active', 'removed')),
    body text not null,                  -- the amp.startup-item-install-plan.v1 JSON
    signature text not null,
    created_by text references identities(id) on delete set null,
    decided_by text references identities(id) on delete set null,
    created_at text not null,
    decided_at text,
    applied_at text,
    confirmed_at text,
    removed_at text,
    last_refresh_at text
);
create index startup_plans_binding on startup_plans (binding_id, status);

create table managed_regions (
    id integer primary key,
    repo_root text not null,
    path text not null,
    region_id text not null,
    record text not null,                -- startup_items.installer.FileRecord as JSON
    owners text not null,                -- JSON list of plan ids sharing this region
    updated_at text not null,
    unique (repo_root, path, region_id)
);

create table conflicts (
    id text primary key,                 -- conf_...
    kind text not null,                  -- startup_item_drift, ...
    subject_id text,                     -- e.g. the plan id
    path text,
    detail text not null,                -- JSON
    status text not null default 'open' check (status in ('open', 'resolved')),
    created_at text not null,
    resolved_at text,
    resolution text
);
create index conflicts_open on conflicts (status, created_at);
"""
