"""The rules the suite services check, as JSON Schema for the request models' documents.

The services refuse with their own statuses and messages (the reference's 400s, 422s naming the
field), so these rules are documentation only (``json_schema_extra``): they make the OpenAPI
document say what is refused, for clients and for fuzzers that generate valid requests from it.
tests/daemon/test_documented_rules.py checks that the document and the server agree, case by
case. A manifest reads as suite_archive.check_manifest reads it, a day as suite_sync.day_of.
"""

from __future__ import annotations

from pydantic import JsonValue
from pydantic.json_schema import JsonDict

from daemon.request_models import BLANK_ONLY, at_least, blank_padded
from daemon.runtime.suite_archive import SEMVER, SLUG
from daemon.runtime.suite_sync import DATE_PATTERN

_DAY_OR_TODAY = f"^(?:{DATE_PATTERN})?$"  # "" (or null) is today
STARTS_WITH_DAY = f"^(?:{DATE_PATTERN})"


def _text(minimum: int = 1) -> JsonDict:
    return {"type": "string", "pattern": at_least(minimum)}


def _one_of_names(first: str, second: str, value: JsonDict) -> list[JsonValue]:
    """``first`` holds ``value``, or, when it is left out, ``second`` does (``.get(first,
    .get(second))``)."""
    return [
        {"required": [first], "properties": {first: value}},
        {"not": {"required": [first]}, "required": [second], "properties": {second: value}},
    ]


VERSION: JsonDict = {"pattern": f"^$|{SEMVER.pattern}"}  # "" is the default, 1.0.0
SLUG_NAME: JsonDict = {"pattern": SLUG.pattern}

# provenance.source_type, or our earlier provenance.source (suite_archive.source_type)
PROVENANCE: JsonDict = {
    "type": "object",
    "anyOf": [
        {"required": [key], "properties": {key: {"type": "string", "minLength": 1}}}
        for key in ("source_type", "source")
    ],
}
MANIFEST: JsonDict = {
    "type": "object",
    "required": ["schema", "title", "license", "provenance"],
    "properties": {
        "schema": {"const": "amp.memory.v1"},
        "title": _text(2),
        "license": _text(2),
        "version": {"type": "string", "pattern": SEMVER.pattern},
        "summary": {"type": "string"},
        "slug": {"anyOf": [{"type": "string", "pattern": SLUG.pattern}, {"type": "null"}]},
        "tags": {
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}, {"type": "null"}]
        },
        "provenance": PROVENANCE,
    },
}
_WORK_DAY: JsonDict = {
    "type": "object",
    "properties": {"date": {"anyOf": [{"type": "string", "pattern": _DAY_OR_TODAY}, {"type": "null"}]}},
    "anyOf": _one_of_names("content", "text", {"type": "string"}),
}
WORK_MEMORY: JsonDict = {
    "anyOf": [
        {"type": "array", "items": _WORK_DAY},
        {
            "type": "object",
            "propertyNames": {"pattern": _DAY_OR_TODAY},
            "additionalProperties": {"type": "string"},
        },
        {"type": "null"},
    ]
}

# A suite has memory: a MEMORY.md that is not blank (left out, it is made from the title and
# summary) or a day of work memory that is not (check_content's 400).
HAS_MEMORY: JsonDict = {
    "anyOf": [
        {"not": {"required": ["memory_md"]}},
        {"properties": {"memory_md": {"anyOf": [{"type": "null"}, _text()]}}},
        {
            "required": ["work_memory"],
            "properties": {
                "work_memory": {
                    "anyOf": [
                        {
                            "type": "array",
                            "contains": {
                                "type": "object",
                                "anyOf": _one_of_names("content", "text", _text()),
                            },
                        },
                        {
                            "type": "object",
                            "not": {"additionalProperties": {"type": "string", "pattern": BLANK_ONLY}},
                        },
                    ]
                }
            },
        },
    ]
}


_EVENT: JsonDict = {
    "type": "object",
    "properties": {
        "event_type": {"type": ["string", "null"]},
        "occurred_at": {"anyOf": [{"type": "string", "pattern": STARTS_WITH_DAY}, {"type": "null"}]},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
    },
    "anyOf": _one_of_names("summary", "text", _text()),
}
EVENTS: JsonDict = {"anyOf": [{"type": "array", "minItems": 1, "items": _EVENT}, {"type": "null"}]}
# One event (text) or several (events), never both (null is left out, as everywhere).
TEXT_OR_EVENTS: JsonDict = {
    "anyOf": [
        {"required": ["text"], "properties": {"text": {"type": "string"}, "events": {"type": "null"}}},
        {"required": ["events"], "properties": {"events": {"type": "array"}, "text": {"type": "null"}}},
    ]
}


# What suites._check_documents refuses (its messages name the document).
DOCUMENTS: JsonDict = {
    "minItems": 1,
    "items": {
        "type": "object",
        "required": ["text"],
        "properties": {
            "text": _text(),
            "retrieval_triggers": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]
            },
        },
    },
}


# The bodies that are not JSON. A suite zip: the raw body, or the 'file' part of a form (the
# reference's way); read_upload refuses an empty one (422) and a zip that is not one (400).
_BYTES: JsonDict = {"type": "string", "format": "binary", "minLength": 1}
# A part's name goes into its Content-Disposition header, where aiohttp refuses control
# characters (400): other parts are ignored, but must be readable.
_PART_NAME: JsonDict = {"pattern": r'^[^\x00-\x1f\x7f"]*$'}
SUITE_ZIP: JsonDict = {
    "application/zip": {"schema": _BYTES},
    "multipart/form-data": {
        "schema": {
            "type": "object",
            "required": ["file"],
            "propertyNames": _PART_NAME,
            "properties": {"file": _BYTES},
        }
    },
}
# Documents to distill: UTF-8 text files as 'file' parts, importance and chunk_chars as fields.
DOCUMENT_FILES: JsonDict = {
    "multipart/form-data": {
        "schema": {
            "type": "object",
            "required": ["file"],
            "propertyNames": _PART_NAME,
            "properties": {
                "file": {"anyOf": [_text(), {"type": "array", "items": _text(), "minItems": 1}]},
                "importance": {"type": "string", "pattern": blank_padded("[1-5]")},
                "chunk_chars": {"type": "string", "pattern": blank_padded("[0-9]{1,9}")},
            },
        }
    }
}
