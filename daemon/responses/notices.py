"""The notices AMP puts on its entry answers (discovery, autostart, navigation, bindings, a
skill's pull): ../shared/contracts' shared_objects, one declaration for all of them."""

from __future__ import annotations

from typing import Any

from daemon.response_models import ResponseModel


class NoticedAnswer(ResponseModel):
    """An answer that carries the runtime-connection, mandatory-runtime and platform-update
    notices, and, for an agent the daemon knows, a message to it."""

    runtime_connection_notice: dict[str, Any]
    mandatory_runtime_notice: dict[str, Any]
    platform_update_notice: dict[str, Any]
    known_agent_message: str | None = None
