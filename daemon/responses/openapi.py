"""The answers of daemon/api/openapi.py: what the OpenAPI document says they hold, and
what a daemon in check mode holds them to (daemon/response_models.py)."""

from __future__ import annotations

from typing import Any

from daemon.response_models import ResponseModel


class OpenapiAnswer(ResponseModel, title="OpenapiAnswer"):
    """GET /api/openapi.json"""

    openapi: str
    info: dict[str, Any]
    servers: list[Any]
    security: list[Any]
    paths: dict[str, Any]
    components: dict[str, Any]
