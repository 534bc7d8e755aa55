"""Async HTTP client for the daemon's API, as the owner."""

from __future__ import annotations

from typing import Any

import httpx

# The one helper every client of the daemon shares (standard library only; see there).
from startup_items.launcher import error_message


class DaemonError(Exception):
    """The daemon could not be reached or answered with an error."""


class DaemonClient:
    def __init__(self, url: str, key: str, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.url = url
        # The daemon is on loopback: not through a proxy from HTTP_PROXY (trust_env), and no
        # CA bundle loaded for its plain http:// URL (47 ms a client, measured).
        self._client = httpx.AsyncClient(
            base_url=url,
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
            transport=transport,
            trust_env=False,
            verify=url.startswith("https://"),
        )

    async def request(
        self, method: str, path: str, body: dict[str, Any] | None = None, **params: Any
    ) -> dict[str, Any]:
        try:
            response = await self._client.request(
                method, path, json=body, params={k: v for k, v in params.items() if v} or None
            )
        except httpx.HTTPError as exc:
            raise DaemonError(f"cannot reach the daemon at {self.url}: {exc}") from exc
        if response.status_code >= 400:
            try:
                message = error_message(response.json(), response.text)
            except ValueError:
                message = response.text
            raise DaemonError(f"{response.status_code}: {message}")
        return response.json()

    async def get(self, path: str, **params: Any) -> dict[str, Any]:
        return await self.request("GET", path, **params)

    async def post(self, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.request("POST", path, body or {})

    async def status(self) -> dict[str, Any]:
        return await self.get("/api/local/status")

    async def aclose(self) -> None:
        await self._client.aclose()
