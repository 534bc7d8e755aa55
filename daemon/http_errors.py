"""What each domain error means in HTTP: the one place that maps them to statuses.

Services and repositories raise the errors of state/errors.py (and the daemon's own, below)
without knowing HTTP; the error middleware (daemon/middleware.py) answers with the status
named here, in the envelope of the path's dialect.
"""

from __future__ import annotations

from daemon.runtime.sync_gate import SyncInterrupted
from state import errors

STATUS: dict[type[errors.MemoryCloudError], int] = {
    errors.InvalidRequest: 400,
    errors.Unauthorized: 401,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    SyncInterrupted: 409,  # the write is kept as a sync intent (AMP's "interrupt")
    errors.Gone: 410,
    errors.PayloadTooLarge: 413,
    errors.ValidationFailed: 422,  # like FastAPI-based AMP servers
    errors.BootstrapRequired: 428,  # AMP: a memory delta without a usable receipt
    errors.RateLimited: 429,  # the cloud role's per-caller budget (daemon/rate_limit.py)
    errors.ConfigError: 500,
    errors.StoreUnavailable: 503,
    errors.StorageFull: 507,
}


def http_status(error: errors.MemoryCloudError) -> int:
    """The status of ``error``: its class's, or the nearest base class's; 500 otherwise."""
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500
