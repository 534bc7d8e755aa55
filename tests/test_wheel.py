"""A non-editable install carries everything the product reads at run time.

`pipx install` / `uv tool install` install the wheel, not the checkout: a file the code reads
from its own package directory but the wheel leaves out works in every editable test and
fails only for users. Built offline from a copy of the checkout (no build isolation, no index).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("daemon", "state", "startup_items", "tui")
# Reads relative to a module: Path(__file__).parent / "x", importlib.resources.files(...) / "x".
READS = re.compile(
    r"""(?:Path\(__file__\)\.(?:resolve\(\)\.)?parent|files\([^)]*\))\s*(?:/|\.joinpath\()\s*["']([^"']+)["']"""
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for package in PACKAGES:  # a copy: building in place would write build/ into the checkout
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "-w",
            str(tmp / "dist"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    (path,) = (tmp / "dist").glob("memorycloud_companion-*.whl")
    return path


def _members(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_every_tracked_package_file_is_in_the_wheel(wheel):
    listed = subprocess.run(
        ["git", "ls-files", "--", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    # Deleted but not yet committed files are still listed by git; only what exists counts.
    tracked = {name for name in listed if (ROOT / name).is_file()}
    assert {"startup_items/launcher.py", "daemon/cli/__init__.py", "state/migrations/__init__.py"} <= tracked
    missing = sorted(tracked - _members(wheel))
    assert missing == [], f"add these to [tool.setuptools.package-data] in pyproject.toml: {missing}"


def test_files_the_code_reads_beside_itself_are_in_the_wheel(wheel):
    members = _members(wheel)
    reads = []
    for package in PACKAGES:
        for module in (ROOT / package).rglob("*.py"):
            for name in READS.findall(module.read_text(encoding="utf-8")):
                reads.append(module.parent.relative_to(ROOT).joinpath(name).as_posix())
    assert "startup_items/launcher.py" in reads  # the scan finds the read we know of
    assert sorted(set(reads) - members) == []


def test_the_installed_wheel_runs_from_its_own_files(wheel, tmp_path):
    """Unpacked like an installer does, outside the checkout: imports and reads work."""
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    entry_points = next(site.glob("*.dist-info")).joinpath("entry_points.txt").read_text()
    assert "memorycloud = daemon.cli:main" in entry_points
    script = f"""
import importlib, pkgutil, sys
sys.path.insert(0, {str(site)!r})
for package in {PACKAGES!r}:
    module = importlib.import_module(package)
    assert module.__file__.startswith({str(site)!r}), module.__file__
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        if info.name.endswith(".__main__"):  # importing it runs the CLI
            continue
        loaded = importlib.import_module(info.name)
        assert loaded.__file__.startswith({str(site)!r}), loaded.__file__
from startup_items.runtimes import launcher_source
assert "def main" in launcher_source()
from daemon.cli import build_parser
build_parser().parse_args(["service", "status"])
print("ok")
"""
    # -P: not the checkout's directories; cwd elsewhere for the same reason.
    ran = subprocess.run(
        [sys.executable, "-P", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0 and ran.stdout.strip() == "ok", ran.stderr
