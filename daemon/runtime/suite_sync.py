"""Suite sync events: the two request forms, and how an event is written into work memory.

The reference's form is one event: ``{text, event_type = work_memory, occurred_at, importance
= 3, tags, changelog}``. Our earlier form, ``{events: [{summary, event_type?, tags?,
occurred_at?}], importance}``, stays as an alternative. Either way each event becomes the line
``- [<importance>/5] <text> #tag ...`` appended to ``memory/<date>.md`` (date: the first ten
characters of occurred_at, default now in UTC); a new day's file starts with ``# <date>``.
Whitespace inside the text is collapsed, so that an event stays one bullet (the installer
reads work memory bullet by bullet).
"""

from __future__ import annotations

import re
from typing import Any

from state.errors import InvalidRequest, ValidationFailed
from state.ids import now_iso

DEFAULT_EVENT_TYPE = "work_memory"
DEFAULT_CHANGELOG = "agent sync"
# A calendar date, YYYY-MM-DD, years 0001-9999, leap days included: the dates
# date.fromisoformat reads (checked against every one of them, 2026-12-04), as a pattern the
# OpenAPI document can carry.
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)"
_ANY_YEAR_DAY = (
    r"[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    r"|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
)
DATE_PATTERN = rf"(?!0000)(?:{_ANY_YEAR_DAY}|{_LEAP_YEAR}-02-29)"
DAY = re.compile(rf"^{DATE_PATTERN}$")


def day_of(occurred_at: str, field: str) -> str:
    """The YYYY-MM-DD an event belongs to (422 when occurred_at does not start with a date)."""
    day = occurred_at[:10]
    if not DAY.fullmatch(day):
        raise ValidationFailed(
            f"field '{field}' must start with a date (YYYY-MM-DD), got {occurred_at!r}",
            details={"field": field},
        )
    return day


def _tags(value: Any, field: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ValidationFailed(f"field '{field}' must be a list of strings", details={"field": field})
    return [t.strip() for t in value if t.strip()]


def _event(
    text: Any, event_type: Any, occurred_at: Any, tags: Any, importance: int, where: str, text_field: str
) -> dict[str, Any]:
    if not isinstance(text, str) or not text:
        raise ValidationFailed(
            f"{where} needs a non-empty '{text_field}'",
            details={"field": f"{where}.{text_field}" if where != "body" else text_field},
        )
    if not text.strip():  # the reference: schema-valid but blank after trimming is a 400
        raise InvalidRequest(f"{where}: '{text_field}' is blank", details={"field": text_field})
    if event_type is not None and not isinstance(event_type, str):
        raise ValidationFailed(f"{where}.event_type must be text", details={"field": "event_type"})
    if occurred_at is not None and not isinstance(occurred_at, str):
        raise ValidationFailed(f"{where}.occurred_at must be text", details={"field": "occurred_at"})
    filled = occurred_at or now_iso()
    day_of(filled, "occurred_at")
    return {
        "event_type": (event_type or DEFAULT_EVENT_TYPE).strip() or DEFAULT_EVENT_TYPE,
        "text": " ".join(text.split()),
        "occurred_at": filled,
        "importance": importance,
        "tags": _tags(tags, "tags"),
    }


def sync_events(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of a parsed sync body, checked (422 for a bad field, 400 for blank text).

    Run before the sync gate (a write that is invalid is refused, never kept) and again when
    the write is applied or replayed."""
    importance = body.get("importance") or 3
    text, events = body.get("text"), body.get("events")
    if text is not None and events is not None:
        raise ValidationFailed(
            "send 'text' (one event) or 'events', not both",
            details={"field": "text", "conflicting": ["text", "events"]},
        )
    if events is None:
        if text is None:
            raise ValidationFailed("missing required field: text", details={"missing_fields": ["text"]})
        return [
            _event(
                text,
                body.get("event_type"),
                body.get("occurred_at"),
                body.get("tags"),
                importance,
                "body",
                "text",
            )
        ]
    if not events:
        raise ValidationFailed("field 'events' must hold at least one event", details={"field": "events"})
    out = []
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            raise ValidationFailed(
                f"events[{index}] must be an object", details={"field": f"events[{index}]"}
            )
        summary = event.get("summary", event.get("text"))
        out.append(
            _event(
                summary,
                event.get("event_type"),
                event.get("occurred_at"),
                event.get("tags"),
                importance,
                f"events[{index}]",
                "summary",
            )
        )
    return out


def line(event: dict[str, Any]) -> str:
    return f"- [{event['importance']}/5] {event['text']}" + "".join(f" #{tag}" for tag in event["tags"])


def append(files: dict[str, str], events: list[dict[str, Any]]) -> list[str]:
    """Append each event to its day's work-memory file in ``files``; the paths written."""
    written: list[str] = []
    for event in events:
        day = event["occurred_at"][:10]
        path = f"memory/{day}.md"
        text = files.get(path)
        if text is None or not text.strip():
            text = f"# {day}\n\n"
        elif not text.endswith("\n"):
            text += "\n"
        files[path] = text + line(event) + "\n"
        if path not in written:
            written.append(path)
    return written


def changelog(events: list[dict[str, Any]], given: str | None) -> str:
    """versions[].changelog: the reference's 'sync: <event_type>', with the caller's own note
    when one was sent (the reference ignores it; we keep it)."""
    kinds = ", ".join(dict.fromkeys(e["event_type"] for e in events))
    note = (given or "").strip()
    return f"sync: {kinds}" + (f" ({note})" if note and note != DEFAULT_CHANGELOG else "")


def upstream_body(event: dict[str, Any], given_changelog: str | None) -> dict[str, Any]:
    """The event as the reference's sync body, for the upstream outbox."""
    body = {k: event[k] for k in ("text", "event_type", "occurred_at", "importance", "tags")}
    if given_changelog:
        body["changelog"] = given_changelog
    return body
