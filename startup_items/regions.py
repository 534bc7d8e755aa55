"""Managed regions: the part of a file the daemon owns, and nothing else.

* ``MarkdownBlock``: text between ``<!-- memorycloud:begin ID -->`` and ``<!-- memorycloud:end
  ID -->`` markers; the rest of the file is the user's.
* ``JsonEntries``: keys (key-level merge) and array entries the daemon added to a JSON file;
  array entries are recognised by a marker string in them (the launcher path).
* ``WholeFile``: a file the daemon creates and owns entirely.

Each region can ``extract`` what is on disk now (for drift detection), ``apply`` the desired
content, and ``remove`` itself. ``extract`` returns a canonical string, so "edited by hand" is
a simple comparison with the digest recorded at the last write.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Protocol


class RegionError(ValueError):
    """The file cannot be parsed, so the region cannot be found safely."""


class Region(Protocol):
    @property
    def kind(self) -> str: ...

    def extract(self, text: str | None) -> str | None: ...
    def apply(self, text: str | None, desired: Any) -> str: ...
    def remove(self, text: str) -> str: ...
    def render(self, desired: Any) -> str: ...


# -- Markdown -------------------------------------------------------------------------------


@dataclass(frozen=True)
class MarkdownBlock:
    block_id: str
    kind: str = "markdown_block"

    @property
    def begin(self) -> str:
        return f"<!-- memorycloud:begin {self.block_id} (managed by MemoryCloud Companion; edits here are reported, not overwritten) -->"

    @property
    def end(self) -> str:
        return f"<!-- memorycloud:end {self.block_id} -->"

    def _pattern(self) -> re.Pattern[str]:
        return re.compile(
            re.escape(f"<!-- memorycloud:begin {self.block_id}")
            + r"[^\n]*-->\n(.*?)\n?"
            + re.escape(self.end),
            re.S,
        )

    def render(self, desired: str) -> str:
        return f"{self.begin}\n{desired.rstrip()}\n{self.end}"

    def extract(self, text: str | None) -> str | None:
        if text is None:
            return None
        match = self._pattern().search(text)
        return match.group(0) if match else None

    def apply(self, text: str | None, desired: str) -> str:
        block = self.render(desired)
        if not text:
            return block + "\n"
        match = self._pattern().search(text)
        if match:
            return text[: match.start()] + block + text[match.end() :]
        separator = "\n" if text.endswith("\n") else "\n\n"
        return f"{text}{separator}{block}\n"

    def remove(self, text: str) -> str:
        match = self._pattern().search(text)
        if not match:
            return text
        before, after = text[: match.start()], text[match.end() :]
        # Undo what apply() added around the block: the newline after it and the blank line
        # before it. (A file that had no final newline gets one; only an untouched file is
        # restored byte for byte, by the installer, from the original.)
        if after.startswith("\n"):
            after = after[1:]
        if before.endswith("\n\n"):
            before = before[:-1]
        return before + after


# -- JSON --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JsonEntries:
    """Desired value: ``{"keys": {"a.b": value}, "entries": {"hooks.SessionStart": [entry]}}``.

    ``keys`` are set (key-level merge); ``entries`` are appended to arrays and recognised
    later by ``marker`` occurring in their JSON.
    """

    marker: str = ""  # only used with array_paths: entries whose JSON contains it are ours
    kind: str = "json_merge"
    key_paths: tuple[str, ...] = field(default_factory=tuple)
    array_paths: tuple[str, ...] = field(default_factory=tuple)

    @staticmethod
    def _load(text: str | None) -> dict[str, Any]:
        if text is None or not text.strip():
            return {}
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RegionError(f"not valid JSON (line {exc.lineno}): {exc.msg}") from None
        if not isinstance(data, dict):
            raise RegionError("the JSON file is not an object")
        return data

    @staticmethod
    def _indent(text: str | None) -> int:
        """Keep the user's indentation (default 2)."""
        if text:
            match = re.search(r"\n( +)\S", text)
            if match:
                return len(match.group(1))
        return 2

    @staticmethod
    def _walk(data: dict[str, Any], dotted: str, create: bool) -> tuple[dict[str, Any] | None, str]:
        *parents, last = dotted.split(".")
        node: Any = data
        for key in parents:
            if not isinstance(node, dict):
                return None, last
            if key not in node:
                if not create:
                    return None, last
                node[key] = {}
            node = node[key]
        return (node if isinstance(node, dict) else None), last

    def _owned(self, data: dict[str, Any]) -> dict[str, Any]:
        owned: dict[str, Any] = {}
        for dotted in self.key_paths:
            parent, last = self._walk(data, dotted, create=False)
            if parent is not None and last in parent:
                owned[f"key:{dotted}"] = parent[last]
        for dotted in self.array_paths:
            parent, last = self._walk(data, dotted, create=False)
            items = parent.get(last) if parent is not None else None
            if isinstance(items, list):
                mine = [e for e in items if self.marker in json.dumps(e, ensure_ascii=False)]
                if mine:
                    owned[f"entries:{dotted}"] = mine
        return owned

    def extract(self, text: str | None) -> str | None:
        if text is None:
            return None
        owned = self._owned(self._load(text))
        return json.dumps(owned, sort_keys=True, ensure_ascii=False) if owned else None

    def render(self, desired: dict[str, Any]) -> str:
        return json.dumps(desired, indent=2, ensure_ascii=False)

    def _strip(self, data: dict[str, Any]) -> None:
        for dotted in self.array_paths:
            parent, last = self._walk(data, dotted, create=False)
            if parent is not None and isinstance(parent.get(last), list):
                parent[last] = [
                    e for e in parent[last] if self.marker not in json.dumps(e, ensure_ascii=False)
                ]

    def apply(self, text: str | None, desired: dict[str, Any]) -> str:
        data = self._load(text)
        self._strip(data)
        for dotted, value in desired.get("keys", {}).items():
            parent, last = self._walk(data, dotted, create=True)
            if parent is None:
                raise RegionError(f"cannot set {dotted}: a parent is not an object")
            parent[last] = value
        for dotted, entries in desired.get("entries", {}).items():
            parent, last = self._walk(data, dotted, create=True)
            if parent is None or not isinstance(parent.setdefault(last, []), list):
                raise RegionError(f"cannot add to {dotted}: it is not an array")
            parent[last].extend(entries)
        return json.dumps(data, indent=self._indent(text), ensure_ascii=False) + "\n"

    def remove(self, text: str) -> str:
        data = self._load(text)
        self._strip(data)
        for dotted in self.key_paths:
            parent, last = self._walk(data, dotted, create=False)
            if parent is not None:
                parent.pop(last, None)
        for dotted in (*self.array_paths, *self.key_paths):
            self._prune(data, dotted)
        return json.dumps(data, indent=self._indent(text), ensure_ascii=False) + "\n"

    def _prune(self, data: dict[str, Any], dotted: str) -> None:
        """Drop containers our entries leave empty, innermost first."""
        parts = dotted.split(".")
        for depth in range(len(parts), 0, -1):
            parent, last = self._walk(data, ".".join(parts[:depth]), create=False)
            if parent is not None and parent.get(last) in ([], {}):
                del parent[last]


# -- whole files --------------------------------------------------------------------------------


@dataclass(frozen=True)
class WholeFile:
    kind: str = "whole_file"

    def render(self, desired: str) -> str:
        return desired

    def extract(self, text: str | None) -> str | None:
        return text

    def apply(self, text: str | None, desired: str) -> str:
        return desired

    def remove(self, text: str) -> str:
        return ""


# -- TOML -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TomlTable:
    """One table the daemon owns in a TOML file (e.g. ``mcp_servers.memorycloud`` in Codex's
    config.toml), edited with tomlkit so the user's comments and layout survive."""

    dotted: str
    kind: str = "toml_table"

    @staticmethod
    def _load(text: str | None) -> Any:
        import tomlkit

        try:
            return tomlkit.parse(text or "")
        except Exception as exc:  # tomlkit has several parse error classes
            raise RegionError(f"not valid TOML: {exc}") from None

    def _parent(self, document: Any, create: bool) -> tuple[Any, str]:
        import tomlkit

        *parents, last = self.dotted.split(".")
        node = document
        for key in parents:
            if key not in node:
                if not create:
                    return None, last
                node[key] = tomlkit.table(is_super_table=True)
            node = node[key]
        return node, last

    def render(self, desired: dict[str, Any]) -> str:
        return json.dumps(desired, indent=2, ensure_ascii=False)

    def extract(self, text: str | None) -> str | None:
        if text is None:
            return None
        parent, last = self._parent(self._load(text), create=False)
        if parent is None or last not in parent:
            return None
        return json.dumps(parent[last].unwrap(), sort_keys=True, ensure_ascii=False)

    def apply(self, text: str | None, desired: dict[str, Any]) -> str:
        import tomlkit

        document = self._load(text)
        parent, last = self._parent(document, create=True)
        table = tomlkit.table()
        for key, value in desired.items():
            table[key] = value
        parent[last] = table
        return tomlkit.dumps(document)

    def remove(self, text: str) -> str:
        import tomlkit

        document = self._load(text)
        parent, last = self._parent(document, create=False)
        if parent is not None and last in parent:
            del parent[last]
        parts = self.dotted.split(".")[:-1]
        while parts:  # drop the super-tables we emptied
            node, key = TomlTable(".".join(parts))._parent(document, create=False)
            if node is not None and key in node and not node[key]:
                del node[key]
            parts.pop()
        return tomlkit.dumps(document)
