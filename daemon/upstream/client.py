"""HTTP to the upstream (httpx, async): AMP's headers on every call, errors sorted into what
the sync engine can act on.

The upstream is any AMP server: another MemoryCloud Companion in the cloud role, or the
MemoryCloud service (whose reference implementation puts errors in ``detail`` and a
sync interrupt in ``detail`` too). Both shapes are read here, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from daemon import __version__
from daemon.runtime.constants import RUNTIME_VERSION
from startup_items.launcher import error_message

if TYPE_CHECKING:  # httpx is imported where a client is made: the daemon starts without it
    import httpx  # (~90 ms of its import, python -X importtime, 2026-12-03)

USER_AGENT = f"memorycloud-companion/{__version__}"


class UpstreamUnreachable(Exception):
    """Connection refused, DNS, TLS, timeout or a 5xx: try again later, nothing is lost."""


@dataclass
class UpstreamRejected(Exception):
    """The upstream answered 4xx: retrying the same request will not help."""

    status: int
    body: Any
    message: str

    def __str__(self) -> str:
        return f"upstream answered {self.status}: {self.message}"


@dataclass
class UpstreamInterrupted(Exception):
    """409 amp.sync-interrupt.v1: the write waits upstream as a sync intent."""

    interrupt: dict[str, Any]

    def __str__(self) -> str:
        return f"upstream interrupted the write (sync intent {self.interrupt.get('sync_intent_id')})"


def sync_interrupt(body: Any) -> dict[str, Any] | None:
    """The amp.sync-interrupt.v1 object in a 409 body, wherever the server put it."""
    if not isinstance(body, dict):
        return None
    for candidate in (
        body,
        body.get("detail"),
        (body.get("error") or {}).get("details"),
        ((body.get("error") or {}).get("details") or {}).get("body"),
    ):
        if isinstance(candidate, dict) and candidate.get("schema") == "amp.sync-interrupt.v1":
            return candidate
    return None


def update_notice(body: Any) -> bool:
    """Whether a response carries a platform-update notice or runtime-update warning."""
    if not isinstance(body, dict):
        return False
    for key in ("platform_update_notice", "update_notice", "runtime_update_warning"):
        if body.get(key):
            return True
    return False


class UpstreamClient:
    """One upstream, one key. ``applied_updates`` is reported in X-MemoryCloud-Applied-Updates."""

    def __init__(
        self,
        url: str,
        key: str | None,
        *,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.key = key
        self.applied_updates: list[str] = []
        self.notices_seen = 0
        import httpx

        self._http = httpx.AsyncClient(
            base_url=self.url, timeout=timeout, transport=transport, headers={"User-Agent": USER_AGENT}
        )

    async def close(self) -> None:
        await self._http.aclose()

    def _headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        headers = {"X-MemoryCloud-Runtime-Version": RUNTIME_VERSION}
        if self.applied_updates:
            headers["X-MemoryCloud-Applied-Updates"] = ",".join(self.applied_updates)
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        headers.update(extra or {})
        return headers

    async def call(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        files: dict[str, Any] | None = None,
        time_limit: float | None = None,
    ) -> Any:
        """The decoded JSON answer of a 2xx, or one of the exceptions above. ``time_limit``:
        this call's, in seconds, instead of the client's (a pull that waits on the server)."""
        import httpx

        try:
            response = await self._http.request(
                method,
                path,
                json=json,
                params=params,
                headers=self._headers(headers),
                files=files,
                timeout=httpx.USE_CLIENT_DEFAULT if time_limit is None else time_limit,
            )
        except httpx.HTTPError as exc:
            raise UpstreamUnreachable(f"{type(exc).__name__}: {exc or 'no answer'}") from exc
        try:
            body = response.json()
        except ValueError:
            body = response.text
        if response.status_code >= 500 or response.status_code == 429:
            raise UpstreamUnreachable(f"upstream answered {response.status_code}: {error_message(body)}")
        if response.status_code == 409 and (interrupt := sync_interrupt(body)) is not None:
            raise UpstreamInterrupted(interrupt)
        if response.status_code >= 400:
            raise UpstreamRejected(response.status_code, body, error_message(body))
        if update_notice(body):
            self.notices_seen += 1
        return body
