"""How the daemon's own callers (the CLI, the MCP bridge, the mem1 client, health probes)
make their httpx clients."""

from __future__ import annotations

from urllib.parse import urlsplit


def verify_tls(url: str) -> bool:
    """Verify certificates for an https:// URL; a plain http:// one (the daemon on loopback)
    never uses TLS, so it gets no verifying context.

    httpx builds an SSL context for every client it makes, and a verifying one loads the CA
    bundle: 47 ms each here. `memorycloud connect` made six (one per ``httpx.request``), 280 ms
    of its 1.2 s (cProfile, 2026-12-03)."""
    return urlsplit(url).scheme == "https"
