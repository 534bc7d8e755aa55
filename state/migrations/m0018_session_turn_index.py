"""An index for finding a conversation turn's neighbours: the records of one session in one
namespace, in write order (state/turn_context.py). Each write of a turn looks up the turn
before it, and a deletion the turns on both sides, so without it every write would walk the
namespace. The expression and the WHERE clause match the queries in state/turn_context.py."""

SQL = """
create index memory_records_session_turns
    on memory_records (namespace, json_extract(provenance, '$.session_id'), seq)
    where deleted_at is null and kind != 'summary'
      and json_extract(provenance, '$.session_id') is not null;
"""
