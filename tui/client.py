"""Async HTTP client for the daemon's API, as the owner."""

from __future__ import annotations

from typing import Any

import httpx


class DaemonError(Exception):
    """The daemon could not be reached or answered with an error."""


class DaemonClient:
    def __init__(self, url: str, key: str, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._client = httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=10,
            transport=transport)

    async def get(self, path: str, **params: Any) -> dict[str, Any]:
        try:
            response = await self._client.get(path, params=params or None)
        except httpx.HTTPError as exc:
            raise DaemonError(f"cannot reach the daemon: {exc}") from exc
        if response.status_code >= 400:
            try:
                message = response.json()["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = response.text
            raise DaemonError(f"{response.status_code}: {message}")
        return response.json()

    async def status(self) -> dict[str, Any]:
        return await self.get("/api/local/status")

    async def me(self) -> dict[str, Any]:
        return (await self.get("/api/me"))["user"]

    async def search(self, workspace_id: str, query: str, limit: int = 20) -> list[dict[str, Any]]:
        result = await self.get(f"/api/workspaces/{workspace_id}/memory/query", q=query, limit=limit)
        return result["items"]

    async def aclose(self) -> None:
        await self._client.aclose()
