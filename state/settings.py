"""The settings, declared once: one pydantic field per setting with its type, default, bounds,
description and TOML section. Everything else is derived from this model: the config file's
template and the sections (state/config.py), the file's validation, the ``MEMORYCLOUD_*``
environment overrides, and what ``memorycloud config`` lists.

A setting's section lives in the field itself (``json_schema_extra={"section": ...}``), and a
setting whose default is tuned by measurement and may improve between releases is written
commented out in the template (``"commented": True``), so that a value a user uncomments (or
sets) stays theirs while the others follow the release.
"""

from __future__ import annotations

from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from state.errors import ConfigError

DEFAULT_PORT = 8517


def _setting(default: Any, section: str, description: str, *, commented: bool = False, **bounds: Any) -> Any:
    """A field: its default, bounds (``gt``/``ge``/``le``), description and TOML section."""
    extra: dict[str, Any] = {"section": section}
    if commented:
        extra["commented"] = True
    return Field(default, description=description, json_schema_extra=extra, **bounds)


class Settings(BaseModel):
    """Resolved settings: embedded defaults, under the file's values, under ``MEMORYCLOUD_*``
    environment variables, with CLI overrides (``--host``/``--port``) on top.

    Constructed with keyword arguments (``Settings(embedder=..., dimension=...)``); a value of
    the wrong type, out of bounds or an unknown name is a ``ConfigError`` naming the setting.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=False)
    # model_validate goes through __init__ too (pydantic calls a custom __init__), so every
    # way of building Settings raises ConfigError, never pydantic's ValidationError.

    # [daemon]
    host: str = _setting(
        "127.0.0.1", "daemon", "Address the daemon listens on. Keep it on loopback unless you know why not."
    )
    port: int = _setting(DEFAULT_PORT, "daemon", "TCP port of the daemon.", ge=0, le=65535)
    max_body_bytes: int = _setting(1_048_576, "daemon", "Largest request body accepted, in bytes.", gt=0)
    allowed_origins: tuple[str, ...] = _setting(
        (),
        "daemon",
        "Extra browser Origins allowed to call the API (none by default: refuses CSRF/DNS rebinding).",
    )
    allowed_hosts: tuple[str, ...] = _setting(
        (),
        "daemon",
        "Host names clients may use besides loopback ones (DNS-rebinding guard),"
        " e.g. the public name of a daemon in the cloud role behind a reverse proxy:"
        ' ["memory.example.com"].',
    )
    role: Literal["local", "cloud"] = _setting(
        "local", "daemon", '"local" (one person, this machine) or "cloud" (serves a team: see the README).'
    )
    rate_limit_per_minute: int = _setting(
        1200,
        "daemon",
        "The cloud role's budget of requests per agent key and minute (up to a minute's worth"
        " at once; the owner is not limited; shared by the processes on one PostgreSQL"
        " database); 0 turns it off. A local"
        " daemon has none.",
        ge=0,
        commented=True,
    )
    database_url: str = _setting(
        "",
        "daemon",
        "The cloud role's PostgreSQL database (with pgvector), e.g."
        ' "postgresql://memorycloud@db.example.com:5432/memorycloud"; empty: the SQLite file in'
        " the state directory. Never a password here: libpq reads PGPASSWORD or ~/.pgpass"
        ' (README, "Team server on PostgreSQL").',
        commented=True,
    )
    database_read_connections: int = _setting(
        4,
        "daemon",
        "With database_url: the connections (and worker threads) of each daemon process's"
        " pool for searches, memory queries and pulls, which wait for the database beside the"
        " event loop instead of on it; on SQLite, above 0: one connection and thread on which"
        " a search ranks part of a long query beside the rest; 0 reads on the request"
        " connection.",
        ge=0,
        le=64,
        commented=True,
    )
    database_writes_apart: bool = _setting(
        True,
        "daemon",
        "With database_url: the busiest writes (memory deltas, pushes from local daemons) run"
        " in a writer thread on a connection of their own, in batches that share a transaction,"
        " so that their round trips to the database do not hold the event loop; false: on the"
        " request connection.",
        commented=True,
    )

    # [search]
    embedder: str = _setting(
        "hashing",
        "search",
        'Embedder for the vector half of hybrid search: "hashing" works'
        ' offline with no download. Optional: "sentence-transformers:MODEL" or'
        ' "openai:MODEL@URL" (README, "Search").',
        commented=True,
    )
    dimension: int = _setting(1024, "search", "Dimension of the embedder's vectors.", gt=0, commented=True)
    # The hashing vectors' rerank helps Chinese and costs English (tuning halves: MADial-Bench
    # zh MRR@10 0.587 -> 0.612, en 0.552 -> 0.539; English conversations R@10 0.609 ->
    # 0.534), so "auto" reranks CJK queries only (bench/RESULTS.md, state/search.py).
    vector_mode: Literal["auto", "fallback", "rerank", "always"] = _setting(
        "auto",
        "search",
        'How the vector ranking joins BM25: "auto" (rerank for Chinese,'
        ' Japanese and Korean queries, fallback for the others), "fallback" (vectors only when'
        ' BM25 finds too few: a misspelt query), "rerank" (every query, over BM25\'s candidates,'
        ' plus a vector scan when BM25 finds too few) or "always" (a vector scan every query:'
        " for a semantic embedder). bench/RESULTS.md has the measurements behind the defaults.",
        commented=True,
    )
    bm25_weight: float = _setting(
        1.0,
        "search",
        "Weight of the BM25 ranking in the fused (reciprocal rank) score.",
        ge=0,
        commented=True,
    )
    vector_weight: float = _setting(
        1.0,
        "search",
        "Weight of the vector ranking in the fused (reciprocal rank) score.",
        ge=0,
        commented=True,
    )

    reply_lift: float = _setting(
        0.3,
        "search",
        "Share of a matching question's BM25 score that the next turn of its conversation gets"
        ' (the reply "Churro." is found through "What did you name her?"); 0 turns it off'
        ' (README, "Search").',
        ge=0,
        le=1,
        commented=True,
    )

    # [context]
    summary_budget_chars: int = _setting(
        6000, "context", "Size budget of a context pack's summary_markdown, in characters.", gt=0
    )
    max_items: int = _setting(24, "context", "How many memories a context pack summarises at most.", gt=0)
    receipt_ttl_hours: float = _setting(
        24.0, "context", "How long a bootstrap receipt stays valid, in hours.", gt=0
    )

    # [sync]
    sync_intent_ttl_hours: float = _setting(
        24.0, "sync", "How long a write held back by the update gate can still be resumed, in hours.", gt=0
    )
    upstream_timeout_seconds: float = _setting(
        10.0,
        "sync",
        "Timeout of one request to the upstream, in seconds (local requests never wait for it).",
        gt=0,
    )
    follow_upstream: bool = _setting(
        True,
        "sync",
        "Pull an upstream's changes as they happen: one request waits there for the next"
        " change (upstreams that allow it: a companion in the cloud role). false: at each"
        " sync round only (sync_upstream_seconds, and after local writes).",
    )
    serve_sync_extension: bool = _setting(
        True,
        "sync",
        'Serve the sync extension (/api/sync/*, README "The sync extension") to'
        " downstream daemons. false: they are not served (404), as on an upstream without them;"
        " downstream daemons then pull through AMP's read endpoints (memory map, memory query).",
    )

    # [jobs]
    checkpoint_seconds: float = _setting(5.0, "jobs", "Interval of the WAL checkpoint job.", gt=0)
    refresh_startup_items_minutes: float = _setting(
        10.0, "jobs", "Interval of the job that refreshes context packs and fallback caches.", gt=0
    )
    expire_sync_intents_minutes: float = _setting(
        5.0, "jobs", "Interval of the job that expires and resumes sync intents.", gt=0
    )
    poll_updates_minutes: float = _setting(30.0, "jobs", "Interval of the platform update poll.", gt=0)
    sync_upstream_seconds: float = _setting(
        30.0,
        "jobs",
        "Push to and pull from the upstream (when one is connected) this often;"
        " local writes also trigger it.",
        gt=0,
    )
    index_merge_seconds: float = _setting(
        5.0,
        "jobs",
        "How often the job looks whether the search index has new segments to merge; it"
        " merges them once writes have paused for a few seconds (searches get faster).",
        gt=0,
        commented=True,
    )
    rebuild_batch_records: int = _setting(
        1000,
        "jobs",
        "After an upgrade that changes how text is indexed, the search index is"
        " rebuilt in the background in batches of at most this many records (searches answer"
        " from the old index meanwhile).",
        gt=0,
        commented=True,
    )
    rebuild_batch_ms: float = _setting(
        20.0, "jobs", "A rebuild batch also ends after this many milliseconds.", gt=0, commented=True
    )
    rebuild_pause_ms: float = _setting(
        0.0,
        "jobs",
        "Pause between two rebuild batches, in milliseconds (0: as long as the"
        " batch took, so requests get at least half the time).",
        ge=0,
        commented=True,
    )

    # [logging]
    log_max_bytes: int = _setting(
        5 * 1024 * 1024,
        "logging",
        "daemon.log (in the state directory) starts anew when it reaches this size, in bytes.",
        gt=0,
    )
    log_backups: int = _setting(
        3,
        "logging",
        "How many rotated logs are kept beside it: daemon.log.1 (the newest), daemon.log.2, ...",
        gt=0,
    )
    access_log: bool = _setting(
        False,
        "logging",
        "An access log of every request (access.log beside daemon.log, rotated"
        " the same way): off, since the request lines name what agents search for.",
    )
    check_responses: bool = _setting(
        False,
        "daemon",
        "Check every JSON answer against its schema in the OpenAPI document and answer 500"
        " (response_mismatch, in daemon.log) instead of one that differs: for developing the"
        " daemon and its tests (MEMORYCLOUD_CHECK_RESPONSES=true), off for everyday use.",
        commented=True,
    )

    def __init__(self, **values: Any) -> None:
        try:
            super().__init__(**values)
        except ValidationError as exc:
            problems = [
                {"setting": str(e["loc"][0]) if e["loc"] else "", "problem": describe_error(e)}
                for e in exc.errors()
            ]
            # details["errors"] lets load_settings say where each bad value came from.
            raise ConfigError(
                "; ".join(p["problem"] for p in problems), details={"errors": problems}
            ) from None

    @field_validator("*", mode="before")
    @classmethod
    def _from_text(cls, value: Any, info: ValidationInfo) -> Any:
        """Refuse a boolean where a number belongs (pydantic would read ``true`` as 1), and
        read a comma-separated string as a list (the command line, the environment)."""
        kind = type_of(info.field_name or "")
        if kind in (int, float) and isinstance(value, bool):
            raise PydanticCustomError("wrong_type", "wrong type")
        if kind is tuple and isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("database_url")
    @classmethod
    def _database_for_the_cloud_role(cls, value: str, info: ValidationInfo) -> str:
        """A PostgreSQL URL, and only for the cloud role: one person's companion keeps its
        SQLite file."""
        if not value:
            return value
        if not value.startswith(("postgresql://", "postgres://")):
            raise PydanticCustomError("database_url", "a postgresql:// URL (or empty for SQLite)")
        if info.data.get("role", "local") != "cloud":
            raise PydanticCustomError(
                "database_url", 'a PostgreSQL database serves the cloud role only (role = "cloud")'
            )
        return value

    def with_overrides(self, **overrides: Any) -> Settings:
        """A validated copy with the non-None overrides applied (e.g. ``--host``/``--port``)."""
        values = self.model_dump()
        values.update({k: v for k, v in overrides.items() if v is not None})
        return Settings(**values)


def extra_of(name: str) -> dict[str, Any]:
    """What ``_setting`` put beside the field: its section, whether it is commented out."""
    extra = Settings.model_fields[name].json_schema_extra
    return extra if isinstance(extra, dict) else {}


NAMES: tuple[str, ...] = tuple(Settings.model_fields)
# Which TOML table holds each setting (derived from the fields).
SECTIONS: dict[str, str] = {name: extra_of(name)["section"] for name in NAMES}


def type_of(name: str) -> type | None:
    """The plain Python type of setting ``name``: str, int, float, bool or tuple (a Literal
    counts as str); None for a name that is not a setting."""
    field = Settings.model_fields.get(name)
    if field is None:
        return None
    annotation = field.annotation
    if get_origin(annotation) is Literal:
        return type(get_args(annotation)[0])
    kind = get_origin(annotation) or annotation
    return kind if isinstance(kind, type) else None


def type_name(name: str) -> str:
    """How a message names the type of setting ``name``."""
    kind = type_of(name)
    return "list of strings" if kind is tuple else getattr(kind, "__name__", str(kind))


def choices(name: str) -> tuple[Any, ...]:
    """The allowed values of a setting with a fixed set of them (``()`` for the others)."""
    annotation = Settings.model_fields[name].annotation
    return get_args(annotation) if get_origin(annotation) is Literal else ()


def bounds_text(name: str) -> str:
    """The bounds of a numeric setting in words ("must be positive", ...)."""
    found: dict[str, Any] = {}
    for item in Settings.model_fields[name].metadata:
        for key in ("gt", "ge", "lt", "le"):
            if getattr(item, key, None) is not None:
                found[key] = getattr(item, key)
    if "ge" in found and "le" in found:
        return f"must be between {found['ge']} and {found['le']}"
    if found.get("gt") == 0 and len(found) == 1:
        return "must be positive"
    if found.get("ge") == 0 and len(found) == 1:
        return "must not be negative"
    words = {"gt": "greater than", "ge": "at least", "lt": "less than", "le": "at most"}
    return "must be " + " and ".join(f"{words[k]} {v}" for k, v in found.items())


_TYPE_ERRORS = (
    "wrong_type",
    "int_type",
    "int_parsing",
    "int_from_float",
    "float_type",
    "float_parsing",
    "bool_type",
    "bool_parsing",
    "string_type",
    "tuple_type",
)
_BOUND_ERRORS = ("greater_than", "greater_than_equal", "less_than", "less_than_equal")


def describe_error(error: Any) -> str:
    """One pydantic error as a sentence naming the setting: "setting 'port' must be ..."."""
    name = str(error["loc"][0]) if error["loc"] else "?"
    kind, value = error["type"], error.get("input")
    if name == "database_url" and isinstance(value, str):
        from state.pg.engine import masked

        value = masked(value)  # never a password in a message or a log
    if kind == "extra_forbidden":
        return f"unknown setting {name!r}"
    if kind in _TYPE_ERRORS:
        return f"setting {name!r} must be of type {type_name(name)}, got {value!r}"
    if kind in _BOUND_ERRORS:
        return f"setting {name!r} {bounds_text(name)}, got {value!r}"
    if kind == "literal_error":
        allowed = ", ".join(repr(c) for c in choices(name))
        return f"setting {name!r} must be one of {allowed}, got {value!r}"
    return f"setting {name!r}: {error['msg']}, got {value!r}"


def describe_settings() -> list[dict[str, Any]]:
    """Every setting as data (name, section, type, default, bounds, choices, description):
    what ``memorycloud config describe`` prints."""
    rows = []
    for name, field in Settings.model_fields.items():
        row: dict[str, Any] = {
            "name": name,
            "section": SECTIONS[name],
            "type": type_name(name),
            "default": list(field.default) if isinstance(field.default, tuple) else field.default,
        }
        if field.metadata:
            row["bounds"] = bounds_text(name).removeprefix("must be ")
        if choices(name):
            row["choices"] = list(choices(name))
        row["description"] = field.description
        rows.append(row)
    return rows
