"""The answers of daemon/api/amp_registration.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from daemon.response_models import ResponseModel
from daemon.responses.notices import NoticedAnswer


class ChallengeAnswer(ResponseModel, title="ChallengeAnswer"):
    """POST /api/agent/challenge"""

    challenge_id: str
    server_nonce: str
    difficulty: int
    algorithm: str
    expires_at: str
    pairing_code_required: bool


class AgentRegistrationAnswer(NoticedAnswer, title="amp.agent-registration.v1"):
    """POST /api/agent/register"""

    schema_: Literal["amp.agent-registration.v1"] = Field(alias="schema")
    user: dict[str, Any]
    api_key: str
    key_notice: str
    next: dict[str, Any]
