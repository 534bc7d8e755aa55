"""The one domain error hierarchy.

The daemon's middleware maps these to HTTP statuses and each dialect's envelope, the CLI to
messages. ``code`` is a stable machine-readable string; ``status`` the HTTP status it means.
"""

from __future__ import annotations

from typing import Any


class MemoryCloudError(Exception):
    """Base class: a failure with a stable code, an HTTP status and a human message."""

    status = 500
    code = "internal_error"

    def __init__(self, message: str, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}


class InvalidRequest(MemoryCloudError):
    """The request is malformed or a field is missing or of the wrong type."""

    status = 400
    code = "invalid_request"


class Unauthorized(MemoryCloudError):
    """No key, or a key that is unknown or revoked."""

    status = 401
    code = "unauthorized"


class Forbidden(MemoryCloudError):
    """The caller is known but lacks the scope or ownership for this action."""

    status = 403
    code = "forbidden"


class NotFound(MemoryCloudError):
    status = 404
    code = "not_found"


class Conflict(MemoryCloudError):
    status = 409
    code = "conflict"


class Gone(MemoryCloudError):
    """The thing existed but has expired or was deleted."""

    status = 410
    code = "gone"


class PayloadTooLarge(MemoryCloudError):
    status = 413
    code = "payload_too_large"


class BootstrapRequired(MemoryCloudError):
    """A memory delta came without a usable context receipt (AMP: 428)."""

    status = 428
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

    status = 500
    code = "config_error"


class StoreUnavailable(MemoryCloudError):
    """The SQLite store cannot be opened or lacks a required capability (sqlite-vec)."""

    status = 503
    code = "store_unavailable"


class StorageFull(MemoryCloudError):
    """The disk (or the database's size limit) is full: the write was not stored."""

    status = 507
    code = "insufficient_storage"
