"""An index for finding the neighbours of a conversation turn stored without a session id
(state/turn_context.py ``_LOOSE_CHAIN``): the records of one kind in one namespace that have
no session id, in write order. Each such turn's write looks up the turns before it. The
expression and the WHERE clause match the query in state/turn_context.py."""

SQL = """
create index memory_records_loose_turns
    on memory_records (namespace, kind, seq)
    where deleted_at is null and kind != 'summary'
      and json_extract(provenance, '$.session_id') is null;
"""
