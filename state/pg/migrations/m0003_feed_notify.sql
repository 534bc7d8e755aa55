-- Every change that enters the feed also wakes the pulls waiting for it, on every daemon
-- process serving this database (GET /api/sync/changes?wait=N, state/pg/feed_listener.py):
-- NOTIFY on the channel memorycloud_feed with the record's namespace, delivered when the
-- transaction commits (never for one rolled back; PostgreSQL folds a transaction's identical
-- notifications into one). The function is memory_version_changed of m0002 plus the NOTIFY.
create or replace function memory_version_changed() returns trigger
language plpgsql
as $$
declare
    redaction boolean := tg_op = 'UPDATE';
    happened text := case when tg_op = 'UPDATE' then new.redacted_at else new.created_at end;
begin
    insert into sync_changelog (memory_id, version, change, content_sha256, created_at)
    values (new.memory_id, new.version, case when redaction then 'redaction' else 'version' end,
            new.content_sha256, happened);
    if exists (select 1 from upstream_state where key = 'local_workspace_id') then
        insert into upstream_outbox (memory_id, version, operation, content_sha256, created_at)
        select new.memory_id, new.version, case when redaction then 'redacted' else new.operation end,
               case when redaction then new.content_sha256 end, happened
        from memory_records r where r.id = new.memory_id and (
            r.namespace = (select value from upstream_state where key = 'local_workspace_id')
            or r.namespace like 'memstore\_%');
    end if;
    perform pg_notify('memorycloud_feed',
                      coalesce((select namespace from memory_records where id = new.memory_id), ''));
    return null;
end
$$;
