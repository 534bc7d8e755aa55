"""The live records' namespaces in a narrow table of their own, kept by triggers: what a
full-text match is filtered by (state/search.py joins FTS5's matches to it instead of to
memory_records).

Why: a match's check against memory_records reads that wide table's pages (about six records
a page at 10k memory deltas); here ~90 rows share a page. That matters most on the search's
side connection (state/side_reads.py), whose page cache SQLite empties whenever another
connection has committed (every brief stores its pack): at 10k, the side part of a brief's
BM25 took 2.52 ms after such a write against 1.52 without one, and 1.91 against 1.45 through
this table; its other parts 1.81 -> 1.72 and 1.48 -> 1.35 ms, the same rows in the same order
(bench/RESULTS.md, "the side connection after a write").

The triggers keep it equal to ``select seq, namespace from memory_records where deleted_at
is null`` whatever writes the records (tests/state/test_live_records.py)."""

# What the table holds: the one definition, which ``doctor`` checks and refills by too.
LIVE = "select seq, namespace from memory_records where deleted_at is null"

TABLE = f"""
create table live_records (
    seq integer primary key,   -- memory_records.seq (its rowid)
    namespace text not null
);
insert into live_records (seq, namespace)
    {LIVE};

"""

# The triggers alone: ``memorycloud doctor --repair`` makes them again (state/doctor.py).
TRIGGERS = """create trigger live_records_insert after insert on memory_records
when new.deleted_at is null
begin
    insert or replace into live_records (seq, namespace) values (new.seq, new.namespace);
end;

create trigger live_records_update after update of seq, namespace, deleted_at on memory_records
when old.seq is not new.seq or old.namespace is not new.namespace
    or old.deleted_at is not new.deleted_at
begin
    delete from live_records where seq = old.seq;
    insert or replace into live_records (seq, namespace)
        select new.seq, new.namespace where new.deleted_at is null;
end;

create trigger live_records_delete after delete on memory_records
begin
    delete from live_records where seq = old.seq;
end;
"""

SQL = TABLE + TRIGGERS
