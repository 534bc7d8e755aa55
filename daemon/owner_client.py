"""The CLI's HTTP client for the owner-only local API."""

from __future__ import annotations

import json
from typing import Any

from daemon.http_clients import Unreachable, local_request
from startup_items.launcher import error_message
from state.errors import MemoryCloudError
from state.paths import Paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET


class DaemonAnswered(MemoryCloudError):
    """The daemon refused a request: its HTTP ``status`` and its own error message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"daemon answered {status}: {message}")
        self.status = status


class OwnerClient:
    def __init__(self, url: str, key: str) -> None:
        self.url = url
        self.key = key

    @classmethod
    def for_installation(cls, paths: Paths, url: str) -> OwnerClient:
        key = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
        if not key:
            raise MemoryCloudError("no owner key found; start the daemon once to create it")
        return cls(url, key)

    def get(self, path: str, **params: Any) -> dict[str, Any]:
        return self._send("GET", path, params=params or None)

    def post(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return self._send("POST", path, body=body or {})

    def delete(self, path: str) -> dict[str, Any]:
        return self._send("DELETE", path)

    def _send(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.key}"}
        try:
            status, text = local_request(method, f"{self.url}{path}", headers=headers, **kwargs)
        except Unreachable as exc:
            raise MemoryCloudError(f"cannot reach the daemon at {self.url}: {exc}") from exc
        try:
            data = json.loads(text) if text else None
        except ValueError:
            data = None
        if status >= 400:
            raise DaemonAnswered(status, error_message(data, text) if data is not None else text)
        if data is None:
            raise MemoryCloudError(f"the daemon at {self.url} answered {path} with no JSON: {text[:200]!r}")
        return data
