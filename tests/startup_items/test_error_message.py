"""The one helper that turns the daemon's error answers into a message
(startup_items/launcher.py ``error_message``), on the daemon's real answers in each dialect's
envelope, and as every client of the daemon uses it: the CLI's owner client, the TUI's client,
the launcher, the MCP tools and the upstream client."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from daemon.mcp.tools import ToolError, _fail
from daemon.owner_client import OwnerClient
from daemon.upstream.client import UpstreamClient, UpstreamRejected
from startup_items import launcher
from startup_items.launcher import error_message
from state.errors import MemoryCloudError
from tui.client import DaemonClient, DaemonError

STORES = "/api/v1/cloud/memory_stores"


async def _answer(api, method, path, body=None, key=None):
    response = await api.client.request(method, path, json=body, headers=api.auth(key))
    return response.status, await response.json()


async def test_each_dialect_envelope_gives_the_daemons_message(api):
    status, amp = await _answer(api, "GET", "/api/local/startup/plans/splan_nope", key=api.owner_key)
    assert status == 404 and amp["schema"] == "amp.error.v1"
    assert error_message(amp) == amp["error"]["message"] and "splan_nope" in error_message(amp)

    status, stores = await _answer(api, "GET", f"{STORES}/memstore_nope")
    assert status == 404 and stores["type"] == "error"
    assert error_message(stores) == stores["error"]["message"]

    status, plain = await _answer(api, "POST", "/add_messages/", {"user_id": "alice", "messages": []})
    assert status == 422 and error_message(plain) == plain["detail"] and plain["detail"]
    status, mem1 = await _answer(
        api, "POST", "/update_mem_by_id/", {"user_id": "alice", "scope_id": "edp_agent"}
    )
    assert status == 422 and isinstance(mem1["detail"], list)  # FastAPI's list form
    assert error_message(mem1) == "; ".join(f"{d['loc'][1]}: {d['msg']}" for d in mem1["detail"])
    assert error_message(mem1).startswith("mem_id: ") and "; memory: " in error_message(mem1)


@pytest.mark.parametrize(
    "body, expected",
    [
        ({"detail": "plain detail"}, "plain detail"),
        ({"detail": {"message": "in an object"}}, "in an object"),
        ({"detail": [{"loc": ["query", "q"], "msg": "field required"}]}, "query.q: field required"),
        (
            {"error": {"message": ""}, "detail": "the detail, when the message is empty"},
            "the detail, when the message is empty",
        ),
        ({"unexpected": True}, "{'unexpected': True}"),
        ("Internal Server Error" * 20, ("Internal Server Error" * 20)[:300]),
    ],
)
def test_other_shapes(body, expected):
    assert error_message(body) == expected


def test_the_fallback_when_no_message_is_there():
    assert error_message({}, "HTTP/1.1 502 Bad Gateway") == "HTTP/1.1 502 Bad Gateway"
    assert error_message({"error": {"message": "kept"}}, "fallback") == "kept"


async def test_the_cli_owner_client_and_the_launcher_over_real_http(api):
    url = str(api.client.make_url("")).rstrip("/")
    owner = OwnerClient(url, api.owner_key)
    with pytest.raises(MemoryCloudError) as caught:
        await asyncio.to_thread(owner.get, "/api/local/startup/plans/splan_nope")
    assert caught.value.status == 404
    assert caught.value.message.startswith("daemon answered 404: ") and "splan_nope" in caught.value.message

    with pytest.raises(launcher.HttpError) as raised:
        await asyncio.to_thread(
            launcher.request,
            "POST",
            url + "/api/agent/memory-delta",
            api.auth(),
            {"summary": "no receipt"},
            5,
        )
    status, expected = await _answer(api, "POST", "/api/agent/memory-delta", {"summary": "no receipt"})
    assert raised.value.status == status >= 400
    assert str(raised.value) == f"daemon answered {status}: {expected['error']['message']}"


async def test_the_tui_client_and_the_upstream_client():
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/text":
            return httpx.Response(502, text="Bad Gateway from a proxy")
        return httpx.Response(409, json={"detail": {"message": "the sha256 does not match"}})

    tui = DaemonClient("http://daemon", "key", transport=httpx.MockTransport(answer))
    try:
        with pytest.raises(DaemonError, match=r"^409: the sha256 does not match$"):
            await tui.get("/json")
        with pytest.raises(DaemonError, match=r"^502: Bad Gateway from a proxy$"):
            await tui.get("/text")
    finally:
        await tui.aclose()

    upstream = UpstreamClient("http://upstream", "key", transport=httpx.MockTransport(answer))
    try:
        with pytest.raises(UpstreamRejected) as rejected:
            await upstream.call("GET", "/json")
        assert str(rejected.value) == "upstream answered 409: the sha256 does not match"
    finally:
        await upstream.close()


def test_the_mcp_tools_say_what_the_daemon_said():
    assert str(_fail(403, {"error": {"message": "scope memory:write required"}})) == (
        "daemon answered 403: scope memory:write required"
    )
    assert str(_fail(500, {})) == "daemon answered 500: request failed"
    assert isinstance(_fail(500, {}), ToolError)
