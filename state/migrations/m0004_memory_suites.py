"""Memory suites (amp.memory-suite.v1): every version kept with its files, so any two can be
compared and any one downloaded again byte for byte."""

SQL = """
create table suites (
    id text primary key,                 -- suite_...
    slug text not null unique,
    title text not null,
    summary text not null,
    latest_version text not null,
    legacy integer not null default 0,   -- imported from an archive without suite/manifest.json
    created_by text references identities(id) on delete set null,
    created_at text not null,
    updated_at text not null
);

create table suite_versions (
    id text primary key,                 -- suitever_...
    suite_id text not null references suites(id) on delete cascade,
    version text not null,
    manifest text not null,              -- manifest.json as stored
    archive_sha256 text not null,        -- of the canonical zip
    created_by text references identities(id) on delete set null,
    created_at text not null,
    unique (suite_id, version)
);

create table suite_files (
    version_id text not null references suite_versions(id) on delete cascade,
    path text not null,
    content text not null,
    sha256 text not null,
    primary key (version_id, path)
);

-- Searchable catalog text (title, summary, tags), pre-tokenized like memories.
create virtual table suite_fts using fts5(slug unindexed, tokens);
"""
