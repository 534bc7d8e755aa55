"""What a dialect brings besides its endpoints, declared by the dialect's own module: the
error envelope its clients read (on the paths it serves) and work to run before every
request (agent-memory1.0's deferred session summaries). The generic request wrapper
(daemon/endpoints.py), the error middleware and the OpenAPI document only run what is
registered here; none of them knows a dialect by name.

A dialect module declares ``ERROR_ENVELOPE`` (an :class:`ErrorEnvelope`) and/or
``BEFORE_REQUEST`` (hooks); daemon/api ``all_dialects`` collects them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from daemon.endpoints import Endpoint

# (status, error type, message, detail) -> the error body a dialect's clients read.
RenderError = Callable[[int, str, str, Any], dict[str, Any]]
# Runs before the handler of every endpoint (after auth), with the endpoint it is for.
BeforeRequest = Callable[[web.Request, "Endpoint"], None]


@dataclass(frozen=True)
class ErrorEnvelope:
    schema: str  # the envelope's name among the OpenAPI document's schemas
    serves: Callable[[str], bool]  # whether a request path answers errors in this envelope
    render: RenderError


@dataclass(frozen=True)
class Dialects:
    envelopes: tuple[ErrorEnvelope, ...] = ()
    before_request: tuple[BeforeRequest, ...] = ()

    def envelope_for(self, path: str) -> ErrorEnvelope | None:
        """The envelope of the dialect that serves ``path``; None: AMP's (the default)."""
        return next((e for e in self.envelopes if e.serves(path)), None)

    @classmethod
    def of(cls, modules: list[Any]) -> Dialects:
        return cls(
            tuple(m.ERROR_ENVELOPE for m in modules if hasattr(m, "ERROR_ENVELOPE")),
            tuple(hook for m in modules for hook in getattr(m, "BEFORE_REQUEST", ())),
        )
