"""When a startup item's hook last ran: one row per project binding, runtime and event.

The launcher names itself in a header (``X-MemoryCloud-Launcher: session-start; runtime=codex``)
when a runtime's hook started it; the daemon records that call here, so ``memorycloud setup
list`` and ``doctor`` can say whether the hook really runs, or what the person still has to do.
An agent's own bootstrap call (no header) is not a hook run and is not recorded.
"""

SQL = """
create table startup_hook_runs (
    binding_id text not null references project_bindings(id) on delete cascade,
    runtime text not null,
    event text not null check (event in ('session-start', 'pre-compact')),
    source text,                         -- SessionStart's source: startup, resume, clear, ...
    identity_id text references identities(id) on delete set null,
    first_run_at text not null,
    last_run_at text not null,
    runs integer not null default 1,
    primary key (binding_id, runtime, event)
);
"""
