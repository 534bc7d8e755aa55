"""Suites installed into a workspace (imem_...): what was installed, from which version and
sha256, which workspace memories it brought, and the retrieval test it passed."""

SQL = """
create table installed_open_memories (
    id text primary key,                 -- imem_...
    workspace_id text not null references workspaces(id) on delete cascade,
    project_key text,
    suite_id text not null references suites(id) on delete cascade,
    slug text not null,
    version text not null,
    title text not null,
    provenance text not null,
    archive_sha256 text not null,
    memory_ids text not null,            -- JSON list of the workspace memories it added
    conflict_ids text not null,          -- JSON list of conflicts held for the person
    steps text not null,                 -- JSON: the install order as carried out
    retrieval_test text not null,        -- JSON
    installed_by text references identities(id) on delete set null,
    installed_at text not null
);
create index installed_open_memories_ws on installed_open_memories (workspace_id, installed_at);
"""
