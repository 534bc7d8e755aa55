"""Reading an uploaded suite zip: the 'file' part of a multipart form (the reference's form) or
the raw request body (application/zip, ours).

The upload limit is the reference's (15 MiB, 413), not the daemon's general body limit
(daemon.max_body_bytes, 1 MiB by default), so the zip is streamed here instead of read
through aiohttp's client_max_size; nothing larger than the limit is held in memory.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiohttp
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from daemon.runtime.suite_archive import MAX_UPLOAD_BYTES
from state.errors import InvalidRequest, PayloadTooLarge, ValidationFailed

CHUNK = 64 * 1024
# A multipart form carries a little more than the file: boundaries and part headers.
FORM_OVERHEAD = 64 * 1024


def _too_large(limit: int) -> PayloadTooLarge:
    return PayloadTooLarge(f"the upload is larger than the limit of {limit} bytes")


async def _read_limited(read: Callable[[int], Awaitable[bytes]], limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while chunk := await read(CHUNK):
        total += len(chunk)
        if total > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _missing() -> ValidationFailed:
    return ValidationFailed(
        "send the suite zip: the 'file' part of a multipart form, or the zip"
        " as the body (Content-Type: application/zip)",
        details={"missing_fields": ["file"]},
    )


async def read_upload(request: web.Request, limit: int = MAX_UPLOAD_BYTES) -> bytes:
    """The uploaded zip's bytes; 413 past the limit, 422 when there is no file at all."""
    if request.content_length is not None and request.content_length > limit + FORM_OVERHEAD:
        raise _too_large(limit)
    if request.content_type.startswith("multipart/"):
        try:
            reader = await request.multipart()
            while (part := await reader.next()) is not None:
                if isinstance(part, aiohttp.BodyPartReader) and part.name == "file":
                    data = await _read_limited(part.read_chunk, limit)
                    if not data:
                        raise _missing()
                    return data
        except (ValueError, AssertionError, aiohttp.ClientError, HttpProcessingError) as exc:
            raise InvalidRequest(f"the multipart form cannot be read: {exc}") from None
        raise _missing()
    data = await _read_limited(request.content.read, limit)
    if not data:
        raise _missing()
    return data
