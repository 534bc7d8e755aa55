"""Config from one schema source (issue 17): the pydantic model's validation, unknown keys
warned about by name, MEMORYCLOUD_* environment overrides, atomic writes that keep comments."""

from __future__ import annotations

import logging

import pytest
import tomlkit
from pydantic import ValidationError

from state import atomic
from state.config import NON_SETTING_VARIABLES, SECTIONS, Settings, load_settings, set_setting, template
from state.errors import ConfigError
from state.settings import NAMES, describe_settings


def write(paths, text: str) -> None:
    paths.config_file.write_text(text, encoding="utf-8")


def test_unknown_keys_are_warned_by_name_with_a_suggestion_and_the_rest_applies(paths, caplog):
    write(
        paths,
        "[daemon]\nprot = 9000\nport = 9001\n"
        '[search]\nvector_mod = "rerank"\nvector_mode = "always"\nmax_items = 3\n'
        "[futur]\nanything = 1\n"
        "stray = 1\n",
    )
    with caplog.at_level(logging.WARNING, logger="state.config"):
        settings = load_settings(paths.config_file, environ={})
    assert (settings.port, settings.vector_mode, settings.max_items) == (9001, "always", 24)
    messages = [r.getMessage() for r in caplog.records]
    text = "\n".join(messages)
    assert all(str(paths.config_file) in m for m in messages)
    assert "unknown key 'prot' in [daemon]" in text and "did you mean 'port'" in text
    assert "unknown key 'vector_mod' in [search]" in text and "did you mean 'vector_mode'" in text
    # A known setting in the wrong table is named with the table it belongs in.
    assert "unknown key 'max_items' in [search]" in text and "belongs in [context]" in text
    assert "unknown table [futur]" in text
    # tomlkit puts a key after a table into that table: [futur] is unknown as a whole.
    assert len(messages) == 4


def test_the_environment_overrides_the_file_with_the_settings_types(paths, caplog):
    write(paths, '[daemon]\nport = 9001\nhost = "127.0.0.1"\n[logging]\naccess_log = false\n')
    environ = {
        "MEMORYCLOUD_PORT": "8600",
        "MEMORYCLOUD_VECTOR_MODE": "rerank",
        "MEMORYCLOUD_ACCESS_LOG": "on",
        "MEMORYCLOUD_BM25_WEIGHT": "0.5",
        "MEMORYCLOUD_ALLOWED_HOSTS": "a.example, b.example",
        **{name: "whatever" for name in NON_SETTING_VARIABLES},
    }
    with caplog.at_level(logging.WARNING, logger="state.config"):
        settings = load_settings(paths.config_file, environ=environ)
    assert settings.port == 8600 and type(settings.port) is int
    assert settings.vector_mode == "rerank" and settings.access_log is True
    assert settings.bm25_weight == 0.5 and settings.allowed_hosts == ("a.example", "b.example")
    assert settings.host == "127.0.0.1"  # the file still applies where nothing overrides it
    assert caplog.records == []  # MEMORYCLOUD_HOME, _SECRETS, _API_KEY ... are not settings


def test_an_unknown_memorycloud_variable_is_warned_about(paths, caplog):
    with caplog.at_level(logging.WARNING, logger="state.config"):
        settings = load_settings(paths.config_file, environ={"MEMORYCLOUD_PROT": "1"})
    assert settings.port == 8517
    assert "MEMORYCLOUD_PROT is not a setting" in caplog.text
    assert "did you mean MEMORYCLOUD_PORT?" in caplog.text


def test_the_process_environment_is_read_by_default(paths, monkeypatch):
    monkeypatch.setenv("MEMORYCLOUD_PORT", "8601")
    assert load_settings(paths.config_file).port == 8601


@pytest.mark.parametrize(
    "variable, value, message",
    [
        ("MEMORYCLOUD_PORT", "abc", "setting 'port' must be of type int, got 'abc'"),
        ("MEMORYCLOUD_PORT", "70000", "setting 'port' must be between 0 and 65535"),
        ("MEMORYCLOUD_VECTOR_MODE", "sometimes", "must be one of 'auto', 'fallback', 'rerank'"),
        ("MEMORYCLOUD_ACCESS_LOG", "maybe", "setting 'access_log' must be of type bool"),
        ("MEMORYCLOUD_REBUILD_PAUSE_MS", "-1", "setting 'rebuild_pause_ms' must not be negative"),
    ],
)
def test_a_bad_environment_value_names_the_variable(paths, variable, value, message):
    with pytest.raises(ConfigError, match=f"^{variable}: .*{message}"):
        load_settings(paths.config_file, environ={variable: value})


@pytest.mark.parametrize(
    "line, message",
    [
        ("[daemon]\nport = 70000", "[daemon]: setting 'port' must be between 0 and 65535, got 70000"),
        ("[daemon]\nport = true", "[daemon]: setting 'port' must be of type int, got True"),
        ("[daemon]\nport = 1.5", "[daemon]: setting 'port' must be of type int, got 1.5"),
        ("[daemon]\nhost = 5", "[daemon]: setting 'host' must be of type str, got 5"),
        ('[daemon]\nrole = "team"', "setting 'role' must be one of 'local', 'cloud', got 'team'"),
        ("[search]\ndimension = 0", "[search]: setting 'dimension' must be positive, got 0"),
        ("[daemon]\nallowed_hosts = [1]", "setting 'allowed_hosts' must be of type list of strings"),
    ],
)
def test_a_bad_file_value_names_the_setting_and_the_file(paths, line, message):
    write(paths, line + "\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(paths.config_file, environ={})
    assert caught.value.message.startswith(str(paths.config_file))
    assert message in caught.value.message


def test_every_bad_value_is_named_at_once(paths):
    write(paths, "[daemon]\nport = -1\n[context]\nmax_items = 0\n")
    with pytest.raises(ConfigError, match="'port' .*; .*'max_items'"):
        load_settings(paths.config_file, environ={})


def test_construction_validates_with_config_errors():
    assert Settings(embedder="x", dimension=16).dimension == 16
    assert Settings(receipt_ttl_hours=2).receipt_ttl_hours == 2.0
    with pytest.raises(ConfigError, match="setting 'port' must be between 0 and 65535"):
        Settings(port=-1)
    with pytest.raises(ConfigError, match="unknown setting 'nonsense'"):
        Settings(nonsense=1)
    with pytest.raises(ConfigError, match="setting 'max_items' must be of type int"):
        Settings(max_items=True)
    assert Settings().with_overrides(port=9000, host=None).port == 9000
    with pytest.raises(ConfigError, match="'role' must be one of"):
        Settings().with_overrides(role="team")
    with pytest.raises(ValidationError, match="frozen"):
        Settings().port = 1  # frozen, as the dataclass was


def test_set_setting_validates_before_writing(paths):
    load_settings(paths.config_file, environ={})
    before = paths.config_file.read_text()
    for name, value in (("port", "65536"), ("vector_mode", "x"), ("access_log", "maybe")):
        with pytest.raises(ConfigError, match=f"setting '{name}'"):
            set_setting(paths.config_file, name, value)
    with pytest.raises(ConfigError, match="unknown setting 'prot'; did you mean 'port'"):
        set_setting(paths.config_file, "prot", "1")
    assert paths.config_file.read_text() == before


def test_set_setting_keeps_comments_and_types(paths):
    write(paths, "# my own note\n[daemon]\nport = 9001  # the port I like\n")
    assert set_setting(paths.config_file, "port", "9002") == 9002
    assert set_setting(paths.config_file, "allowed_hosts", "a.example,b.example") == (
        "a.example",
        "b.example",
    )
    assert set_setting(paths.config_file, "receipt_ttl_hours", "2") == 2.0
    text = paths.config_file.read_text()
    assert text.startswith("# my own note\n") and "# the port I like" in text
    document = tomlkit.parse(text)
    assert document["daemon"]["allowed_hosts"] == ["a.example", "b.example"]
    assert document["context"]["receipt_ttl_hours"] == 2.0
    settings = load_settings(paths.config_file, environ={})
    assert (settings.port, settings.allowed_hosts) == (9002, ("a.example", "b.example"))


def test_set_setting_is_atomic(paths, monkeypatch):
    set_setting(paths.config_file, "port", "9001")
    before = paths.config_file.read_bytes()

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        set_setting(paths.config_file, "port", "9002")
    assert paths.config_file.read_bytes() == before
    assert (
        sorted(p.name for p in paths.config_file.parent.iterdir() if p.name.startswith(".config.toml")) == []
    )


def test_the_template_is_derived_from_the_model(paths):
    text = template()
    document = tomlkit.parse(text)
    for name in NAMES:  # every setting is in the template, in its table (maybe commented out)
        assert f"\n{name} = " in text or f"\n# {name} = " in text, name
    assert set(document) == set(SECTIONS.values())
    assert "# Address the daemon listens on" in text and '# embedder = "hashing"' in text
    load_settings(paths.config_file, environ={})  # written on first use
    assert paths.config_file.read_text() == text
    assert load_settings(paths.config_file, environ={}) == Settings()


def test_describe_settings_covers_the_model():
    rows = {row["name"]: row for row in describe_settings()}
    assert tuple(rows) == NAMES == tuple(SECTIONS)
    assert rows["port"]["bounds"] == "between 0 and 65535" and rows["port"]["type"] == "int"
    assert rows["vector_mode"]["choices"] == ["auto", "fallback", "rerank", "always"]
    assert all(row["description"] for row in rows.values())
