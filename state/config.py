"""The TOML configuration file, read and edited with tomlkit so comments survive.

Every setting has an embedded default; the file only needs what the user changed. Unknown
keys are kept (tomlkit round-trips them) but ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import tomlkit

from state.atomic import write_atomic
from state.errors import ConfigError

DEFAULT_PORT = 8517

_TEMPLATE = """\
# MemoryCloud Companion configuration.
# Edit by hand or with `memorycloud config set KEY VALUE`; comments are kept.

[daemon]
# Address the daemon listens on. Keep it on loopback unless you know why not.
host = "127.0.0.1"
port = 8517
# Largest request body accepted, in bytes.
max_body_bytes = 1048576
# Extra browser Origins allowed to call the API (none by default: refuses CSRF/DNS rebinding).
allowed_origins = []
# Host names clients may use besides loopback ones (DNS-rebinding guard), e.g. the public name
# of a daemon in the cloud role behind a reverse proxy: ["memory.example.com"].
allowed_hosts = []
# "local" (one person, this machine) or "cloud" (serves a team: see the README).
role = "local"

[search]
# The search defaults are tuned by measurement and may improve between releases, so they are
# left commented out here: a setting you uncomment (or `config set`) stays yours.
# Embedder for the vector half of hybrid search: "hashing" works offline with no download.
# Optional: "sentence-transformers:MODEL" or "openai:MODEL@URL" (README, "Search").
# embedder = "hashing"
# dimension = 1024
# How the vector ranking joins BM25: "auto" (rerank for Chinese, Japanese and Korean
# queries, fallback for the others), "fallback" (vectors only when BM25 finds too few: a
# misspelt query), "rerank" (every query, over BM25's candidates, plus a vector scan when
# BM25 finds too few) or "always" (a vector scan every query: for a semantic embedder).
# bench/RESULTS.md has the measurements behind the defaults.
# vector_mode = "auto"
# Weights of the two rankings in the fused (reciprocal rank) score.
# bm25_weight = 1.0
# vector_weight = 1.0

[context]
# Size budget of a context pack's summary_markdown, in characters.
summary_budget_chars = 6000
# How many memories a context pack summarises at most.
max_items = 24
# How long a bootstrap receipt stays valid, in hours.
receipt_ttl_hours = 24

[sync]
# How long a write held back by the update gate can still be resumed, in hours.
sync_intent_ttl_hours = 24
# Timeout of one request to the upstream, in seconds (local requests never wait for it).
upstream_timeout_seconds = 10
# Serve the sync extension (/api/sync/*, README "The sync extension") to downstream daemons.
# false: they are not served (404), as on an upstream without them; downstream daemons then
# pull through AMP's read endpoints (memory map, memory query).
serve_sync_extension = true

[jobs]
# Background job intervals.
checkpoint_seconds = 5
refresh_startup_items_minutes = 10
expire_sync_intents_minutes = 5
poll_updates_minutes = 30
# Push to and pull from the upstream (when one is connected); local writes also trigger it.
sync_upstream_seconds = 30
# After an upgrade that changes how text is indexed, the search index is rebuilt in the
# background in batches: at most this many records, or this many milliseconds, per batch;
# then a pause of rebuild_pause_ms (0: as long as the batch took, so requests get at least
# half the time). Searches answer from the old index meanwhile.
# rebuild_batch_records = 1000
# rebuild_batch_ms = 20
# rebuild_pause_ms = 0

[logging]
# daemon.log (in the state directory) starts anew when it reaches log_max_bytes; the last
# log_backups files are kept beside it as daemon.log.1 (the newest), daemon.log.2, ...
log_max_bytes = 5242880
log_backups = 3
# An access log of every request (access.log beside daemon.log, rotated the same way): off,
# since the request lines name what agents search for.
access_log = false
"""


@dataclass(frozen=True)
class Settings:
    """Resolved settings: file values over embedded defaults, CLI overrides on top."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    max_body_bytes: int = 1_048_576
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    role: str = "local"
    embedder: str = "hashing"
    dimension: int = 1024
    # The hashing vectors' rerank helps Chinese and costs English (tuning halves: MADial-Bench
    # zh MRR@10 0.587 -> 0.612, en 0.552 -> 0.539; English conversations R@10 0.609 ->
    # 0.534), so "auto" reranks CJK queries only (bench/RESULTS.md, state/search.py).
    vector_mode: str = "auto"
    bm25_weight: float = 1.0
    vector_weight: float = 1.0
    summary_budget_chars: int = 6000
    max_items: int = 24
    receipt_ttl_hours: float = 24.0
    sync_intent_ttl_hours: float = 24.0
    upstream_timeout_seconds: float = 10.0
    serve_sync_extension: bool = True
    checkpoint_seconds: float = 5.0
    refresh_startup_items_minutes: float = 10.0
    expire_sync_intents_minutes: float = 5.0
    poll_updates_minutes: float = 30.0
    sync_upstream_seconds: float = 30.0
    rebuild_batch_records: int = 1000
    rebuild_batch_ms: float = 20.0
    rebuild_pause_ms: float = 0.0
    log_max_bytes: int = 5 * 1024 * 1024
    log_backups: int = 3
    access_log: bool = False

    def with_overrides(self, **overrides: Any) -> "Settings":
        """A copy with the non-None overrides applied (e.g. ``--host``/``--port``)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return Settings(**values)


# Which TOML table holds each setting.
SECTIONS: dict[str, str] = {
    "host": "daemon",
    "port": "daemon",
    "max_body_bytes": "daemon",
    "allowed_origins": "daemon",
    "allowed_hosts": "daemon",
    "role": "daemon",
    "embedder": "search",
    "dimension": "search",
    "vector_mode": "search",
    "bm25_weight": "search",
    "vector_weight": "search",
    "summary_budget_chars": "context",
    "max_items": "context",
    "receipt_ttl_hours": "context",
    "sync_intent_ttl_hours": "sync",
    "upstream_timeout_seconds": "sync",
    "serve_sync_extension": "sync",
    "checkpoint_seconds": "jobs",
    "refresh_startup_items_minutes": "jobs",
    "expire_sync_intents_minutes": "jobs",
    "poll_updates_minutes": "jobs",
    "sync_upstream_seconds": "jobs",
    "rebuild_batch_records": "jobs",
    "rebuild_batch_ms": "jobs",
    "rebuild_pause_ms": "jobs",
    "log_max_bytes": "logging",
    "log_backups": "logging",
    "access_log": "logging",
}


def ensure_config_file(path: Path) -> None:
    """Write the commented template if no config file exists yet."""
    if not path.exists():
        write_atomic(path, _TEMPLATE)


def _boolean(value: Any) -> bool:
    """A TOML boolean, or true/false (yes/no, on/off, 1/0) from the command line."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise ValueError(value)


def _coerce(name: str, value: Any) -> Any:
    """Convert a TOML or command-line value to the setting's type, or raise ConfigError."""
    default = getattr(Settings(), name)
    try:
        if isinstance(default, bool):
            result: Any = _boolean(value)
        elif isinstance(default, int):
            if isinstance(value, bool):
                raise TypeError
            result = int(value)
        elif isinstance(default, float):
            result = float(value)
        elif isinstance(default, tuple):
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()]
            result = tuple(str(v) for v in value)
        else:
            result = str(value)
    except (TypeError, ValueError):
        raise ConfigError(f"setting {name!r} must be of type {type(default).__name__}, got {value!r}")
    if name == "vector_mode" and result not in ("auto", "rerank", "always", "fallback"):
        raise ConfigError("vector_mode must be 'auto', 'rerank', 'always' or 'fallback',"
                          f" got {result!r}")
    if name == "role" and result not in ("local", "cloud"):
        raise ConfigError(f"role must be 'local' or 'cloud', got {result!r}")
    if name == "rebuild_pause_ms" and result < 0:
        raise ConfigError(f"setting {name!r} must not be negative, got {result}")
    if name == "port" and not 0 <= result <= 65535:
        raise ConfigError(f"port must be between 0 and 65535, got {result}")
    if name in ("dimension", "max_items", "summary_budget_chars", "max_body_bytes",
                "sync_intent_ttl_hours", "checkpoint_seconds", "refresh_startup_items_minutes",
                "expire_sync_intents_minutes", "poll_updates_minutes", "sync_upstream_seconds",
                "upstream_timeout_seconds", "rebuild_batch_records",
                "rebuild_batch_ms", "log_max_bytes", "log_backups") and result <= 0:
        raise ConfigError(f"setting {name!r} must be positive, got {result}")
    return result


def load_settings(path: Path) -> Settings:
    """Read the config file (creating it from the template if missing)."""
    ensure_config_file(path)
    try:
        document = tomlkit.parse(path.read_text(encoding="utf-8"))
    except Exception as exc:  # tomlkit raises several parse error types
        raise ConfigError(f"cannot parse {path}: {exc}") from exc
    values: dict[str, Any] = {}
    for name, section in SECTIONS.items():
        table = document.get(section)
        if table is not None and name in table:
            try:
                values[name] = _coerce(name, table[name].unwrap() if hasattr(table[name], "unwrap")
                                       else table[name])
            except ConfigError as exc:  # say which file to fix
                raise ConfigError(f"{path}: {exc.message}") from None
    return Settings(**values)


def set_setting(path: Path, name: str, raw_value: str) -> Any:
    """Set one setting in the file, keeping comments and layout; return the stored value."""
    if name not in SECTIONS:
        raise ConfigError(f"unknown setting {name!r}; known: {', '.join(sorted(SECTIONS))}")
    value = _coerce(name, raw_value)
    ensure_config_file(path)
    document = tomlkit.parse(path.read_text(encoding="utf-8"))
    section = SECTIONS[name]
    if section not in document:
        document[section] = tomlkit.table()
    document[section][name] = list(value) if isinstance(value, tuple) else value
    write_atomic(path, tomlkit.dumps(document))
    return value
