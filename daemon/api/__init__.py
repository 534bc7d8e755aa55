"""HTTP handlers grouped by dialect. Each module exports ``ENDPOINTS``."""

from __future__ import annotations

from daemon.endpoints import Endpoint


def all_endpoints() -> list[Endpoint]:
    from daemon.api import (
        amp_adaptive, amp_briefs, amp_context, amp_identity, amp_methods, amp_startup,
        amp_updates, local, local_memories, mcp_http, mem1, protocol, stores, suites,
    )

    return [
        *protocol.ENDPOINTS, *amp_identity.ENDPOINTS, *amp_context.ENDPOINTS,
        *amp_briefs.ENDPOINTS, *amp_adaptive.ENDPOINTS, *amp_startup.ENDPOINTS,
        *amp_updates.ENDPOINTS, *suites.ENDPOINTS, *amp_methods.ENDPOINTS,
        *stores.ENDPOINTS, *mem1.ENDPOINTS, *mcp_http.ENDPOINTS,
        *local.ENDPOINTS, *local_memories.ENDPOINTS,
    ]
