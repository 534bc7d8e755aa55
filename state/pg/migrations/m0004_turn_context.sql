-- A conversation turn's context on PostgreSQL (state/pg/search.py, state/turn_context.py): a
-- turn's row also counts the own tokens of the two turns before it, at a fifth of the weight,
-- as the SQLite engine's FTS5 context columns do. ``freqs``, ``doc_length`` and ``tokens`` of
-- a row now cover its context too; ``own`` keeps the record's own tokens (as
-- state/tokenize.py index_text makes them), which the turns after it take as their context.

alter table memory_search add column own text;

-- A row indexed before this migration holds its own tokens only: its frequencies are exactly
-- its own tokens' counts, so ``own`` is made from them (the order of the tokens is lost, which
-- no ranking reads: BM25 counts them).
update memory_search s set own = coalesce(
    (select string_agg(e.key, ' ' order by e.key)
     from jsonb_each_text(s.freqs) e, generate_series(1, round(e.value::float8)::integer)),
    '');
alter table memory_search alter column own set not null;

-- Those rows have no context yet: PgSearchIndex makes it when it opens the database
-- (fill_context). A row written from now on gets its context as it is written.
alter table memory_search add column context_pending boolean not null default true;
alter table memory_search alter column context_pending set default false;
create index memory_search_context_pending on memory_search (seq) where context_pending;

-- A turn's row is about half as large again with its context: past ~2 KB PostgreSQL would
-- compress it, and BM25 then decompresses ``freqs`` once per query term and matching row.
-- Kept uncompressed up to a page (20k records, half of them turns: a brief's task p50
-- 9.7 -> 8.0 ms, p90 17 -> 9.5; the table 14 % larger).
alter table memory_search set (toast_tuple_target = 8160);
