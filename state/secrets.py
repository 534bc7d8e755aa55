"""Secrets (the owner key, later upstream keys): the OS keyring where a backend exists,
otherwise a JSON file that only the user can read.

``MEMORYCLOUD_SECRETS=file`` forces the file backend (tests, headless servers with a broken
keyring). The chosen backend is reported by ``memorycloud doctor``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Protocol

from state.atomic import PRIVATE, write_atomic

SERVICE = "memorycloud-companion"


class SecretStore(Protocol):
    """Where secrets live; ``describe()`` names the backend for humans."""

    def get(self, name: str) -> str | None: ...
    def set(self, name: str, value: str) -> None: ...
    def delete(self, name: str) -> None: ...
    def describe(self) -> str: ...


class FileSecretStore:
    """A JSON file with mode 0600 in the config directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, str]:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}

    def _write(self, data: dict[str, str]) -> None:
        # 0600 from the temp file's creation on: the secret is never readable by others.
        write_atomic(self.path, json.dumps(data, indent=2), mode=PRIVATE)

    def get(self, name: str) -> str | None:
        return self._read().get(name)

    def set(self, name: str, value: str) -> None:
        data = self._read()
        data[name] = value
        self._write(data)

    def delete(self, name: str) -> None:
        data = self._read()
        if data.pop(name, None) is not None:
            self._write(data)

    def describe(self) -> str:
        return f"file ({self.path}, mode 0600)"


class KeyringSecretStore:
    """The OS keyring through the ``keyring`` package."""

    def __init__(self, backend: object) -> None:
        self.backend = backend

    def get(self, name: str) -> str | None:
        return self.backend.get_password(SERVICE, name)  # type: ignore[attr-defined]

    def set(self, name: str, value: str) -> None:
        self.backend.set_password(SERVICE, name, value)  # type: ignore[attr-defined]

    def delete(self, name: str) -> None:
        import keyring.errors

        try:
            self.backend.delete_password(SERVICE, name)  # type: ignore[attr-defined]
        except keyring.errors.PasswordDeleteError:
            pass

    def describe(self) -> str:
        return f"OS keyring ({type(self.backend).__module__}.{type(self.backend).__name__})"


def _usable_keyring() -> object | None:
    """The keyring backend if a real one exists (not the fail/null backends), else None."""
    try:
        import keyring
        from keyring.backends import fail

        backend = keyring.get_keyring()
    except Exception:
        return None
    if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 0) <= 0:
        return None
    module = type(backend).__module__
    if module.startswith(("keyring.backends.null", "keyrings.alt")):
        return None  # plaintext or no-op backends are no better than our own file
    return backend


def open_secret_store(secrets_file: Path) -> SecretStore:
    """The keyring when usable (and not overridden), else the 0600 file."""
    if os.environ.get("MEMORYCLOUD_SECRETS", "").lower() != "file":
        backend = _usable_keyring()
        if backend is not None:
            return KeyringSecretStore(backend)
    return FileSecretStore(secrets_file)
