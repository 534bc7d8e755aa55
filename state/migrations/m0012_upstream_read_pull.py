"""Pull through AMP's read endpoints (an upstream without the sync extension): what a link
remembers of the upstream's side, and the indexes that serve a workspace newest first.

Without a changes feed there is no upstream version number: a record's upstream state is
its ``updated_at`` there (has it moved since we looked?) and the digest of the content we
took from it (did the content change, or only the timestamp?).
"""

SQL = r"""
alter table upstream_links add column upstream_updated_at text;   -- the upstream's updated_at when last pulled
alter table upstream_links add column upstream_sha256 text;       -- digest of the content pulled then

-- GET /api/workspaces/{id}/memory/query without q, the memory map and the code-memory
-- context list a workspace newest first, optionally of one memory type.
create index memory_records_ns_newest on memory_records (namespace, updated_at desc, seq desc)
    where deleted_at is null;
create index memory_records_ns_kind_newest
    on memory_records (namespace, kind, updated_at desc, seq desc) where deleted_at is null;
"""
