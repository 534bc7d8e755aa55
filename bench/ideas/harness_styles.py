"""How a harness may store one memory per turn, each with the Porter baseline over the same
strings, for bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --split tune --ideas bench/ideas/harness_styles.py

The shipped bench stores ``"{speaker}: {text}"`` as kind ``message`` with the session id in
its provenance. An outside harness may not: one AMP memory delta per turn has no session id
(kind: its delta type, here ``observation``; the title the content's start), and its text
may carry the session's date before the speaker, or no speaker at all. Styles:

* ``speaker``: ``"{speaker}: {text}"``;
* ``stamped``: ``"[{date}] {speaker}: {text}"`` (the session's date and time);
* ``said on``: ``"On {date}, {speaker} said: {text}"``;
* ``stamp after``: ``"{speaker} ({date}): {text}"``;
* ``dia id``: ``"{turn id} {speaker}: {text}"`` (LoCoMo's ids, "D1:3");
* ``markdown``: ``"**{speaker}:** {text}"``;
* ``list item``: ``"- {speaker}: {text}"``;
* ``brackets``: ``"[{speaker}]: {text}"``;
* ``text``: ``"{text}"`` alone.

Each with ``[shares a photo: ...]`` when the turn shares one, stored as ``message`` with
its session id and as ``observation`` deltas without. Run it on two trees to compare them
(bench/RESULTS.md, "turns stored with a time stamp": c8f26da against tokenizer 4).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import retrieval_turns as rt
from retrieval_turns import Config, porter_rank
from turns_dataset import Turn


def _photo(turn: Turn) -> str:
    return f" [shares a photo: {turn.image_caption}]" if turn.image_caption else ""


STYLES: dict[str, Callable[[Turn], str]] = {
    "speaker": lambda t: f"{t.speaker}: {t.text}{_photo(t)}",
    "stamped": lambda t: f"[{t.date}] {t.speaker}: {t.text}{_photo(t)}",
    "said on": lambda t: f"On {t.date}, {t.speaker} said: {t.text}{_photo(t)}",
    "stamp after": lambda t: f"{t.speaker} ({t.date}): {t.text}{_photo(t)}",
    "dia id": lambda t: f"{t.id} {t.speaker}: {t.text}{_photo(t)}",
    "markdown": lambda t: f"**{t.speaker}:** {t.text}{_photo(t)}",
    "list item": lambda t: f"- {t.speaker}: {t.text}{_photo(t)}",
    "brackets": lambda t: f"[{t.speaker}]: {t.text}{_photo(t)}",
    "text": lambda t: f"{t.text}{_photo(t)}",
}


_INGEST = rt.ingest  # the harness's own, before an idea patches it


def ingest_as(kind: str, with_session: bool) -> Callable[..., dict[int, tuple[str, str]]]:
    """rt.ingest (the turn's text from rt.memory_text, patched per style); without the
    session, each turn as a memory delta stores it."""
    return functools.partial(_INGEST, kind=kind, with_session=with_session, as_delta=not with_session)


def ideas() -> list[Config]:
    found = []
    for style, text in STYLES.items():
        for kind, with_session in (("message", True), ("observation", False)):
            patches = ((rt, "memory_text", text), (rt, "ingest", ingest_as(kind, with_session)))
            tag = f"{style}, {kind}{' + session' if with_session else ''}"
            found.append(Config(f"baseline: {tag}", rank=porter_rank, patches=patches))
            found.append(Config.shipped(f"default: {tag}", patches=patches))
    return found
