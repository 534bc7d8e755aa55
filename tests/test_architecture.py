"""Import directions from DESIGN.md: tui -> (HTTP) -> daemon -> startup_items, state."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "state": {"aiohttp", "textual", "daemon", "tui", "startup_items"},
    "startup_items": {"aiohttp", "textual", "daemon", "tui"},
    "tui": {"state", "daemon", "startup_items"},
    "daemon": {"tui", "textual"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_import_directions(package):
    offenders = []
    for path in (ROOT / package).rglob("*.py"):
        bad = _imports(path) & FORBIDDEN[package]
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    # The CLI may open the TUI: that one lazy import is the entry point, not a dependency.
    offenders = [o for o in offenders if not o.startswith("daemon/cli.py imports ['tui']")]
    assert offenders == []
