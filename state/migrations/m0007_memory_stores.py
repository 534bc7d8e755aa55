"""Memory Stores (seed 001): stores of path-addressed documents over the one memory table.
A store's memories are memory_records in the store's namespace; versions carry the path and
the size so a redacted version keeps its metadata."""

SQL = """
create table memory_stores (
    id text primary key,                 -- memstore_...
    name text not null,
    description text not null default '',
    metadata text not null default '{}',
    status text not null default 'active' check (status in ('active', 'archived')),
    archived_at text,
    created_by text references identities(id) on delete set null,
    created_at text not null,
    updated_at text not null
);

alter table memory_records add column metadata text not null default '{}';
alter table memory_versions add column path text;
alter table memory_versions add column size_bytes integer;
create index memory_records_ns_path on memory_records (namespace, path) where deleted_at is null;
create index memory_versions_memory on memory_versions (memory_id, version);
"""
