"""GET /api/openapi.json: an OpenAPI 3.1 document of every endpoint this daemon serves.

Generated from the same endpoint registry (daemon/endpoints.py), request models
(daemon/request_models.py: pydantic's JSON Schema of each body) and answer models
(daemon/response_models.py, daemon/responses/) that the server enforces, so it cannot drift
from it. Each operation names its security (Bearer key, optional or none), its JSON body
schema, its path and query parameters (``Endpoint.query``, the declarations the handlers read
them through), its answer's schema (which a daemon in check mode holds its answers to), and
the error envelope of its dialect: AMP's ``amp.error.v1``, Memory Stores'
``{"type": "error", ...}`` under /api/v1/cloud/, agent-memory1.0's ``{"detail": ...}``.
``tests/reliability/test_api_fuzz.py`` drives property-based requests from this document.
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from daemon import __version__, keys
from daemon.dialects import Dialects
from daemon.endpoints import Call, Endpoint
from daemon.response_models import json_schema
from daemon.responses.openapi import OpenapiAnswer

OPENAPI_PATH = "/api/openapi.json"

ERROR_SCHEMAS: dict[str, dict[str, Any]] = {
    "AmpError": {
        "type": "object",
        "required": ["schema", "error", "detail"],
        "properties": {
            "schema": {"enum": ["amp.error.v1", "amp.bootstrap-required.v1"]},
            "error": {
                "type": "object",
                "required": ["id", "type", "status", "message", "detail", "path", "time"],
                "properties": {
                    "id": {"type": "string"},
                    "type": {"type": "string"},
                    "status": {"type": "integer"},
                    "message": {"type": "string"},
                    "path": {"type": "string"},
                    "time": {"type": "string"},
                },
            },
            "detail": {},
        },
    },
    "MemoryStoresError": {
        "type": "object",
        "required": ["type", "error"],
        "properties": {
            "type": {"const": "error"},
            "error": {
                "type": "object",
                "required": ["type", "message"],
                "properties": {
                    "type": {"type": "string"},
                    "message": {"type": "string"},
                    "details": {"type": "object"},
                },
            },
        },
    },
    "Mem1Error": {
        "type": "object",
        "required": ["detail"],
        "properties": {
            "detail": {
                "oneOf": [
                    {"type": "string"},
                    {"type": "array", "items": {"type": "object", "required": ["loc", "msg", "type"]}},
                ]
            }
        },
    },
    "JsonRpcError": {
        "type": "object",
        "required": ["jsonrpc", "error"],
        "properties": {"jsonrpc": {"const": "2.0"}, "error": {"type": "object"}},
    },
}


def error_schema_for(path: str, dialects: Dialects) -> str:
    """The name of the error envelope a path answers with (daemon/dialects.py; AMP's by default)."""
    envelope = dialects.envelope_for(path)
    return envelope.schema if envelope is not None else "AmpError"


def answer(endpoint: Endpoint) -> dict[str, Any]:
    """The 200 answer: its schema in the components, by its model's name (daemon/responses/)."""
    ok: dict[str, Any] = {"description": endpoint.response_schema or "success"}
    if endpoint.response is not None:
        ref = {"$ref": f"#/components/schemas/{endpoint.response.__name__}"}
        ok["content"] = {"application/json": {"schema": ref}}
    return ok


def operation(endpoint: Endpoint, dialects: Dialects) -> dict[str, Any]:
    error = {
        "description": "error in this dialect's envelope",
        "content": {
            "application/json": {
                "schema": {"$ref": f"#/components/schemas/{error_schema_for(endpoint.path, dialects)}"}
            }
        },
    }
    op: dict[str, Any] = {
        "operationId": f"{endpoint.method.lower()}_{re.sub(r'[^a-z0-9]+', '_', endpoint.path.lower()).strip('_')}",
        "summary": endpoint.summary,
        "responses": {"200": answer(endpoint), "default": error},
        "x-auth": endpoint.auth,
    }
    if endpoint.auth == "none":
        op["security"] = []
    elif endpoint.auth == "optional":
        op["security"] = [{}, {"bearerAuth": []}]
    if endpoint.scope:
        op["x-scope"] = endpoint.scope
    if endpoint.owner_only:
        op["x-owner-only"] = True
    params = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"\{(\w+)\}", endpoint.path)
    ]
    params += [query.openapi() for query in endpoint.query]
    if params:
        op["parameters"] = params
    if endpoint.request is not None:
        schema = endpoint.request.json_schema()
        op["requestBody"] = {
            # required when a body of no fields fails: a required field, or a rule over fields
            "required": bool(schema["required"]) or "anyOf" in schema,
            "content": {"application/json": {"schema": schema}},
        }
    elif endpoint.upload is not None:  # a zip, multipart parts
        op["requestBody"] = {"required": True, "content": endpoint.upload}
    elif endpoint.method == "POST":  # JSON-RPC
        op["requestBody"] = {"content": {"*/*": {"schema": {}}}}
    return op


def answer_schemas(endpoints: list[Endpoint]) -> dict[str, dict[str, Any]]:
    """The JSON Schema of every answer model these endpoints use, by the model's name."""
    models = {e.response.__name__: e.response for e in endpoints if e.response is not None}
    return {name: json_schema(model) for name, model in sorted(models.items())}


def document(endpoints: list[Endpoint], dialects: Dialects) -> dict[str, Any]:
    """The OpenAPI document for these endpoints."""
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in endpoints:
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = operation(endpoint, dialects)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "MemoryCloud Companion daemon",
            "version": __version__,
            "description": "AMP, Memory Stores (/api/v1/cloud/), agent-memory1.0 and MCP on"
            " one local store. Every request carries Authorization: Bearer <key>"
            " unless an operation's security says otherwise.",
        },
        "servers": [{"url": "http://127.0.0.1:8517"}],
        "security": [{"bearerAuth": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
            "schemas": {**ERROR_SCHEMAS, **answer_schemas(endpoints)},
        },
    }


async def openapi(request: web.Request, call: Call) -> dict[str, Any]:
    return document(request.app[keys.ENDPOINTS], request.app[keys.DIALECTS])


ENDPOINTS = [
    Endpoint(
        "GET",
        OPENAPI_PATH,
        openapi,
        "OpenAPI 3.1 document of every endpoint (no key needed).",
        auth="none",
        response=OpenapiAnswer,
    ),
]
