"""Apply, check and remove a plan's managed regions in a repository.

Pure file logic: the caller (the daemon) keeps the :class:`FileRecord` of every region it
wrote and passes them back in. Rules:

* Before writing anything, every region is checked for drift: if what is on disk differs
  from what the daemon last wrote there, the plan is not applied at all and the drift is
  reported as a conflict (nothing is overwritten).
* Applying twice changes nothing (the second run finds every region already as desired).
* Removing restores the file byte for byte when nobody touched it since our write; if the
  user edited other parts since, only our region is taken out.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from startup_items.files import missing_dirs, read_text, sha256_text
from startup_items.regions import Region, RegionError
from state.atomic import write_atomic


@dataclass(frozen=True)
class PlannedFile:
    """One region the plan writes: where, how, what, and why (shown to the person)."""

    path: str
    region_id: str
    region: Region
    desired: Any
    purpose: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.path, self.region_id)

    def describe(self, root: Path) -> dict[str, Any]:
        """What the person is shown: the region's content and whether the file changes."""
        target = root / self.path
        error = None
        try:
            current = read_text(target)
            changes = self.region.apply(current, self.desired) != current
        except ValueError as exc:  # RegionError, or a file that is not UTF-8 text
            error = str(exc) if isinstance(exc, RegionError) else "the file is not UTF-8 text"
            changes = True
        return {
            "path": self.path,
            "region_id": self.region_id,
            "kind": self.region.kind,
            "purpose": self.purpose,
            "content": self.region.render(self.desired),
            "exists": target.exists(),
            "changes": changes,
            "error": error,
        }


@dataclass
class FileRecord:
    """What the daemon remembers about a region it wrote."""

    path: str
    region_id: str
    kind: str
    created_file: bool
    created_dirs: list[str]
    original_text: str | None  # the file before our first write (None: did not exist)
    written_sha: str | None  # sha256 of the whole file right after our last write
    region_sha: str | None  # sha256 of the region as extracted after our last write

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Conflict:
    path: str
    region_id: str
    reason: str


@dataclass
class Outcome:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    records: dict[tuple[str, str], FileRecord] = field(default_factory=dict)


def _region_state(root: Path, planned: PlannedFile) -> tuple[str | None, str | None]:
    text = read_text(root / planned.path)
    return text, planned.region.extract(text)


def find_drift(root: Path, planned: PlannedFile, record: FileRecord | None) -> Conflict | None:
    """A conflict if the region on disk is not what the daemon last wrote there."""
    try:
        text, region = _region_state(root, planned)
    except ValueError as exc:  # RegionError, or UnicodeDecodeError for a non-UTF-8 file
        reason = str(exc) if isinstance(exc, RegionError) else "it is not UTF-8 text"
        return Conflict(planned.path, planned.region_id, f"cannot read the file safely: {reason}")
    if record is None:
        if region is None:
            return None
        # A region we have no record of: fine only if it already says exactly what we want.
        desired = planned.region.extract(planned.region.apply(text, planned.desired))
        if region == desired:
            return None
        return Conflict(
            planned.path, planned.region_id, "a MemoryCloud region exists here that this daemon did not write"
        )
    if sha256_text(region) != record.region_sha:
        what = "was deleted" if region is None else "was edited by hand"
        return Conflict(
            planned.path, planned.region_id, f"the managed region {what} since the daemon wrote it"
        )
    return None


def drifted(
    root: Path, files: list[PlannedFile], records: dict[tuple[str, str], FileRecord]
) -> list[Conflict]:
    """Every region whose content on disk is not what the daemon last wrote."""
    return [c for f in files if (c := find_drift(root, f, records.get(f.key)))]


def apply_plan(
    root: Path,
    files: list[PlannedFile],
    records: dict[tuple[str, str], FileRecord],
) -> Outcome:
    """Write every region, or nothing if any region drifted (see module docstring)."""
    outcome = Outcome()
    outcome.conflicts = drifted(root, files, records)
    if outcome.conflicts:
        return outcome
    for planned in files:
        target = root / planned.path
        text = read_text(target)
        new_text = planned.region.apply(text, planned.desired)
        previous = records.get(planned.key)
        if previous is None:
            record = FileRecord(
                planned.path,
                planned.region_id,
                planned.region.kind,
                created_file=text is None,
                created_dirs=missing_dirs(root, planned.path),
                original_text=text,
                written_sha=None,
                region_sha=None,
            )
        else:
            record = FileRecord(**previous.to_dict())
        if new_text == text:
            outcome.unchanged.append(planned.path)
        else:
            write_atomic(target, new_text)
            outcome.written.append(planned.path)
        record.written_sha = sha256_text(new_text)
        record.region_sha = sha256_text(planned.region.extract(new_text))
        outcome.records[planned.key] = record
    return outcome


def verify_plan(root: Path, files: list[PlannedFile]) -> list[str]:
    """Paths whose region on disk is not exactly the plan's (empty list: all installed)."""
    wrong = []
    for planned in files:
        try:
            text, region = _region_state(root, planned)
            expected = planned.region.extract(planned.region.apply(text, planned.desired))
        except ValueError:
            wrong.append(planned.path)
            continue
        if region is None or region != expected:
            wrong.append(planned.path)
    return wrong


def remove_regions(
    root: Path,
    files: list[PlannedFile],
    records: dict[tuple[str, str], FileRecord],
) -> Outcome:
    """Undo our regions: restore untouched files exactly, else cut out only our part.

    All or nothing, like :func:`apply_plan`: if any region drifted, nothing is removed.
    Regions are undone in reverse order of writing, so when several share a file the last
    one written finds the file untouched and restores it byte for byte.
    """
    outcome = Outcome()
    ours = [f for f in files if f.key in records]
    outcome.conflicts = drifted(root, ours, records)
    if outcome.conflicts:
        return outcome
    for planned in reversed(ours):
        record = records[planned.key]
        target = root / planned.path
        text = read_text(target)
        if text is None:
            outcome.removed.append(planned.path)
            continue
        if sha256_text(text) == record.written_sha:
            restored = record.original_text  # untouched since our write: byte-exact undo
        else:
            restored = planned.region.remove(text)
            if record.created_file and not restored.strip(" \n{}"):
                restored = None
        if restored is None:
            target.unlink()
        else:
            write_atomic(target, restored)
        outcome.removed.append(planned.path)
        _remove_empty_dirs(root, record.created_dirs)
    return outcome


def _remove_empty_dirs(root: Path, created: list[str]) -> None:
    for relative in reversed(created):  # innermost first
        try:
            os.rmdir(root / relative)
        except OSError:
            pass  # not empty (the user put something there) or already gone
