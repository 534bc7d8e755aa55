"""Middlewares: the Host/Origin guard, the AMP error envelope and the wait for commits.

Envelope (compatible with FastAPI-based AMP servers, whose clients read ``detail``)::

    {"schema": "amp.error.v1",
     "error": {"id": "err_...", "type": "validation_error", "status": 422,
               "message": "...", "detail": ..., "path": "/api/...", "time": "..."},
     "detail": ...}

Where AMP defines a body for a failure (428 amp.bootstrap-required.v1), that body is the
``detail`` and its fields are also merged at the top level.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from daemon import keys
from daemon.endpoints import json_answer
from daemon.http_errors import http_status
from state.errors import Forbidden, MemoryCloudError
from state.group_commit import collect_commits, wait_commits
from state.ids import new_id, now_iso
from state.storage_errors import storage_error

log = logging.getLogger(__name__)

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

_HTTP_TYPES = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def error_response(
    request: web.Request,
    status: int,
    error_type: str,
    message: str,
    detail: Any = None,
    extra: dict[str, Any] | None = None,
) -> web.Response:
    """An error in the envelope of the dialect that serves the path (daemon/dialects.py), else
    in AMP's."""
    dialects = request.app.get(keys.DIALECTS)
    envelope = dialects.envelope_for(request.path) if dialects is not None else None
    if envelope is not None:
        return json_answer(envelope.render(status, error_type, message, detail), status=status)
    detail = message if detail is None else detail
    body: dict[str, Any] = {
        "schema": "amp.error.v1",
        "error": {
            "id": new_id("err_"),
            "type": error_type,
            "status": status,
            "message": message,
            "detail": detail,
            "path": request.path,
            "time": now_iso(),
        },
        "detail": detail,
    }
    if extra:
        body.update(extra)
    return json_answer(body, status=status)


def _host_name(host_header: str) -> str:
    """'localhost:8517' -> 'localhost'; '[::1]:8517' -> '::1'."""
    if host_header.startswith("["):
        return host_header[1 : host_header.find("]")] if "]" in host_header else host_header
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


def allowed_hosts(request: web.Request) -> frozenset[str] | None:
    """Host names this daemon answers to; None means any (``allowed_hosts = ["*"]``, for a
    daemon in the cloud role behind a reverse proxy that checks the name itself)."""
    settings = request.app[keys.SETTINGS]
    if "*" in settings.allowed_hosts:
        return None
    extra = {settings.host} if settings.host not in ("0.0.0.0", "::") else set()
    return LOOPBACK_HOSTS | extra | {h.lower() for h in settings.allowed_hosts}


@web.middleware
async def guard_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refuse non-loopback Host headers (DNS rebinding) and foreign browser Origins (CSRF)."""
    host = _host_name(request.host or "").lower()
    hosts = allowed_hosts(request)
    if hosts is not None and host not in hosts:
        raise Forbidden(
            f"Host {request.host!r} is not allowed: the daemon only answers loopback"
            " names and daemon.allowed_hosts"
        )
    origin = request.headers.get("Origin")
    if origin is not None:
        allowed = set(request.app[keys.SETTINGS].allowed_origins)
        if origin not in allowed:
            parsed = urlsplit(origin)
            raise Forbidden(
                f"browser Origin {origin!r} is not allowed"
                + (" (add it to daemon.allowed_origins to allow it)" if parsed.scheme else "")
            )
    return await handler(request)


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn domain errors and aiohttp's HTTP errors into the one envelope."""
    try:
        return await handler(request)
    except MemoryCloudError as exc:
        detail = exc.details.get("body") if "body" in exc.details else None
        # AMP-defined failure bodies (428 amp.bootstrap-required.v1) are also merged at the top
        # level; their own "error" code must not replace the envelope's error object.
        extra = {k: v for k, v in detail.items() if k != "error"} if isinstance(detail, dict) else None
        if detail is None and exc.details:
            detail = {"message": exc.message, **exc.details}
        response = error_response(request, http_status(exc), exc.code, exc.message, detail, extra)
        if "retry_after_seconds" in exc.details:  # RFC 9110: when to try again (a 429)
            response.headers["Retry-After"] = str(exc.details["retry_after_seconds"])
        return response
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        message = exc.text if exc.text and not exc.text.startswith(str(exc.status)) else exc.reason
        if exc.status == 404:
            message = f"no endpoint at {request.method} {request.path}"
        elif exc.status == 405:
            message = f"method {request.method} is not allowed on {request.path}"
        elif exc.status == 413:
            limit = request.app[keys.SETTINGS].max_body_bytes
            message = f"request body is larger than the limit of {limit} bytes"
        response = error_response(request, exc.status, _HTTP_TYPES.get(exc.status, "http_error"), message)
        if "Allow" in exc.headers:  # RFC 9110: a 405 names the methods the resource has
            response.headers["Allow"] = exc.headers["Allow"]
        return response
    except Exception as exc:
        storage = storage_error(exc)  # full disk, read-only or damaged file: say so
        if storage is not None:
            log.error("storage failure on %s %s: %s", request.method, request.path, exc)
            return error_response(request, http_status(storage), storage.code, storage.message)
        log.exception("unhandled error on %s %s", request.method, request.path)
        return error_response(
            request, 500, "internal_error", "internal error; the daemon log has the details"
        )


@web.middleware
async def commit_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Answer only once the request's writes are committed (state/group_commit.py).

    The daemon commits the writes of one event-loop turn together, after the handlers that
    made them returned. An acknowledged write must survive kill -9, so every answer waits for
    the COMMIT of the groups its request wrote into, an error answer too (a sync interrupt
    stores its intent, then answers 409). If that COMMIT failed, the request gets its error
    instead (507 for a full disk, through error_middleware), like every request of the group.
    """
    with collect_commits() as pending:
        try:
            response = await handler(request)
        except Exception:
            await wait_commits(pending)  # a failed COMMIT replaces the handler's error
            raise
        await wait_commits(pending)
    return response
