"""agent-memory1.0 (seed 004): messages kept and traceable, and profile variables, isolated
by user_id + scope_id (the namespace ``mem1:<user>:<scope>``)."""

SQL = """
create table mem1_messages (
    seq integer primary key,
    id text not null unique,             -- msg_...
    namespace text not null,
    user_id text not null,
    scope_id text not null,
    session_id text not null,
    role text not null,
    content text not null,
    timestamp text not null              -- ISO 8601 with the local UTC offset (seed v1.1)
);
create index mem1_messages_ns on mem1_messages (namespace, session_id, seq);

create table mem1_variables (
    namespace text not null,
    name text not null,
    value text,
    updated_at text not null,
    primary key (namespace, name)
);
"""
