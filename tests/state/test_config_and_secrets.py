"""Config file (tomlkit, comments kept), MEMORYCLOUD_HOME, and the secrets file fallback."""

import os
import stat

import pytest

from state.config import load_settings, set_setting
from state.errors import ConfigError
from state.paths import resolve_paths
from state.secrets import FileSecretStore, open_secret_store


def test_memorycloud_home_moves_every_directory(isolated_home):
    paths = resolve_paths()
    for directory in (paths.config_dir, paths.data_dir, paths.state_dir, paths.cache_dir):
        assert str(directory).startswith(str(isolated_home))


def test_defaults_then_set_keeps_comments(paths):
    settings = load_settings(paths.config_file)
    assert (settings.host, settings.port) == ("127.0.0.1", 8517)
    set_setting(paths.config_file, "port", "9001")
    text = paths.config_file.read_text()
    assert "# Address the daemon listens on" in text
    assert load_settings(paths.config_file).port == 9001


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("port", "abc", "must be of type int"),
        ("port", "70000", "between 0 and 65535"),
        ("nonsense", "1", "unknown setting"),
        ("dimension", "0", "must be positive"),
    ],
)
def test_bad_settings_are_refused(paths, key, value, message):
    with pytest.raises(ConfigError, match=message):
        set_setting(paths.config_file, key, value)


def test_broken_config_file_is_a_clear_error(paths):
    paths.config_file.write_text("[daemon\nport = ")
    with pytest.raises(ConfigError, match="cannot parse"):
        load_settings(paths.config_file)


def test_file_secret_store_is_user_only(paths):
    secrets = open_secret_store(paths.secrets_file)
    assert isinstance(secrets, FileSecretStore)
    secrets.set("owner_key", "mco_secret")
    mode = stat.S_IMODE(os.stat(paths.secrets_file).st_mode)
    assert mode == 0o600
    assert open_secret_store(paths.secrets_file).get("owner_key") == "mco_secret"
    secrets.delete("owner_key")
    assert secrets.get("owner_key") is None
