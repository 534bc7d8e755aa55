-- The store's tables on PostgreSQL: the SQLite engine's schema as its migrations leave it
-- (state/migrations, up to m0020), with PostgreSQL's types. Timestamps stay ISO 8601 text
-- and JSON stays text, as the repositories read and write them on both engines; every text
-- column compares and sorts byte-wise (collate "C"), as SQLite's default BINARY collation
-- does, so orders and cursors are the same on both. The full-text and vector indexes are
-- m0001's; the SQLite engine's index_builds table is kept for the code that reads it.

-- SQLite's functions that the repositories' SQL calls: instr, and the JSON ones for the paths it uses
-- ('$.key', '$.key.key'); json_extract answers text (SQLite's answers a JSON number as a
-- number: none of the SQL compares one).
create function json_extract(doc text, path text) returns text
language sql immutable parallel safe
as $$ select (doc::jsonb) #>> string_to_array(substr(path, 3), '.') $$;

create function instr(haystack text, needle text) returns integer
language sql immutable parallel safe
as $$ select strpos(haystack, needle) $$;

create function json_each(doc text) returns table (value text)
language sql immutable parallel safe
as $$ select jsonb_array_elements_text(doc::jsonb) $$;

create table identities (
    id text collate "C" primary key,                 -- idn_...
    name text collate "C" not null,
    kind text collate "C" not null check (kind in ('owner', 'agent')),
    runtime text collate "C",
    scopes text collate "C" not null,                -- JSON list
    workspace_id text collate "C",
    created_at text collate "C" not null,
    disabled_at text collate "C"
);

create table workspaces (
    id text collate "C" primary key,                 -- wsp_...
    name text collate "C" not null,
    owner_identity_id text collate "C" references identities(id) on delete set null,
    is_default bigint not null default 0,
    created_at text collate "C" not null
);

create table adaptive_runs (
    id text collate "C" primary key,                 -- arun_...
    identity_id text collate "C" references identities(id) on delete set null,
    workspace_id text collate "C" not null references workspaces(id) on delete cascade,
    project_key text collate "C",
    task text collate "C" not null,
    request text collate "C" not null,
    selection text collate "C" not null,             -- JSON: chosen memory forms and the form to fill
    status text collate "C" not null check (status in ('selected', 'submitted')),
    created_at text collate "C" not null,
    submitted_at text collate "C",
    memory_ids text collate "C" not null default '[]'
);

create table api_keys (
    id text collate "C" primary key,                 -- key_...
    identity_id text collate "C" not null references identities(id) on delete cascade,
    key_hash text collate "C" not null unique,       -- sha256 hex of the whole key
    key_prefix text collate "C" not null,            -- first characters, for display only
    created_at text collate "C" not null,
    last_used_at text collate "C",
    revoked_at text collate "C"
);

create table memory_briefs (
    id text collate "C" primary key,                 -- brief_...
    identity_id text collate "C" references identities(id) on delete set null,
    workspace_id text collate "C" not null references workspaces(id) on delete cascade,
    project_key text collate "C",
    task text collate "C" not null,
    request text collate "C" not null,               -- JSON of the request
    brief_markdown text collate "C" not null,
    source_counts text collate "C" not null,
    context_pack_id text collate "C",
    receipt_id text collate "C",
    created_at text collate "C" not null
, sources text collate "C" not null default '{}');

create table brief_events (
    id text collate "C" primary key,                 -- bevt_...
    brief_id text collate "C" not null references memory_briefs(id) on delete cascade,
    event_type text collate "C" not null,
    summary text collate "C" not null,
    importance bigint not null,
    payload text collate "C" not null default '{}',
    identity_id text collate "C" references identities(id) on delete set null,
    memory_id text collate "C",
    delta_id text collate "C",
    created_at text collate "C" not null
);

create table claims (
    id text collate "C" primary key,                 -- claim_...
    workspace_id text collate "C" not null references workspaces(id) on delete cascade,
    resource text collate "C" not null,
    identity_id text collate "C" not null references identities(id) on delete cascade,
    holder_name text collate "C" not null,
    purpose text collate "C" not null default '',
    created_at text collate "C" not null,
    expires_at text collate "C" not null,
    released_at text collate "C"
);

create table conflicts (
    id text collate "C" primary key,                 -- conf_...
    kind text collate "C" not null,                  -- startup_item_drift, ...
    subject_id text collate "C",                     -- e.g. the plan id
    path text collate "C",
    detail text collate "C" not null,                -- JSON
    status text collate "C" not null default 'open' check (status in ('open', 'resolved')),
    created_at text collate "C" not null,
    resolved_at text collate "C",
    resolution text collate "C"
);

create table context_packs (
    id text collate "C" primary key,                 -- ctxp_...
    identity_id text collate "C" references identities(id) on delete set null,
    workspace_id text collate "C" not null references workspaces(id) on delete cascade,
    project_key text collate "C",
    project_binding_id text collate "C",
    runtime text collate "C",
    reason text collate "C",
    body text collate "C" not null,                  -- the full amp.context-pack.v1 JSON, as returned
    created_at text collate "C" not null
);

create table suites (
    id text collate "C" primary key,                 -- suite_...
    slug text collate "C" not null unique,
    title text collate "C" not null,
    summary text collate "C" not null,
    latest_version text collate "C" not null,
    legacy bigint not null default 0,   -- imported from an archive without suite/manifest.json
    created_by text collate "C" references identities(id) on delete set null,
    created_at text collate "C" not null,
    updated_at text collate "C" not null
, visibility text collate "C" not null default 'public', persona_type text collate "C" not null default 'agent', license text collate "C" not null default '', tags text collate "C" not null default '[]', price_cents bigint not null default 0, install_count bigint not null default 0, download_count bigint not null default 0);

create table distill_jobs (
    id text collate "C" primary key,                 -- djob_...
    suite_id text collate "C" not null references suites(id) on delete cascade,
    slug text collate "C" not null,
    identity_id text collate "C" references identities(id) on delete set null,
    status text collate "C" not null check (status in ('queued', 'running', 'done', 'failed')),
    total_chunks bigint not null default 0,
    done_chunks bigint not null default 0,
    documents bigint not null default 0,
    error text collate "C",
    created_at text collate "C" not null,
    finished_at text collate "C"
);

create table idempotent_responses (
    identity_id text collate "C" not null,
    key text collate "C" not null,
    status bigint not null,
    body text collate "C" not null,
    created_at text collate "C" not null,
    primary key (identity_id, key)
);

create table index_builds (
    name text collate "C" primary key,
    built_with text collate "C",                     -- null: nothing built yet
    target text collate "C",
    cursor bigint not null default 0,
    done bigint not null default 0,
    started_at text collate "C",
    finished_at text collate "C"
);

create table installed_open_memories (
    id text collate "C" primary key,                 -- imem_...
    workspace_id text collate "C" not null references workspaces(id) on delete cascade,
    project_key text collate "C",
    suite_id text collate "C" not null references suites(id) on delete cascade,
    slug text collate "C" not null,
    version text collate "C" not null,
    title text collate "C" not null,
    provenance text collate "C" not null,
    archive_sha256 text collate "C" not null,
    memory_ids text collate "C" not null,            -- JSON list of the workspace memories it added
    conflict_ids text collate "C" not null,          -- JSON list of conflicts held for the person
    steps text collate "C" not null,                 -- JSON: the install order as carried out
    retrieval_test text collate "C" not null,        -- JSON
    installed_by text collate "C" references identities(id) on delete set null,
    installed_at text collate "C" not null
);

create table managed_regions (
    id bigint generated by default as identity primary key,
    repo_root text collate "C" not null,
    path text collate "C" not null,
    region_id text collate "C" not null,
    record text collate "C" not null,                -- startup_items.installer.FileRecord as JSON
    owners text collate "C" not null,                -- JSON list of plan ids sharing this region
    updated_at text collate "C" not null,
    unique (repo_root, path, region_id)
);

create table mem1_messages (
    seq bigint generated by default as identity primary key,
    id text collate "C" not null unique,             -- msg_...
    namespace text collate "C" not null,
    user_id text collate "C" not null,
    scope_id text collate "C" not null,
    session_id text collate "C" not null,
    role text collate "C" not null,
    content text collate "C" not null,
    timestamp text collate "C" not null              -- ISO 8601 with the local UTC offset (seed v1.1)
);

create table mem1_variables (
    namespace text collate "C" not null,
    name text collate "C" not null,
    value text collate "C",
    updated_at text collate "C" not null,
    primary key (namespace, name)
);

create table memory_deltas (
    id text collate "C" primary key,                 -- mdelta_...
    receipt_id text collate "C",
    context_pack_id text collate "C",
    identity_id text collate "C" references identities(id) on delete set null,
    workspace_id text collate "C" not null,
    project_key text collate "C",
    delta_type text collate "C" not null,
    summary text collate "C" not null,
    why_it_matters text collate "C",
    triggers text collate "C" not null default '[]',
    importance bigint not null,
    source text collate "C" not null,                -- agent | brief_event
    source_id text collate "C",
    memory_id text collate "C",
    created_at text collate "C" not null
);

create table memory_records (
    seq bigint generated by default as identity primary key,             -- rowid shared with the FTS and vector indexes
    id text collate "C" not null unique,             -- mem_...
    namespace text collate "C" not null,             -- wsp_..., memstore_..., or mem1 user/scope
    project_key text collate "C",
    path text collate "C",
    kind text collate "C" not null,
    title text collate "C" not null default '',
    content text collate "C" not null,
    importance bigint not null default 3,
    triggers text collate "C" not null default '[]', -- JSON list of retrieval triggers
    provenance text collate "C" not null default '{}',
    source text collate "C" not null,                -- memory_delta, adaptive_memory, brief_event, ...
    identity_id text collate "C" references identities(id) on delete set null,
    content_sha256 text collate "C" not null,
    version bigint not null default 1,
    created_at text collate "C" not null,
    updated_at text collate "C" not null,
    deleted_at text collate "C"
, metadata text collate "C" not null default '{}');

create table memory_stores (
    id text collate "C" primary key,                 -- memstore_...
    name text collate "C" not null,
    description text collate "C" not null default '',
    metadata text collate "C" not null default '{}',
    status text collate "C" not null default 'active' check (status in ('active', 'archived')),
    archived_at text collate "C",
    created_by text collate "C" references identities(id) on delete set null,
    created_at text collate "C" not null,
    updated_at text collate "C" not null
);

create table memory_versions (
    id text collate "C" primary key,                 -- memver_...
    memory_id text collate "C" not null references memory_records(id) on delete cascade,
    version bigint not null,
    operation text collate "C" not null check (operation in ('created', 'updated', 'deleted', 'reverted')),
    title text collate "C" not null default '',
    content text collate "C",                        -- null once redacted
    content_sha256 text collate "C" not null,
    importance bigint not null,
    identity_id text collate "C" references identities(id) on delete set null,
    created_at text collate "C" not null,
    redacted_at text collate "C", path text collate "C", size_bytes bigint,
    unique (memory_id, version)
);

create table pairing_codes (
    code_hash text collate "C" primary key,
    name text collate "C" not null,
    runtime text collate "C" not null,
    scopes text collate "C" not null,
    created_at text collate "C" not null,
    expires_at text collate "C" not null,
    used_at text collate "C",
    identity_id text collate "C" references identities(id) on delete set null
, workspace_id text collate "C");

create table platform_updates (
    id text collate "C" primary key,                 -- upd_...
    version text collate "C" not null,               -- the update's own version
    severity text collate "C" not null check (severity in ('required', 'recommended')),
    title text collate "C" not null,
    summary text collate "C" not null,
    requires_repull text collate "C" not null default '[]',
    next_actions text collate "C" not null default '[]',
    source text collate "C" not null check (source in ('builtin', 'local', 'upstream')),
    published_at text collate "C" not null,          -- when this installation first knew it
    published_by text collate "C" references identities(id) on delete set null,
    withdrawn_at text collate "C"
);

create table project_bindings (
    id text collate "C" primary key,                 -- pbind_...
    workspace_id text collate "C" not null references workspaces(id) on delete cascade,
    project_key text collate "C" not null,
    repo_root text collate "C",
    git_remote text collate "C",
    runtime text collate "C",
    created_by text collate "C" references identities(id) on delete set null,
    created_at text collate "C" not null,
    updated_at text collate "C" not null,
    unique (workspace_id, project_key)
);

create table receipts (
    id text collate "C" primary key,                 -- amp_receipt_...
    context_pack_id text collate "C" not null references context_packs(id) on delete cascade,
    identity_id text collate "C" references identities(id) on delete cascade,
    workspace_id text collate "C" not null,
    project_key text collate "C",
    summary_sha256 text collate "C" not null,
    issued_at text collate "C" not null,
    expires_at text collate "C" not null,
    verified_at text collate "C",
    last_used_at text collate "C"
);

create table runtime_profiles (
    id text collate "C" primary key,                 -- rtp_...
    identity_id text collate "C" not null references identities(id) on delete cascade,
    runtime text collate "C" not null,
    repo_root text collate "C" not null default '',
    git_remote text collate "C",
    supports_files bigint not null default 1,
    capabilities text collate "C" not null default '{}',
    created_at text collate "C" not null,
    updated_at text collate "C" not null,
    unique (identity_id, runtime, repo_root)
);

create table startup_hook_runs (
    binding_id text collate "C" not null references project_bindings(id) on delete cascade,
    runtime text collate "C" not null,
    event text collate "C" not null check (event in ('session-start', 'pre-compact')),
    source text collate "C",                         -- SessionStart's source: startup, resume, clear, ...
    identity_id text collate "C" references identities(id) on delete set null,
    first_run_at text collate "C" not null,
    last_run_at text collate "C" not null,
    runs bigint not null default 1,
    primary key (binding_id, runtime, event)
);

create table startup_plans (
    id text collate "C" primary key,                 -- splan_...
    binding_id text collate "C" not null references project_bindings(id) on delete cascade,
    runtime text collate "C" not null,
    repo_root text collate "C" not null,
    credential_ref text collate "C" not null,
    status text collate "C" not null check (status in ('pending_approval', 'rejected', 'conflict', 'applied',
                                           'installed', 'fallback_active', 'removed')),
    body text collate "C" not null,                  -- the amp.startup-item-install-plan.v1 JSON
    signature text collate "C" not null,
    created_by text collate "C" references identities(id) on delete set null,
    decided_by text collate "C" references identities(id) on delete set null,
    created_at text collate "C" not null,
    decided_at text collate "C",
    applied_at text collate "C",
    confirmed_at text collate "C",
    removed_at text collate "C",
    last_refresh_at text collate "C"
);

create table suite_versions (
    id text collate "C" primary key,                 -- suitever_...
    suite_id text collate "C" not null references suites(id) on delete cascade,
    version text collate "C" not null,
    manifest text collate "C" not null,              -- manifest.json as stored
    archive_sha256 text collate "C" not null,        -- of the canonical zip
    created_by text collate "C" references identities(id) on delete set null,
    created_at text collate "C" not null, changelog text collate "C", size_bytes bigint, archive bytea,
    unique (suite_id, version)
);

create table suite_files (
    version_id text collate "C" not null references suite_versions(id) on delete cascade,
    path text collate "C" not null,
    content text collate "C" not null,
    sha256 text collate "C" not null,
    primary key (version_id, path)
);

create table summary_cards (
    id text collate "C" primary key,                 -- card_...
    workspace_id text collate "C" not null,
    project_key text collate "C",
    source_type text collate "C" not null,
    source_id text collate "C" not null,
    title text collate "C" not null,
    body text collate "C" not null,
    importance bigint not null,
    memory_id text collate "C",
    created_at text collate "C" not null
);

create table sync_changelog (
    seq bigint generated by default as identity primary key,
    memory_id text collate "C" not null,
    version bigint not null,
    change text collate "C" not null,                -- version | redaction
    content_sha256 text collate "C",
    created_at text collate "C" not null
);

create table sync_intents (
    id text collate "C" primary key,                 -- syncint_...
    identity_id text collate "C" not null references identities(id) on delete cascade,
    endpoint text collate "C" not null,              -- memory_brief_event, adaptive_memory_submit, ...
    method text collate "C" not null,
    path text collate "C" not null,
    path_params text collate "C" not null,
    body text collate "C" not null,                  -- the original write, in full
    importance bigint not null,
    blocking_updates text collate "C" not null,      -- JSON [{update_id, version}]
    status text collate "C" not null check (status in ('blocked', 'resumed', 'discarded', 'expired')),
    result text collate "C",
    created_at text collate "C" not null,
    expires_at text collate "C" not null,
    finished_at text collate "C"
, headers text collate "C" not null default '{}');

create table update_acks (
    identity_id text collate "C" not null references identities(id) on delete cascade,
    update_id text collate "C" not null references platform_updates(id) on delete cascade,
    update_version text collate "C" not null,
    seen_version text collate "C",                   -- what the client reported, kept for audit
    acked_by text collate "C" references identities(id) on delete set null,
    acked_at text collate "C" not null,
    primary key (identity_id, update_id, update_version)
);

create table upstream_links (
    local_id text collate "C" primary key,
    upstream_id text collate "C" not null unique,
    kind text collate "C" not null,                  -- memory | delta | brief
    upstream_version bigint,
    local_version bigint,
    synced_sha256 text collate "C",
    updated_at text collate "C" not null
, upstream_updated_at text collate "C", upstream_sha256 text collate "C");

create table upstream_outbox (
    seq bigint generated by default as identity primary key,
    memory_id text collate "C" not null,
    version bigint not null,
    operation text collate "C" not null,             -- created | updated | deleted | reverted | redacted
    content_sha256 text collate "C",                 -- the redacted content, for 'redacted'
    body text collate "C",                           -- the original request, for 'suite_sync' (memory_id = suite:SLUG)
    idempotency_key text collate "C" not null default (md5(random()::text || clock_timestamp()::text)),
    status text collate "C" not null default 'pending' check (status in
        ('pending', 'sent', 'interrupted', 'held', 'superseded', 'skipped', 'discarded')),
    attempts bigint not null default 0,
    next_attempt_at text collate "C",
    last_error text collate "C",
    upstream_sync_intent_id text collate "C",
    result text collate "C",
    created_at text collate "C" not null,
    finished_at text collate "C"
);

create table upstream_state (
    key text collate "C" primary key,                -- url, credential_ref, identity_id, local_workspace_id, ...
    value text collate "C" not null
);

create index brief_events_brief on brief_events (brief_id, created_at);
create index brief_events_newest on brief_events (created_at, id);
create index brief_events_type_newest on brief_events (event_type, created_at, id);
create index claims_resource on claims (workspace_id, resource, released_at, expires_at);
create index conflicts_open on conflicts (status, created_at);
create index installed_open_memories_ws on installed_open_memories (workspace_id, installed_at);
create index mem1_messages_ns on mem1_messages (namespace, session_id, seq);
create index memory_deltas_ws on memory_deltas (workspace_id, created_at);
create index memory_records_loose_turns
    on memory_records (namespace, kind, seq)
    where deleted_at is null and kind != 'summary'
      and json_extract(provenance, '$.session_id') is null;
create index memory_records_mem1_summary
    on memory_records (namespace, json_extract(provenance, '$.session_id'))
    where kind = 'summary' and deleted_at is null;
create index memory_records_ns_kind_newest
    on memory_records (namespace, kind, updated_at desc, seq desc) where deleted_at is null;
create index memory_records_ns_live on memory_records (namespace, deleted_at, importance desc, seq desc);
create index memory_records_ns_newest on memory_records (namespace, updated_at desc, seq desc)
    where deleted_at is null;
create index memory_records_ns_path on memory_records (namespace, path) where deleted_at is null;
create index memory_records_ns_project on memory_records (namespace, project_key, deleted_at, seq desc);
create index memory_records_session_turns
    on memory_records (namespace, json_extract(provenance, '$.session_id'), seq)
    where deleted_at is null and kind != 'summary'
      and json_extract(provenance, '$.session_id') is not null;
create index startup_plans_binding on startup_plans (binding_id, status);
create index suites_created_by on suites (created_by, updated_at);
create index summary_cards_ws on summary_cards (workspace_id, created_at);
create index sync_intents_expiry on sync_intents (status, expires_at);
create index sync_intents_identity on sync_intents (identity_id, status);
create index upstream_outbox_memory on upstream_outbox (memory_id, status);
create index upstream_outbox_status on upstream_outbox (status, seq);

-- A memory's new version, or a version's redaction, goes into the changes feed, and, on a
-- daemon paired with an upstream, into the outbox when it is in the synced workspace or a
-- memory store (the SQLite engine's four triggers, as one function for both events).
create function memory_version_changed() returns trigger
language plpgsql
as $$
declare
    redaction boolean := tg_op = 'UPDATE';
    happened text := case when tg_op = 'UPDATE' then new.redacted_at else new.created_at end;
begin
    insert into sync_changelog (memory_id, version, change, content_sha256, created_at)
    values (new.memory_id, new.version, case when redaction then 'redaction' else 'version' end,
            new.content_sha256, happened);
    if exists (select 1 from upstream_state where key = 'local_workspace_id') then
        insert into upstream_outbox (memory_id, version, operation, content_sha256, created_at)
        select new.memory_id, new.version, case when redaction then 'redacted' else new.operation end,
               case when redaction then new.content_sha256 end, happened
        from memory_records r where r.id = new.memory_id and (
            r.namespace = (select value from upstream_state where key = 'local_workspace_id')
            or r.namespace like 'memstore\_%');
    end if;
    return null;
end
$$;

create trigger memory_version_inserted after insert on memory_versions
for each row execute function memory_version_changed();

create trigger memory_version_redacted after update of redacted_at on memory_versions
for each row when (new.redacted_at is not null and old.redacted_at is null)
execute function memory_version_changed();

-- The memory-suite catalog's full-text rows (the SQLite engine's suite_fts, an FTS5 table):
-- the tokenizer's tokens of each suite, matched as a tsvector (state/suite_records.py).
create table suite_fts (
    slug text collate "C" not null,
    tokens text collate "C" not null
);
create index suite_fts_slug on suite_fts (slug);
