"""Endpoint declarations and the wrapper that authenticates, authorizes and parses bodies.

Each handler module lists its endpoints as data; ``create_app`` registers them. The same
list describes the API in ``GET /api/protocol/schema``, so the description cannot drift from
what the server enforces.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from daemon import keys
from daemon.request_models import RequestModel
from daemon.response_models import ResponseModel, check, wire_schema
from daemon.validation import Query, read_json_object
from state.errors import Forbidden, Unauthorized, WriteLockBusy
from state.group_commit import first_write_waits_apart, in_unit, open_group_when_free
from state.identities import IdentityRecord
from state.json_text import compact_bytes

Handler = Callable[[web.Request, "Call"], Awaitable[Any]]


@dataclass
class Call:
    """What a handler receives besides the request: who is calling and the parsed body."""

    identity: IdentityRecord | None
    body: dict[str, Any]
    request: web.Request

    @property
    def services(self):
        return self.request.app[keys.SERVICES]

    @property
    def base_url(self) -> str:
        """Scheme and host the client used, for absolute URLs in responses."""
        return f"{self.request.scheme}://{self.request.host}"

    def require_identity(self) -> IdentityRecord:
        if self.identity is None:  # only reachable on endpoints with optional auth
            raise Unauthorized("this endpoint needs an API key")
        return self.identity


@dataclass(frozen=True)
class Endpoint:
    """One HTTP endpoint: route, who may call it and what it takes and returns."""

    method: str
    path: str
    handler: Handler
    summary: str
    scope: str | None = None  # required scope; None = any authenticated caller
    auth: str = "required"  # required | optional | none
    owner_only: bool = False
    request: type[RequestModel] | None = None  # its JSON body (daemon/request_models.py)
    # Its body when that is not JSON (a zip, multipart parts): OpenAPI's content map, by type.
    upload: dict[str, Any] | None = None
    query: tuple[Query, ...] = ()  # its query parameters, read by the handler through them
    response: type[ResponseModel] | None = None  # its JSON answer (daemon/responses/)
    # The text its handler searches (or the texts: the suite installer searches each fact),
    # read from the call: with an embedder that blocks, their query vectors are made in a
    # worker thread before the handler runs (MemorySearch).
    search_text: Callable[[Call], str | list[str] | None] | None = None
    # Honours Idempotency-Key: the write and its remembered answer commit together, and a
    # retry gets that answer. Only for handlers that do not await while writing.
    idempotent: bool = False
    # Its handler awaits nothing: on PostgreSQL it runs whole in the writer's thread, in a
    # batch of writes on a connection of their own, off the event loop (run_handler,
    # state/pg/apart_pool.py). For the busiest writes of a team server, whose ~15 round trips
    # would each hold the loop.
    runs_apart: bool = False

    @property
    def response_schema(self) -> str | None:
        """The ``schema`` name of its answer (``amp.context-pack.v1``), when it has one."""
        return wire_schema(self.response) if self.response is not None else None

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "method": self.method,
            "path": self.path,
            "summary": self.summary,
            "auth": self.auth,
        }
        if self.scope:
            out["scope"] = self.scope
        if self.owner_only:
            out["owner_only"] = True
        if self.request:
            out["request"] = self.request.describe()
        if self.response_schema:
            out["response_schema"] = self.response_schema
        return out


def bearer_key(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def authenticate(request: web.Request, mode: str) -> IdentityRecord | None:
    """Resolve the caller from the Bearer key according to the endpoint's auth mode."""
    if mode == "none":
        return None
    key = bearer_key(request)
    if key is None:
        if mode == "optional":
            return None
        raise Unauthorized("missing API key: send 'Authorization: Bearer <key>'")
    identity = request.app[keys.STORE].identities.identity_for_key(key)
    if identity is None and mode == "required":
        raise Unauthorized("invalid API key (unknown or revoked)")
    return identity


def authorize(endpoint: Endpoint, identity: IdentityRecord | None) -> None:
    if identity is None:
        return
    if endpoint.owner_only and identity["kind"] != "owner":
        raise Forbidden("only the owner may do this (agent keys cannot)")
    if endpoint.scope and endpoint.scope not in identity["scopes"] and identity["kind"] != "owner":
        raise Forbidden(f"scope required: {endpoint.scope}", details={"required_scope": endpoint.scope})


def json_answer(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """A JSON answer (state/json_text.py: compact, by orjson)."""
    return web.Response(
        body=compact_bytes(value),
        status=status,
        headers=headers,
        content_type="application/json",
        charset="utf-8",
    )


def to_response(result: Any) -> web.StreamResponse:
    if isinstance(result, web.StreamResponse):
        return result
    return json_answer(result)


WARNINGS_HEADER = "X-MemoryCloud-Warnings"


def with_warnings(result: Any, ignored: list[str]) -> web.StreamResponse:
    """The answer, naming each request field that was not used: a typo (``dreams_mdx``)
    must never lose data without a word. JSON objects carry ``warnings``; every answer also
    carries the names in a header, for answers that are not objects."""
    if not ignored:
        return to_response(result)
    notes = [f"ignored field '{name}'" for name in ignored]
    if isinstance(result, dict):
        earlier = result.get("warnings") or []
        result = {**result, "warnings": [*(earlier if isinstance(earlier, list) else [earlier]), *notes]}
    response = to_response(result)
    # A header may hold printable ASCII only: a field name with a control character or a
    # non-ASCII letter is escaped (the body's warnings keep it as sent).
    names = "".join(c if " " <= c <= "~" else f"\\u{ord(c):04x}" for c in ", ".join(ignored))
    response.headers[WARNINGS_HEADER] = names[:1000]
    return response


IDEMPOTENCY_HEADER = "Idempotency-Key"
# How often a request's first write gives way to another process's on PostgreSQL (run_handler)
# before it waits for the lock where it runs, as every write did before: a request whose
# handler awaits between reading and writing may find the lock taken again each time.
FIRST_WRITE_TRIES = 3


def _idempotency_key(request: web.Request, identity: IdentityRecord | None) -> str | None:
    if identity is None:
        return None
    key = request.headers.get(IDEMPOTENCY_HEADER, "").strip()
    return key[:200] or None


def idempotent_replay(request: web.Request, identity: IdentityRecord, key: str) -> web.Response | None:
    """A write retried with the same Idempotency-Key gets its first answer, not a second write
    (upstream pushes are retried after timeouts, when the first attempt may have landed)."""
    stored = request.app[keys.STORE].upstream.response(identity["id"], key)
    if stored is None:
        return None
    status, body = stored
    return json_answer(body, status=status, headers={"Idempotent-Replayed": "true"})


async def run_idempotent(request: web.Request, call: Call, endpoint: Endpoint, key: str) -> Any:
    """Run the handler and remember its answer in one transaction, so that a crash can never
    leave a write without its answer (which would make the retry write twice). A sync
    interrupt still commits: its intent must survive, and it is not an answer to remember."""
    from daemon.runtime.sync_gate import SyncInterrupted

    store = request.app[keys.STORE]
    interrupted: SyncInterrupted | None = None
    # The handler does not await while it writes (Endpoint.idempotent), so this transaction,
    # one unit of a group commit in the daemon, never spans a turn of the event loop.
    with store.transaction():
        # Asked again inside the write transaction: a request with the same key that was in
        # flight at the first look (this process's, across an await, or another process's on
        # PostgreSQL, whose write transactions run one after another) has answered by now.
        if (replayed := idempotent_replay(request, call.require_identity(), key)) is not None:
            return replayed
        try:
            result = await endpoint.handler(request, call)
        except SyncInterrupted as exc:
            interrupted = exc
        else:
            if isinstance(result, (dict, list)):
                store.upstream.remember_response(call.require_identity()["id"], key, 200, result)
    if interrupted is not None:
        raise interrupted
    return result


async def _run_once(request: web.Request, call: Call, endpoint: Endpoint, key: str | None) -> Any:
    # in_unit, not conn.in_transaction: with group commit the connection is inside other
    # requests' shared transaction most of the time, which is not a caller's one.
    if key is not None and not in_unit(request.app[keys.STORE].conn):
        return await run_idempotent(request, call, endpoint, key)
    return await endpoint.handler(request, call)


def run_to_end(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """The result of a coroutine that awaits nothing, run here (in a worker thread); one that
    does await is closed (its transactions roll back) and is a programming error."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("a handler marked runs_apart awaited: it cannot run in a worker thread")


async def run_handler(request: web.Request, call: Call, endpoint: Endpoint, key: str | None) -> Any:
    """The handler's result. On PostgreSQL an endpoint that runs apart runs whole in the
    writer's thread (Endpoint.runs_apart), whose batch waits for the write lock there. Any
    other request whose first write finds another process writing waits for the write lock
    with the event loop free, then runs again (nothing of the first run was written:
    state/group_commit.py, first_write_waits_apart); the event loop serves the other requests
    meanwhile instead of standing still in the driver."""
    store = request.app[keys.STORE]
    if store.engine != "postgresql":
        return await _run_once(request, call, endpoint, key)
    if endpoint.runs_apart and store.writes_apart:
        return await store.write(lambda: run_to_end(_run_once(request, call, endpoint, key)))
    with first_write_waits_apart():
        for _ in range(FIRST_WRITE_TRIES):
            try:
                return await _run_once(request, call, endpoint, key)
            except WriteLockBusy:
                await open_group_when_free(store.conn, store.conn.try_begin)
    return await _run_once(request, call, endpoint, key)  # waits for the lock, as before


def check_answer(endpoint: Endpoint, response: web.StreamResponse) -> None:
    """Check mode (setting ``check_responses``): a JSON answer that differs from the endpoint's
    model is a ResponseMismatch (a 500 naming the field) instead of a wrong answer; answers
    that are not JSON (zip, Markdown, streams) are not checked."""
    if endpoint.response is None or not isinstance(response, web.Response):
        return
    if response.content_type == "application/json" and isinstance(response.body, bytes):
        check(endpoint.response, response.body, f"{endpoint.method} {endpoint.path}")


def wrap(endpoint: Endpoint) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The aiohttp handler for an endpoint: auth, scope check, body parse, JSON response."""

    async def handle(request: web.Request) -> web.StreamResponse:
        identity = authenticate(request, endpoint.auth)
        authorize(endpoint, identity)
        limiter = request.app.get(keys.RATE_LIMITER)
        if limiter is not None and identity is not None and identity["kind"] != "owner":
            limiter.admit(identity["id"])
        for before in request.app[keys.DIALECTS].before_request:  # daemon/dialects.py
            before(request, endpoint)
        key = _idempotency_key(request, identity) if endpoint.idempotent else None
        if (
            key is not None
            and identity is not None  # a key is only read for a known caller
            and (replayed := idempotent_replay(request, identity, key)) is not None
        ):
            return replayed
        body: dict[str, Any] = {}
        ignored: list[str] = []
        if endpoint.request is not None:
            raw = await read_json_object(request)
            body = endpoint.request.parse_body(raw)
            ignored = endpoint.request.ignored_fields(raw)
        call = Call(identity, body, request)
        if (
            endpoint.search_text is not None
            and call.services.search.prepares_query_vectors
            and (texts := endpoint.search_text(call))
        ):
            await call.services.search.prepare_query_vectors([texts] if isinstance(texts, str) else texts)
        result = await run_handler(request, call, endpoint, key)
        response = with_warnings(result, ignored)
        if request.app[keys.SETTINGS].check_responses:
            check_answer(endpoint, response)
        return response

    handle.__name__ = endpoint.handler.__name__
    return handle
