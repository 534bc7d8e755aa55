"""``memorycloud config show|set|describe`` in process: everything they list comes from the
settings model."""

from __future__ import annotations

import json

from daemon.cli import main
from state.settings import NAMES


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_config_describe_lists_every_setting_of_the_model(capsys):
    code, out, _ = run(capsys, "config", "describe", "--json")
    rows = json.loads(out)["settings"]
    assert code == 0 and [row["name"] for row in rows] == list(NAMES)
    code, out, _ = run(capsys, "config", "describe")
    assert "[daemon] port (int; default 8517; between 0 and 65535; env MEMORYCLOUD_PORT)" in out


def test_config_show_names_environment_overrides(capsys, monkeypatch):
    assert run(capsys, "config", "set", "port", "9123")[0] == 0
    monkeypatch.setenv("MEMORYCLOUD_MAX_ITEMS", "7")
    code, out, _ = run(capsys, "config", "show", "--json")
    shown = json.loads(out)
    assert code == 0 and list(shown["settings"]) == list(NAMES)
    assert shown["settings"]["port"] == 9123 and shown["settings"]["max_items"] == 7
    assert shown["environment"] == {"max_items": "MEMORYCLOUD_MAX_ITEMS"}
    code, out, _ = run(capsys, "config", "show")
    assert "max_items = 7  # from MEMORYCLOUD_MAX_ITEMS" in out


def test_config_set_refuses_a_bad_value_and_notes_an_override(capsys, monkeypatch):
    code, _, err = run(capsys, "config", "set", "port", "nope")
    assert code == 1 and "setting 'port' must be of type int, got 'nope'" in err
    monkeypatch.setenv("MEMORYCLOUD_PORT", "8600")
    code, out, _ = run(capsys, "config", "set", "port", "9000")
    assert code == 0 and "MEMORYCLOUD_PORT overrides it while it is set" in out


def test_a_bad_environment_value_is_a_clear_cli_error(capsys, monkeypatch):
    monkeypatch.setenv("MEMORYCLOUD_PORT", "high")
    code, _, err = run(capsys, "config", "show")
    assert code == 1 and "memorycloud: MEMORYCLOUD_PORT: setting 'port' must be of type int" in err
    assert "Traceback" not in err
