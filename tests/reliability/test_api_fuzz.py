"""Property-based requests against every operation of the daemon's own OpenAPI document
(GET /api/openapi.json), served by the real aiohttp server on a loopback port.

Hypothesis draws an operation, path parameters (real ids, path tricks, arbitrary text), query
parameters, a body (schema-shaped with wrong types mixed in, arbitrary JSON, deep nesting,
invalid UTF-8, oversized) and a credential. Whatever it draws, the daemon answers within a
few seconds, never with a 5xx, and every error is in its dialect's envelope. A fixed sweep
sends the worst bodies and headers to every operation as well. bench/fuzz_soak.py runs the
same properties for many more examples (bench/RESULTS.md).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from daemon.app import create_app
from state.paths import Paths
from state.secrets import open_secret_store
from state.setup import OWNER_KEY_SECRET
from tests.conftest import CHECKED

# Upstream endpoints connect to a URL from the request: a fuzzer must not send the daemon to
# random addresses (their refusals are tested in tests/daemon/test_sync_api_errors.py).
EXCLUDED = ("/api/local/upstream",)
PATH_TRICKS = [
    "..",
    "../../etc/passwd",
    "%2e%2e%2f%2e%2e",
    "a/../../b",
    "/",
    "%00",
    "\x00",
    "mem_" + "0" * 32,
    "x" * 3000,
    "記憶",
    "%ff%fe",
    "..\\..\\windows",
]


class ThreadedDaemon:
    """The real app on a real socket, its event loop in a thread (hypothesis is synchronous)."""

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.runner: web.AppRunner | None = None
        self.url = ""

    def start(self) -> ThreadedDaemon:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(30)
        return self

    async def _start(self) -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.runner = web.AppRunner(create_app(CHECKED, self.paths), access_log=None)
        await self.runner.setup()
        await web.SockSite(self.runner, sock).start()
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"

    def stop(self) -> None:
        if self.runner is not None:
            asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("fuzzhome")
    paths = Paths(root / "config", root / "data", root / "state", root / "cache").ensure()
    daemon = ThreadedDaemon(paths).start()
    owner = open_secret_store(paths.secrets_file).get(OWNER_KEY_SECRET)
    http = httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {owner}"}, timeout=10)
    agent = http.post("/api/local/agents", json={"name": "fuzz-agent"}).json()["api_key"]
    ids = seed(http)
    doc = http.get("/api/openapi.json").json()
    operations = [
        (method.upper(), path, op)
        for path, item in sorted(doc["paths"].items())
        for method, op in sorted(item.items())
        if not path.startswith(EXCLUDED)
    ]
    # One keep-alive connection; 5 s without an answer is a hang.
    client = httpx.Client(base_url=daemon.url, timeout=5.0)
    yield {
        "url": daemon.url,
        "owner": owner,
        "agent": agent,
        "ids": ids,
        "operations": operations,
        "client": client,
    }
    client.close()
    http.close()
    daemon.stop()


def seed(http: httpx.Client) -> list[str]:
    """Real ids, so some drawn paths reach real resources."""
    pack = http.post("/api/agent/bootstrap/context", json={}).json()
    delta = http.post(
        "/api/agent/memory-delta",
        json={"summary": "seed"},
        headers={"X-AMP-Context-Receipt": pack["receipt_id"]},
    ).json()
    store = http.post("/api/v1/cloud/memory_stores", json={"name": "fuzz"}).json()
    doc = http.post(
        f"/api/v1/cloud/memory_stores/{store['id']}/memories", json={"path": "a.md", "content": "seed"}
    ).json()
    versions = http.get(f"/api/v1/cloud/memory_stores/{store['id']}/memory_versions").json()
    brief = http.post("/api/agent/memory-brief", json={"task": "seed"}).json()
    return [
        pack["workspace_id"],
        pack["context_pack_id"],
        pack["receipt_id"],
        delta["delta"]["memory_id"],
        store["id"],
        doc["id"],
        versions["data"][0]["id"],
        brief["brief_id"],
    ]


def check_answer(method: str, template: str, response: httpx.Response) -> None:
    """No 5xx; an error is JSON in the envelope of its dialect."""
    where = f"{method} {template} -> {response.status_code}: {response.text[:300]}"
    assert response.status_code < 500, where
    if response.status_code < 400 or response.status_code == 405 and template == "/mcp":
        return
    body = response.json()
    if template == "/mcp" and "jsonrpc" in body:
        assert "error" in body, where
    elif "type" in body and body.get("type") == "error":
        assert template.startswith("/api/v1/cloud/") and body["error"]["message"].strip(), where
    elif set(body) == {"detail"}:
        assert template.endswith("/") or template == "/health", where
    else:
        assert body["schema"] in ("amp.error.v1", "amp.bootstrap-required.v1"), where
        assert body["error"]["status"] == response.status_code and body["error"]["message"], where


def json_values() -> st.SearchStrategy:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=40),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
        ),
        max_leaves=12,
    )


def value_for(schema: dict[str, Any]) -> st.SearchStrategy:
    """Mostly the declared type (edges included), sometimes anything at all."""
    kind = schema.get("type")
    typed = {
        "string": st.one_of(
            st.text(max_size=60), st.text(max_size=5), st.just("x" * (schema.get("maxLength", 100) + 1))
        ),
        "integer": st.one_of(
            st.integers(-5, 300),
            st.sampled_from([schema.get("minimum", 0) - 1, schema.get("maximum", 0) + 1, 2**63]),
        ),
        "boolean": st.booleans(),
        "number": st.floats(allow_nan=False),
        "array": st.lists(st.one_of(st.text(max_size=20), json_values()), max_size=5),
        "object": st.dictionaries(st.text(max_size=10), json_values(), max_size=4),
    }.get(kind, json_values())
    return st.one_of(typed, typed, typed, json_values())


@st.composite
def requests(draw, operations: list, ids: list[str]) -> dict[str, Any]:
    method, template, op = draw(st.sampled_from(operations))
    path = template
    params = op.get("parameters", [])
    for param in (p for p in params if p["in"] == "path"):
        raw = draw(st.one_of(st.sampled_from(ids), st.sampled_from(PATH_TRICKS), st.text(max_size=20)))
        path = path.replace("{" + param["name"] + "}", quote(raw, safe="") or "x")
    # The operation's own query parameters (the document lists them), with values of their
    # declared type or anything at all, and sometimes a name it does not know.
    names = [p["name"] for p in params if p["in"] == "query"] or ["q"]
    query = draw(
        st.dictionaries(
            st.one_of(st.sampled_from(names), st.sampled_from(names), st.text(max_size=8)),
            st.one_of(st.text(max_size=30), st.integers(-(2**70), 2**70).map(str)),
            max_size=3,
        )
    )
    content = op.get("requestBody", {}).get("content", {})
    schema = content.get("application/json", {}).get("schema")
    if schema:
        fields = {name: value_for(spec) for name, spec in schema["properties"].items()}
        shaped = st.fixed_dictionaries({}, optional=fields)
        body = draw(st.one_of(shaped, shaped, shaped, json_values().map(lambda v: v)))
        raw = json.dumps(body).encode()
    else:
        raw = draw(st.one_of(st.just(b""), st.binary(max_size=200)))
    raw = draw(st.one_of(st.just(raw), st.just(raw), st.binary(max_size=64), st.just(b'{"a": "\xff\xfe"}')))
    return {
        "method": method,
        "template": template,
        "path": path,
        "query": query,
        "raw": raw,
        "credential": draw(st.sampled_from(["owner", "agent", "agent", "none", "bogus"])),
    }


def send(
    served: dict[str, Any],
    request: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    raw: bytes | None = None,
) -> httpx.Response:
    key = {"owner": served["owner"], "agent": served["agent"], "bogus": "mca_bogus"}.get(
        request["credential"]
    )
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if key:
        all_headers["Authorization"] = f"Bearer {key}"
    return served["client"].request(
        request["method"],
        request["path"],
        params=request["query"],
        content=request["raw"] if raw is None else raw,
        headers=all_headers,
    )


def test_every_operation_survives_arbitrary_requests(served):
    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(requests(served["operations"], served["ids"]))
    def property_(request):
        check_answer(request["method"], request["template"], send(served, request))

    property_()


NASTY_BODIES = {
    "deeply-nested": b'{"a": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    "invalid-utf8": b'{"content": "\xc3\x28 \xa0\xa1", "summary": "\xff"}',
    "lone-surrogate": b'{"content": "\\ud800", "summary": "\\udfff", "path": "\\ud83d"}',
    "over-limit": b'{"content": "' + b"y" * (1 << 20) + b'"}',
    "not-json": b"\x00\x01\x02 <xml/>",
    "huge-number": b'{"limit": 1e999999, "importance": 99999999999999999999999999}',
}


def test_every_operation_survives_the_worst_bodies_and_headers(served):
    for number, (method, template, _op) in enumerate(served["operations"]):
        path = template.replace("{", "").replace("}", "")
        request = {
            "method": method,
            "template": template,
            "path": path,
            "query": {},
            "raw": b"",
            "credential": "owner",
        }
        if method == "POST":  # other methods do not read a body
            for raw in NASTY_BODIES.values():
                check_answer(method, template, send(served, request, raw=raw))
        if number % 10 == 0:  # the header limit is the HTTP parser's, the same for every route
            huge = send(served, request, headers={"X-Padding": "h" * 100_000})
            assert huge.status_code in (400, 431), (template, huge.status_code)
    # After all that, the daemon still answers normally.
    assert httpx.get(served["url"] + "/healthz").status_code == 200
