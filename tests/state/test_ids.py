"""Timestamps and ids (state/ids.py): the format every stored row and answer carries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from state.ids import iso_from_datetime, new_id, now_iso, parse_iso


def test_timestamps_are_rfc3339_utc_with_milliseconds() -> None:
    assert iso_from_datetime(datetime(2026, 1, 2, 3, 4, 5, 999_999, tzinfo=UTC)) == "2026-01-02T03:04:05.999Z"
    assert iso_from_datetime(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05.000Z"
    # Another offset is converted, not relabelled.
    plus_five = timezone(timedelta(hours=5))
    assert (
        iso_from_datetime(datetime(2026, 1, 2, 3, 4, 5, 1_500, tzinfo=plus_five))
        == "2026-01-01T22:04:05.001Z"
    )
    # Four-digit years always (RFC 3339), so stored stamps sort as text.
    assert iso_from_datetime(datetime(999, 1, 1, tzinfo=UTC)) == "0999-01-01T00:00:00.000Z"


def test_now_round_trips_through_parse() -> None:
    stamp = now_iso()
    assert len(stamp) == 24 and stamp.endswith("Z")
    assert iso_from_datetime(parse_iso(stamp)) == stamp


def test_ids_made_in_a_row_increase() -> None:
    ids = [new_id("mem_") for _ in range(1000)]
    assert ids == sorted(ids) and len(set(ids)) == 1000
    assert all(len(i) == len("mem_") + 32 for i in ids)
