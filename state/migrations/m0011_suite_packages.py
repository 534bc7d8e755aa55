"""Memory suites as the MemoryCloud reference's packages: who may see them (visibility), what
they are (persona_type, tags, license), their price and counters, and per version the
changelog, the archive's size and, for an imported zip, the uploaded bytes themselves.

An imported archive is served back byte for byte (the reference stores uploads verbatim), so
its bytes are kept; a version built by the daemon (create, sync) is rebuilt from its files by
the canonical writer, which gives the same bytes every time, so ``archive`` stays null there.
Existing suites were readable by every key with catalog:read: they become ``public``.
"""

SQL = """
alter table suites add column visibility text not null default 'public';
alter table suites add column persona_type text not null default 'agent';
alter table suites add column license text not null default '';
alter table suites add column tags text not null default '[]';
alter table suites add column price_cents integer not null default 0;
alter table suites add column install_count integer not null default 0;
alter table suites add column download_count integer not null default 0;

alter table suite_versions add column changelog text;
alter table suite_versions add column size_bytes integer;
alter table suite_versions add column archive blob;

create index suites_created_by on suites (created_by, updated_at);
"""
