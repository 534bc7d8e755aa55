"""How the daemon's own callers (the CLI, the MCP bridge, the mem1 client, health probes)
make their HTTP requests."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode, urlsplit

# The CLI's requests go to the daemon on loopback: never through a proxy that HTTP_PROXY or
# http_proxy names (urllib would otherwise send them there).
_LOCAL = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Unreachable(OSError):
    """No answer: refused, reset, timed out or not resolvable."""


def verify_tls(url: str) -> bool:
    """For an httpx client of ``url`` (the mem1 client's server): verify certificates for
    https://; a plain http:// URL never uses TLS, so it gets no verifying context, whose CA
    bundle costs 47 ms a client to load (cProfile, 2026-12-03)."""
    return urlsplit(url).scheme == "https"


def local_request(
    method: str,
    url: str,
    *,
    params: dict[str, Any] | None = None,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
) -> tuple[int, str]:
    """One request to the local daemon, with the standard library: (status, body text); a
    4xx or 5xx is an answer too. ``params`` left out when None; ``body`` sent as JSON.

    Standard library, not httpx: importing httpx took ~190 ms of every CLI command's ~0.5 s
    start (python -X importtime, 2026-12-03), for a few requests to 127.0.0.1."""
    query = {key: value for key, value in (params or {}).items() if value is not None}
    if query:
        url += "?" + urlencode(query, doseq=True)
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with _LOCAL.open(request, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:  # an answer, with a status of 400 or more
        with exc:
            return exc.code, exc.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:  # cut off too
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise Unreachable(f"{type(reason).__name__}: {reason}") from exc
