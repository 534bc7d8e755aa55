-- The full-text half of hybrid search on PostgreSQL (state/pg/search.py). A record's tokens
-- are the SQLite engine's (state/tokenize.py index_text): the distinct ones in a tsvector,
-- which the GIN index matches, and each one's frequency in ``freqs``; BM25 is computed from
-- them exactly as FTS5's bm25() does, with the document frequencies and totals kept below.
create table memory_search (
    seq bigint primary key,
    namespace text not null,
    tokens tsvector not null,
    -- Each distinct token's frequency in the record: what BM25 reads per matching record.
    freqs jsonb not null,
    doc_length integer not null  -- the record's tokens, as FTS5 counts a row
);
create index memory_search_tokens on memory_search using gin (tokens);
create index memory_search_namespace on memory_search (namespace);

-- Records holding each token (FTS5 counts a term's rows over the whole index, all
-- namespaces), and the index's totals: one row.
create table search_terms (
    term text primary key,
    docs integer not null check (docs >= 0)
);
create table search_totals (
    id integer primary key check (id = 1),
    docs bigint not null,
    tokens bigint not null
);
insert into search_totals values (1, 0, 0);
