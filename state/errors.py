"""The one domain error hierarchy.

``code`` is a stable machine-readable string. What an error means in HTTP is the daemon's
business, decided in one place (daemon/http_errors.py: the status of each error, and the
middleware puts it in each dialect's envelope); the CLI turns errors into messages.
"""

from __future__ import annotations

from typing import Any


class MemoryCloudError(Exception):
    """Base class: a failure with a stable code and a human message."""

    code = "internal_error"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class InvalidRequest(MemoryCloudError):
    """The request is malformed or a field is missing or of the wrong type."""

    code = "invalid_request"


class ValidationFailed(MemoryCloudError):
    """Fields are missing or of the wrong type (HTTP 422, like FastAPI-based AMP servers)."""

    code = "validation_error"


class Unauthorized(MemoryCloudError):
    """No key, or a key that is unknown or revoked."""

    code = "unauthorized"


class Forbidden(MemoryCloudError):
    """The caller is known but lacks the scope or ownership for this action."""

    code = "forbidden"


class NotFound(MemoryCloudError):
    code = "not_found"


class Conflict(MemoryCloudError):
    code = "conflict"


class Gone(MemoryCloudError):
    """The thing existed but has expired or was deleted."""

    code = "gone"


class PayloadTooLarge(MemoryCloudError):
    code = "payload_too_large"


class RateLimited(MemoryCloudError):
    """The caller spent its request budget (the cloud role's rate limit); ``details`` says
    when to try again (``retry_after_seconds``)."""

    code = "rate_limited"


class BootstrapRequired(MemoryCloudError):
    """A memory delta came without a usable context receipt (AMP: 428)."""

    code = "bootstrap_required"

    def __init__(self, message: str, *, reason: str) -> None:
        body = {
            "schema": "amp.bootstrap-required.v1",
            "error": "AMP_CONTEXT_REQUIRED" if reason == "receipt_missing" else "AMP_CONTEXT_INVALID",
            "reason": reason,
            "message": message,
            "bootstrap_url": "/api/agent/bootstrap/context",
        }
        super().__init__(message, details={"body": body})
        self.reason = reason


class ConfigError(MemoryCloudError):
    """The configuration file or a setting is invalid."""

    code = "config_error"


class StoreUnavailable(MemoryCloudError):
    """The SQLite store cannot be opened or lacks a required capability (sqlite-vec)."""

    code = "store_unavailable"


class StorageFull(MemoryCloudError):
    """The disk (or the database's size limit) is full: the write was not stored."""

    code = "insufficient_storage"


class WriteLockBusy(BaseException):
    """A request's first write found another process writing (PostgreSQL's write lock taken)
    and did not wait for it on the event loop: nothing was written; the daemon waits for the
    lock without blocking and runs the request again (state/group_commit.py
    ``first_write_waits_apart``). A BaseException, so that no handler's ``except Exception``
    mistakes it for a failure."""
