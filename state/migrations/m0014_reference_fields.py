"""Fields the MemoryCloud reference returns that were not kept until now:

* ``sync_intents.headers``: the X-MemoryCloud-* headers a held-back write came with
  (``{"runtime_version", "applied_updates"}``), served as ``sync_intent.headers``;
* ``memory_briefs.sources``: what a brief was made from (carry_in, project_state,
  recent_events, handoff, active_installed_memory_lenses), so reading a brief later shows
  the same sources as its creation did (empty for briefs made before this migration).
"""

SQL = """
alter table sync_intents add column headers text not null default '{}';
alter table memory_briefs add column sources text not null default '{}';
"""
