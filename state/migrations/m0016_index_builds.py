"""What each derived search index was built with, and how far a rebuild of it has come.

One row per index (``memory_fts``, ``memory_vec``, ``suite_fts``): ``built_with`` names what
made the index that answers now (``tokenizer-1``, ``hashing-v2:int8-cosine:1024``);
``target`` what a rebuild in progress makes instead (null: none), ``cursor`` the last
``memory_records.seq`` it has copied and ``done`` how many records that was, both advanced
in the same transaction as the rows they count (state/rebuild.py). It replaces
``vector_index_meta``, which recorded the vectors' embedder only.

Stores made before this migration were indexed with tokenizer version 1.
"""

SQL = """
create table index_builds (
    name text primary key,
    built_with text,                     -- null: nothing built yet
    target text,
    cursor integer not null default 0,
    done integer not null default 0,
    started_at text,
    finished_at text
);
insert into index_builds (name, built_with) values ('memory_fts', 'tokenizer-1'),
                                                   ('suite_fts', 'tokenizer-1');
insert into index_builds (name, built_with, finished_at)
    select 'memory_vec', embedder || ':' || dimension, built_at from vector_index_meta;
drop table vector_index_meta;
"""
