"""How the TUI writes volatile values (tui.formats): the real formatting that the snapshot
tests run with a shifted clock and this machine's values aliased."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tui.formats import Formats

NOW = datetime(2026, 5, 18, 8, 0, tzinfo=UTC)


def at(**delta: float) -> str:
    return (NOW + timedelta(**delta)).isoformat().replace("+00:00", "Z")


@pytest.fixture
def formats() -> Formats:
    return Formats(
        clock=lambda: NOW, home="/home/you", aliases={"http://127.0.0.1:41681": "http://127.0.0.1:8517"}
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (at(seconds=-5), "just now"),
        (at(seconds=-59.9), "just now"),
        (at(minutes=-5, seconds=-30), "5 min ago"),
        (at(hours=-2, minutes=-5), "2 h 5 min ago"),
        (at(days=-3, hours=-4), "3 d 4 h ago"),
        (at(seconds=4), "in 1 min"),  # due within the minute: "in 1 min" until it is due
        (at(seconds=599.5), "in 10 min"),
        (at(hours=24, seconds=-2), "in 1 d"),
        ("2026-05-18T08:10:00.000000+00:00", "in 10 min"),  # APScheduler's form
        (None, "-"),
        ("not a time", "-"),
    ],
)
def test_ago(formats: Formats, value: str | None, shown: str) -> None:
    assert formats.ago(value) == shown


def test_moment_is_utc_to_the_minute(formats: Formats) -> None:
    assert formats.moment("2026-05-18T10:30:59.999+02:00") == "2026-05-18 08:30 UTC"
    assert formats.moment(None, "never") == "never"


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0, "<1 min"),
        (59.9, "<1 min"),
        (60, "1 min"),
        (3599, "59 min"),
        (3600, "1 h"),
        (3660, "1 h 1 min"),
        (86400, "1 d"),
        (90000, "1 d 1 h"),
        (-5, "<1 min"),
    ],
)
def test_span(seconds: float, shown: str) -> None:
    assert Formats.span(seconds) == shown


@pytest.mark.parametrize(
    ("nbytes", "shown"),
    [
        (512, "512 B"),
        (12_345, "12.3 kB"),
        (4_718_592, "4.7 MB"),
        (1_200_000_000, "1.2 GB"),
    ],
)
def test_size(nbytes: int, shown: str) -> None:
    assert Formats.size(nbytes) == shown


def test_paths_and_text(formats: Formats) -> None:
    assert formats.path("/home/you/projects/shop-web") == "~/projects/shop-web"
    assert formats.path("/home/yours/x") == "/home/yours/x"
    assert formats.path("/home/you/code/a/long/path/to/shop-web", 20) == "…ng/path/to/shop-web"
    assert formats.path("/srv/shop-web", 20) == "/srv/shop-web"
    assert formats.path(None) == "-"
    assert (
        formats.text('{"daemon_url": "http://127.0.0.1:41681"}') == '{"daemon_url": "http://127.0.0.1:8517"}'
    )


def test_the_default_clock_is_now_in_utc() -> None:
    before = datetime.now(UTC)
    assert before - timedelta(seconds=5) <= Formats().now() <= before + timedelta(seconds=5)
    assert Formats().ago(datetime.now(UTC).isoformat()) == "just now"
