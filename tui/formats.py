"""How the TUI writes the values that change from one moment or machine to the next.

Times, ages, durations, sizes, paths on this machine and free text from the daemon (which can
hold its address) all go through one :class:`Formats` object, owned by the app. That keeps the
wording the same on every tab, and gives tests one seam: a test passes a ``Formats`` with its
own clock and home directory instead of patching the daemon or the store.

Ages are written for a person, not a log: "just now", "5 min ago", "in 1 d 2 h". They are
whole minutes counted the way a wall clock does (floor of the signed difference), so a value
seconds old reads "just now" and one due in ten minutes reads "in 10 min" until it is due.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime


def system_clock() -> datetime:
    return datetime.now(UTC)


class Formats:
    """Turns volatile values into text. Subclass or configure it to pin them (tests)."""

    def __init__(
        self,
        clock: Callable[[], datetime] = system_clock,
        home: str | None = None,
        aliases: Mapping[str, str] | None = None,
    ) -> None:
        """``clock``: now, as an aware datetime. ``home``: shown as ``~`` in paths (default:
        the user's home). ``aliases``: substrings of daemon text shown as something else."""
        self.clock = clock
        self.home = (home or os.path.expanduser("~")).rstrip("/")
        self.aliases = dict(aliases or {})

    def now(self) -> datetime:
        return self.clock()

    def instant(self, value: str | None) -> datetime | None:
        """Parse a daemon timestamp (RFC 3339, ``Z`` or an offset); None if absent or bad."""
        if not value:
            return None
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

    def ago(self, value: str | None, missing: str = "-") -> str:
        """Relative to now: "just now", "5 min ago", "in 10 min", "3 d ago"."""
        moment = self.instant(value)
        if moment is None:
            return missing
        minutes = math.floor((self.now() - moment).total_seconds() / 60)
        if minutes == 0:
            return "just now"
        if minutes > 0:
            return f"{self.span(minutes * 60)} ago"
        return f"in {self.span(-minutes * 60)}"

    def moment(self, value: str | None, missing: str = "-") -> str:
        """Absolute, to the minute: ``2026-05-18 08:00 UTC``."""
        moment = self.instant(value)
        if moment is None:
            return missing
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")

    @staticmethod
    def span(seconds: float) -> str:
        """A duration in whole minutes, at most two units: "<1 min", "5 min", "2 h 5 min", "3 d 4 h"."""
        minutes = math.floor(max(seconds, 0) / 60)
        if minutes < 1:
            return "<1 min"
        if minutes < 60:
            return f"{minutes} min"
        hours, minutes = divmod(minutes, 60)
        if hours < 24:
            return f"{hours} h {minutes} min" if minutes else f"{hours} h"
        days, hours = divmod(hours, 24)
        return f"{days} d {hours} h" if hours else f"{days} d"

    @staticmethod
    def size(nbytes: int | float) -> str:
        """Bytes for a person: ``512 B``, ``12.3 kB``, ``4.7 MB``, ``1.2 GB`` (powers of 1000)."""
        for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
            if nbytes >= scale:
                return f"{nbytes / scale:.1f} {unit}"
        return f"{int(nbytes)} B"

    def path(self, value: str | None, width: int = 0) -> str:
        """A path on this machine, the home directory written ``~``; with ``width``, cut from
        the left to fit (the end of a path says most)."""
        if not value:
            return "-"
        value = self.text(value)
        if self.home and (value == self.home or value.startswith(self.home + "/")):
            value = "~" + value[len(self.home) :]
        return value if not width or len(value) <= width else "…" + value[-(width - 1) :]

    def text(self, value: str) -> str:
        """Free text from the daemon (file contents, request bodies) as shown: exact, but for
        the aliases (none in the app; a test maps its temporary directory and port)."""
        for real, shown in self.aliases.items():
            value = value.replace(real, shown)
        return value
