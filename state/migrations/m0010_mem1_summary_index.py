"""An index for finding a mem1 session's summary, which every ``add_messages`` turn does.

Without it the lookup walked every live record of the user's namespace (each message is a
record) to test its kind and session: 7.7 % of the daemon's time under 8 mem1 clients after
a few thousand turns (bench/RESULTS.md, "where the time goes"), and growing with the history.
The expression and the WHERE clause match the query in daemon/runtime/mem1.py."""

SQL = """
create index memory_records_mem1_summary
    on memory_records (namespace, json_extract(provenance, '$.session_id'))
    where kind = 'summary' and deleted_at is null;
"""
