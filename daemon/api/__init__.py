"""HTTP handlers grouped by dialect. Each module exports ``ENDPOINTS``."""

from __future__ import annotations

from daemon.dialects import Dialects
from daemon.endpoints import Endpoint


def all_endpoints(role: str = "local", sync_extension: bool = True) -> list[Endpoint]:
    """Every endpoint this daemon serves. In the cloud role the Memory Stores, agent-memory1.0
    and MCP dialects are left out: their namespaces are shared by every key of one machine,
    which is right for one person's laptop and wrong for a team's server. Without
    ``sync_extension`` (setting ``serve_sync_extension``) /api/sync/* is not served at all,
    as on an upstream that never had it: downstream daemons pull through the AMP read
    endpoints of amp_workspaces instead."""
    from daemon.api import (
        amp_adaptive,
        amp_briefs,
        amp_context,
        amp_identity,
        amp_methods,
        amp_onboarding,
        amp_registration,
        amp_startup,
        amp_updates,
        amp_workspaces,
        local,
        local_memories,
        local_upstream,
        mcp_http,
        mem1,
        openapi,
        protocol,
        stores,
        suites,
        sync_feed,
    )

    # GET /health answers both agent-memory1.0 and MemoryCloud clients: served in every role.
    machine_dialects = (
        [e for e in mem1.ENDPOINTS if e.path == "/health"]
        if role == "cloud"
        else [*stores.ENDPOINTS, *mem1.ENDPOINTS, *mcp_http.ENDPOINTS]
    )
    return [
        *protocol.ENDPOINTS,
        *amp_identity.ENDPOINTS,
        *amp_registration.ENDPOINTS,
        *amp_onboarding.ENDPOINTS,
        *amp_context.ENDPOINTS,
        *amp_workspaces.ENDPOINTS,
        *amp_briefs.ENDPOINTS,
        *amp_adaptive.ENDPOINTS,
        *amp_startup.ENDPOINTS,
        *amp_updates.ENDPOINTS,
        *suites.ENDPOINTS,
        *amp_methods.ENDPOINTS,
        *machine_dialects,
        *(sync_feed.ENDPOINTS if sync_extension else []),
        *local.ENDPOINTS,
        *local_memories.ENDPOINTS,
        *local_upstream.ENDPOINTS,
        *openapi.ENDPOINTS,
    ]


def all_dialects() -> Dialects:
    """The error envelopes and request hooks the dialects declare (daemon/dialects.py). The
    same in every role: a path of a dialect the role does not serve still answers its 404 in
    that dialect's envelope, as its clients expect."""
    from daemon.api import mem1, stores

    return Dialects.of([mem1, stores])
