"""Collaboration claims on shared resources, and persona/document distillation jobs."""

SQL = """
create table claims (
    id text primary key,                 -- claim_...
    workspace_id text not null references workspaces(id) on delete cascade,
    resource text not null,
    identity_id text not null references identities(id) on delete cascade,
    holder_name text not null,
    purpose text not null default '',
    created_at text not null,
    expires_at text not null,
    released_at text
);
create index claims_resource on claims (workspace_id, resource, released_at, expires_at);

create table distill_jobs (
    id text primary key,                 -- djob_...
    suite_id text not null references suites(id) on delete cascade,
    slug text not null,
    identity_id text references identities(id) on delete set null,
    status text not null check (status in ('queued', 'running', 'done', 'failed')),
    total_chunks integer not null default 0,
    done_chunks integer not null default 0,
    documents integer not null default 0,
    error text,
    created_at text not null,
    finished_at text
);
"""
