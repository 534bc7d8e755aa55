"""Read a brief's recent events and hand-off newest first.

A memory brief shows the workspace's latest events and its latest ``handoff_ready`` event.
Both were found by joining every brief the workspace ever had (a scan of memory_briefs that
grew with each brief: 0.5 ms at 1,400 briefs). These indexes let the queries
(state/amp_records.py ``recent_events``, daemon/runtime/briefs.py ``_handoff``) walk the
events newest first and stop at the limit.
"""

SQL = """
create index brief_events_newest on brief_events (created_at, id);
create index brief_events_type_newest on brief_events (event_type, created_at, id);
"""
