"""Owner-only local API for the upstream (CLI ``memorycloud upstream`` and the TUI)."""

from __future__ import annotations

from typing import Annotated, Any

from aiohttp import web
from pydantic import Field

from daemon.endpoints import Call, Endpoint
from daemon.request_models import RequestModel, at_least
from daemon.responses.local_upstream import (
    OutboxDiscardAnswer,
    UpstreamConnectAnswer,
    UpstreamDisconnectAnswer,
    UpstreamStatusAnswer,
    UpstreamSyncAnswer,
)
from state.errors import NotFound

BASE = "/api/local/upstream"


class UpstreamConnect(RequestModel, title="upstream-connect"):
    url: str = Field(
        max_length=2000,
        pattern=at_least(1),
        description="the upstream's base URL, e.g. https://memory.example.com",
    )
    pairing_code: str | None = Field(
        None, max_length=80, description="a pairing code from the upstream's owner (daemon in the cloud role)"
    )
    api_key: str | None = Field(None, max_length=400, description="reuse an existing key on the upstream")
    handle: str | None = Field(None, max_length=40, description="this daemon's name there")
    backfill: bool | None = Field(True, description="also send the memory kept so far")


class UpstreamAck(RequestModel, title="upstream-ack"):
    update_ids: list[Annotated[str, Field(max_length=200)]] | None = Field(
        None, max_length=200, description="update ids to ack (default: every pending one)"
    )


async def status(request: web.Request, call: Call) -> dict[str, Any]:
    return call.services.upstream.status()


async def connect(request: web.Request, call: Call) -> dict[str, Any]:
    body = call.body
    return await call.services.upstream.connect(
        body["url"],
        pairing_code=body.get("pairing_code"),
        key=body.get("api_key"),
        handle=body.get("handle"),
        backfill=body["backfill"],
    )


async def disconnect(request: web.Request, call: Call) -> dict[str, Any]:
    return await call.services.upstream.disconnect()


async def sync_now(request: web.Request, call: Call) -> dict[str, Any]:
    outcome = await call.services.upstream.sync()
    return {**call.services.upstream.status(), "outcome": outcome}


async def ack(request: web.Request, call: Call) -> dict[str, Any]:
    return await call.services.upstream.ack(call.body.get("update_ids"))


async def discard(request: web.Request, call: Call) -> dict[str, Any]:
    raw = request.match_info["seq"]
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 18):
        raise NotFound(f"outbox entry {raw} not found")
    return call.services.upstream.discard(int(raw))


ENDPOINTS = [
    Endpoint(
        "GET",
        BASE,
        status,
        "Upstream connection, backlog, last sync and error, pending updates and interrupted writes.",
        owner_only=True,
        response=UpstreamStatusAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/connect",
        connect,
        "Register on (or reuse a key for) an upstream and start syncing.",
        owner_only=True,
        request=UpstreamConnect,
        response=UpstreamConnectAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/disconnect",
        disconnect,
        "Stop syncing; local memory stays.",
        owner_only=True,
        response=UpstreamDisconnectAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/sync",
        sync_now,
        "Run one sync round now.",
        owner_only=True,
        response=UpstreamSyncAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/updates/ack",
        ack,
        "Ack the upstream's pending updates (after applying them); interrupted writes then resume.",
        owner_only=True,
        request=UpstreamAck,
        response=UpstreamConnectAnswer,
    ),
    Endpoint(
        "POST",
        BASE + "/outbox/{seq}/discard",
        discard,
        "Give up an interrupted or pending push; the local record stays.",
        owner_only=True,
        response=OutboxDiscardAnswer,
    ),
]
