"""The CLI's HTTP client for the owner-only local API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from daemon.http_clients import verify_tls
from startup_items.launcher import error_message
from state.errors import MemoryCloudError
from state.paths import Paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET

if TYPE_CHECKING:  # imported at the first request: `memorycloud daemon run` loads this module
    import httpx  # with the rest of the CLI and never sends one (httpx: ~90-190 ms of import)


class DaemonAnswered(MemoryCloudError):
    """The daemon refused a request: its HTTP ``status`` and its own error message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"daemon answered {status}: {message}")
        self.status = status


class OwnerClient:
    def __init__(self, url: str, key: str) -> None:
        self.url = url
        self.key = key
        self._http: httpx.Client | None = None  # one per command: one connection, one TLS context

    @classmethod
    def for_installation(cls, paths: Paths, url: str) -> OwnerClient:
        key = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
        if not key:
            raise MemoryCloudError("no owner key found; start the daemon once to create it")
        return cls(url, key)

    def get(self, path: str, **params: Any) -> dict[str, Any]:
        return self._send("GET", path, params=params or None)

    def post(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return self._send("POST", path, json=body or {})

    def delete(self, path: str) -> dict[str, Any]:
        return self._send("DELETE", path)

    def _send(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        import httpx

        if self._http is None:
            self._http = httpx.Client(
                timeout=30, verify=verify_tls(self.url), headers={"Authorization": f"Bearer {self.key}"}
            )
        try:
            response = self._http.request(method, f"{self.url}{path}", **kwargs)
        except httpx.HTTPError as exc:
            raise MemoryCloudError(f"cannot reach the daemon at {self.url}: {exc}") from exc
        if response.status_code >= 400:
            try:
                message = error_message(response.json(), response.text)
            except ValueError:
                message = response.text
            raise DaemonAnswered(response.status_code, message)
        return response.json()
