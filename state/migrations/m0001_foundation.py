"""Identities, keys, workspaces, projects, memory records + versions, AMP runtime tables."""

SQL = """
create table identities (
    id text primary key,                 -- idn_...
    name text not null,
    kind text not null check (kind in ('owner', 'agent')),
    runtime text,
    scopes text not null,                -- JSON list
    workspace_id text,
    created_at text not null,
    disabled_at text
);

create table api_keys (
    id text primary key,                 -- key_...
    identity_id text not null references identities(id) on delete cascade,
    key_hash text not null unique,       -- sha256 hex of the whole key
    key_prefix text not null,            -- first characters, for display only
    created_at text not null,
    last_used_at text,
    revoked_at text
);

create table pairing_codes (
    code_hash text primary key,
    name text not null,
    runtime text not null,
    scopes text not null,
    created_at text not null,
    expires_at text not null,
    used_at text,
    identity_id text references identities(id) on delete set null
);

create table workspaces (
    id text primary key,                 -- wsp_...
    name text not null,
    owner_identity_id text references identities(id) on delete set null,
    is_default integer not null default 0,
    created_at text not null
);

create table runtime_profiles (
    id text primary key,                 -- rtp_...
    identity_id text not null references identities(id) on delete cascade,
    runtime text not null,
    repo_root text not null default '',
    git_remote text,
    supports_files integer not null default 1,
    capabilities text not null default '{}',
    created_at text not null,
    updated_at text not null,
    unique (identity_id, runtime, repo_root)
);

create table project_bindings (
    id text primary key,                 -- pbind_...
    workspace_id text not null references workspaces(id) on delete cascade,
    project_key text not null,
    repo_root text,
    git_remote text,
    runtime text,
    created_by text references identities(id) on delete set null,
    created_at text not null,
    updated_at text not null,
    unique (workspace_id, project_key)
);

create table memory_records (
    seq integer primary key,             -- rowid shared with the FTS and vector indexes
    id text not null unique,             -- mem_...
    namespace text not null,             -- wsp_..., memstore_..., or mem1 user/scope
    project_key text,
    path text,
    kind text not null,
    title text not null default '',
    content text not null,
    importance integer not null default 3,
    triggers text not null default '[]', -- JSON list of retrieval triggers
    provenance text not null default '{}',
    source text not null,                -- memory_delta, adaptive_memory, brief_event, ...
    identity_id text references identities(id) on delete set null,
    content_sha256 text not null,
    version integer not null default 1,
    created_at text not null,
    updated_at text not null,
    deleted_at text
);
create index memory_records_ns_live on memory_records (namespace, deleted_at, importance desc, seq desc);
create index memory_records_ns_project on memory_records (namespace, project_key, deleted_at, seq desc);

create table memory_versions (
    id text primary key,                 -- memver_...
    memory_id text not null references memory_records(id) on delete cascade,
    version integer not null,
    operation text not null check (operation in ('created', 'updated', 'deleted', 'reverted')),
    title text not null default '',
    content text,                        -- null once redacted
    content_sha256 text not null,
    importance integer not null,
    identity_id text references identities(id) on delete set null,
    created_at text not null,
    redacted_at text,
    unique (memory_id, version)
);

-- Pre-tokenized text (see state/tokenize.py), rowid = memory_records.seq.
create virtual table memory_fts using fts5(tokens, tokenize = 'unicode61 remove_diacritics 2');

-- Which embedder built the vector index; the index is rebuilt when this changes.
create table vector_index_meta (
    id integer primary key check (id = 1),
    embedder text not null,
    dimension integer not null,
    built_at text not null
);

create table memory_briefs (
    id text primary key,                 -- brief_...
    identity_id text references identities(id) on delete set null,
    workspace_id text not null references workspaces(id) on delete cascade,
    project_key text,
    task text not null,
    request text not null,               -- JSON of the request
    brief_markdown text not null,
    source_counts text not null,
    context_pack_id text,
    receipt_id text,
    created_at text not null
);

create table brief_events (
    id text primary key,                 -- bevt_...
    brief_id text not null references memory_briefs(id) on delete cascade,
    event_type text not null,
    summary text not null,
    importance integer not null,
    payload text not null default '{}',
    identity_id text references identities(id) on delete set null,
    memory_id text,
    delta_id text,
    created_at text not null
);
create index brief_events_brief on brief_events (brief_id, created_at);

create table context_packs (
    id text primary key,                 -- ctxp_...
    identity_id text references identities(id) on delete set null,
    workspace_id text not null references workspaces(id) on delete cascade,
    project_key text,
    project_binding_id text,
    runtime text,
    reason text,
    body text not null,                  -- the full amp.context-pack.v1 JSON, as returned
    created_at text not null
);

create table receipts (
    id text primary key,                 -- amp_receipt_...
    context_pack_id text not null references context_packs(id) on delete cascade,
    identity_id text references identities(id) on delete cascade,
    workspace_id text not null,
    project_key text,
    summary_sha256 text not null,
    issued_at text not null,
    expires_at text not null,
    verified_at text,
    last_used_at text
);

create table memory_deltas (
    id text primary key,                 -- mdelta_...
    receipt_id text,
    context_pack_id text,
    identity_id text references identities(id) on delete set null,
    workspace_id text not null,
    project_key text,
    delta_type text not null,
    summary text not null,
    why_it_matters text,
    triggers text not null default '[]',
    importance integer not null,
    source text not null,                -- agent | brief_event
    source_id text,
    memory_id text,
    created_at text not null
);
create index memory_deltas_ws on memory_deltas (workspace_id, created_at);

create table summary_cards (
    id text primary key,                 -- card_...
    workspace_id text not null,
    project_key text,
    source_type text not null,
    source_id text not null,
    title text not null,
    body text not null,
    importance integer not null,
    memory_id text,
    created_at text not null
);
create index summary_cards_ws on summary_cards (workspace_id, created_at);

create table adaptive_runs (
    id text primary key,                 -- arun_...
    identity_id text references identities(id) on delete set null,
    workspace_id text not null references workspaces(id) on delete cascade,
    project_key text,
    task text not null,
    request text not null,
    selection text not null,             -- JSON: chosen memory forms and the form to fill
    status text not null check (status in ('selected', 'submitted')),
    created_at text not null,
    submitted_at text,
    memory_ids text not null default '[]'
);
"""
