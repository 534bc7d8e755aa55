"""The TOML configuration file, read and edited with tomlkit so comments survive, and the
``MEMORYCLOUD_*`` environment overrides.

Every setting is declared once, in the pydantic model of state/settings.py; this module only
moves values between that model, the file and the environment. Every setting has an embedded
default, so the file only needs what the user changed. A key the model does not know (a typo,
or a file written by an older or newer version) is warned about by name, with the closest
setting when there is one, and otherwise ignored: the rest of the file still applies.
"""

from __future__ import annotations

import difflib
import logging
import os
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomlkit

from state.atomic import write_atomic
from state.errors import ConfigError
from state.settings import DEFAULT_PORT, NAMES, SECTIONS, Settings, extra_of

__all__ = [
    "DEFAULT_PORT",
    "ENV_PREFIX",
    "NON_SETTING_VARIABLES",
    "SECTIONS",
    "Settings",
    "ensure_config_file",
    "environment_overrides",
    "environment_variable",
    "load_settings",
    "set_setting",
    "template",
]

log = logging.getLogger(__name__)

ENV_PREFIX = "MEMORYCLOUD_"
# MEMORYCLOUD_* variables that are not settings (paths, secrets backend, keys): neither read
# as overrides nor warned about.
NON_SETTING_VARIABLES = frozenset(
    {
        "MEMORYCLOUD_HOME",  # moves every directory (state/paths.py)
        "MEMORYCLOUD_SECRETS",  # "file" forces the file secret store (state/secrets.py)
        "MEMORYCLOUD_API_KEY",  # the agent key of `memorycloud mcp` (daemon/mcp/stdio.py)
        "MEMORYCLOUD_EMBEDDER_API_KEY",  # the key of an openai: embedder (state/embedders.py)
    }
)

_HEADER = """\
# MemoryCloud Companion configuration.
# Edit by hand or with `memorycloud config set KEY VALUE`; comments are kept. Unknown keys are
# warned about and ignored. MEMORYCLOUD_<SETTING> environment variables (MEMORYCLOUD_PORT=8600)
# override this file.
"""
# Prose about a whole table; each setting's own comment is its field's description.
_SECTION_NOTES = {
    "search": "The search defaults are tuned by measurement and may improve between releases,"
    " so they are left commented out here: a setting you uncomment (or `config set`)"
    " stays yours.",
    "jobs": "Background jobs: how often each runs, in the unit its name says.",
}


def _comment(text: str) -> list[str]:
    return ["# " + line for line in textwrap.wrap(text, width=93)]


def _toml_value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def template() -> str:
    """The commented config file written on first use, generated from the model."""
    lines = [_HEADER.rstrip("\n")]
    for section in dict.fromkeys(SECTIONS.values()):
        lines += ["", f"[{section}]"]
        if section in _SECTION_NOTES:
            lines += _comment(_SECTION_NOTES[section])
        for name in NAMES:
            if SECTIONS[name] != section:
                continue
            field = Settings.model_fields[name]
            lines += _comment(field.description or "")
            assignment = f"{name} = {tomlkit.item(_toml_value(field.default)).as_string()}"
            lines.append(("# " if extra_of(name).get("commented") else "") + assignment)
    return "\n".join(lines) + "\n"


def ensure_config_file(path: Path) -> None:
    """Write the commented template if no config file exists yet."""
    if not path.exists():
        write_atomic(path, template())


def _parse(path: Path) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except Exception as exc:  # tomlkit raises several parse error types
        raise ConfigError(f"cannot parse {path}: {exc}") from exc


def _closest(word: str, candidates: Any) -> str | None:
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def _warn_unknown(path: Path, section: str | None, key: str) -> None:
    """Name an unknown key, where it is, and what was probably meant."""
    where = f"[{section}]" if section else "the top level"
    if key in SECTIONS:
        hint = f"; it belongs in [{SECTIONS[key]}]"
    elif (near := _closest(key, NAMES)) is not None:
        hint = f"; did you mean {near!r} (in [{SECTIONS[near]}])?"
    else:
        hint = ""
    log.warning("%s: unknown key %r in %s is ignored%s", path, key, where, hint)


def _file_values(path: Path, document: tomlkit.TOMLDocument) -> dict[str, Any]:
    """The known settings the file sets (each in its own table); the rest is warned about."""
    values: dict[str, Any] = {}
    for section, table in document.items():
        if not isinstance(table, Mapping):
            _warn_unknown(path, None, section)
            continue
        if section not in SECTIONS.values():
            near = _closest(section, set(SECTIONS.values()))
            log.warning(
                "%s: unknown table [%s] is ignored%s",
                path,
                section,
                f"; did you mean [{near}]?" if near else "",
            )
            continue
        for key, item in table.items():
            if SECTIONS.get(key) == section:
                values[key] = item.unwrap() if hasattr(item, "unwrap") else item
            else:
                _warn_unknown(path, section, key)
    return values


def environment_variable(name: str) -> str:
    """The variable that overrides setting ``name``: ``MEMORYCLOUD_PORT`` for ``port``."""
    return ENV_PREFIX + name.upper()


def environment_overrides(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings ``MEMORYCLOUD_*`` variables override, as raw text by setting name; an
    unknown ``MEMORYCLOUD_*`` variable is warned about (with the closest one)."""
    environ = os.environ if environ is None else environ
    variables = {environment_variable(name): name for name in NAMES}
    found: dict[str, str] = {}
    for variable, text in environ.items():
        if not variable.startswith(ENV_PREFIX) or variable in NON_SETTING_VARIABLES:
            continue
        if variable in variables:
            found[variables[variable]] = text
        else:
            near = _closest(variable, variables)
            log.warning(
                "environment variable %s is not a setting and is ignored%s",
                variable,
                f"; did you mean {near}?" if near else "",
            )
    return found


def load_settings(path: Path, environ: Mapping[str, str] | None = None) -> Settings:
    """Read the config file (creating it from the template if missing), then apply the
    ``MEMORYCLOUD_*`` overrides from ``environ`` (default: the process environment). A bad
    value is a ``ConfigError`` naming the setting and the file (or the variable)."""
    ensure_config_file(path)
    values = _file_values(path, _parse(path))
    refuse_stored_password(values.get("database_url"), path)
    origin = {name: f"{path} [{SECTIONS[name]}]" for name in values}
    for name, text in environment_overrides(environ).items():
        values[name] = text
        origin[name] = environment_variable(name)
    try:
        return Settings(**values)
    except ConfigError as exc:
        problems = exc.details.get("errors", [])
        raise ConfigError(
            "; ".join(f"{origin.get(p['setting'], path)}: {p['problem']}" for p in problems)
            or f"{path}: {exc.message}",
            details=exc.details,
        ) from None


def refuse_stored_password(url: object, path: Path) -> None:
    """A database URL in the config file never holds its password: the file is not a secret
    (it is read by the TUI, copied, backed up). libpq reads PGPASSWORD or ~/.pgpass."""
    from state.pg.engine import has_password

    if isinstance(url, str) and has_password(url):
        raise ConfigError(
            f"{path} [daemon]: database_url holds a password: remove it from the URL and give it"
            " as PGPASSWORD or in ~/.pgpass (or the whole URL as MEMORYCLOUD_DATABASE_URL)"
        )


def set_setting(path: Path, name: str, raw_value: str) -> Any:
    """Set one setting in the file, keeping comments and layout; return the stored value.
    The value is validated by the model first; the file is replaced atomically, so a failure
    leaves the old file whole."""
    if name not in SECTIONS:
        near = _closest(name, NAMES)
        raise ConfigError(
            f"unknown setting {name!r}"
            + (f"; did you mean {near!r}?" if near else "")
            + f" (known: {', '.join(sorted(NAMES))})"
        )
    if name == "database_url":
        refuse_stored_password(raw_value, path)
    # A database URL is checked as the cloud role's (the role may be set after it); loading
    # the file refuses one beside role = "local".
    context = {"role": "cloud"} if name == "database_url" else {}
    value = getattr(Settings(**context, **{name: raw_value}), name)
    ensure_config_file(path)
    document = _parse(path)
    section = SECTIONS[name]
    if section not in document:
        document[section] = tomlkit.table()
    document[section][name] = _toml_value(value)
    write_atomic(path, tomlkit.dumps(document))
    return value
