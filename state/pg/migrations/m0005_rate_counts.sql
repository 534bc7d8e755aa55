-- A caller's requests counted across every daemon process serving this database, per minute
-- (daemon/rate_limit.py, state/pg/rate_counts.py): each process adds what it admitted about
-- once a second and reads the total back, so a key's budget (rate_limit_per_minute) holds for
-- the team server, not for each process. Unlogged: counts of the current minute need no WAL
-- and no crash safety (after a crash or a failover they start again from zero).
create unlogged table rate_counts (
    identity_id text collate "C" not null,
    minute bigint not null,            -- Unix time // 60
    used integer not null,
    primary key (identity_id, minute)
);
