"""Turn-level conversation datasets for retrieval benchmarks (bench/retrieval_turns.py).

One in-memory model for any long-conversation recall set: conversations made of turns
(one memory each when ingested), and questions whose gold answer is a set of turn ids of
their own conversation. :func:`load` reads a JSON file in one of three shapes and tells
them apart by their keys; bad input raises :class:`DatasetError` with the file and the
field (e.g. ``data.json: conversations[1].sessions[0].turns[3].text: expected a non-empty
string``), which the CLI prints as one line.

Turn ids need only be unique within their conversation (LoCoMo's ``D1:3`` repeats in
every sample); a turn is known by ``(conversation id, turn id)``.

Split: every conversation belongs to the tuning half (``tune``) or the held-out half
(``report``). A canonical conversation may say so with ``"split"``; otherwise, and in the
other shapes, the conversation's position in the file decides: index 0, 2, 4, ... (even)
tune, 1, 3, 5, ... (odd) report. Choose settings on ``tune``; quote ``report``.

1. Canonical (ours; bench/data/conversations/*.json)::

    {"name": "our-conversations-v1",
     "conversations": [
       {"id": "maya-jonah", "speakers": ["Maya", "Jonah"], "split": "tune",
        "sessions": [
          {"id": "S1", "date": "2023-05-08T13:56",
           "turns": [{"id": "S1:1", "speaker": "Maya", "text": "Look what we found!",
                      "image_caption": "a puppy asleep on a red blanket"}]}]}],
     "questions": [
       {"id": "maya-jonah/q1", "conversation": "maya-jonah",
        "question": "What did Maya's new dog sleep on?", "gold": ["S1:1"],
        "category": "photo", "date": "2023-06-01"}]}

   ``speakers``, ``split``, ``image_caption``, ``category`` and the question's ``date``
   are optional; dates are ISO 8601 (``2023-05-08`` or ``2023-05-08T13:56``). A
   conversation may list its turns flat instead of in sessions, each turn naming its
   session and, optionally, its date::

    {"id": "c1", "turns": [{"id": "t1", "session": "S1", "date": "2023-05-08",
                            "speaker": "Maya", "text": "..."}]}

   Every gold id must name a turn of the question's conversation (else an error: this is
   our own shape, so a broken reference is a bug, not noise).

2. LoCoMo (``locomo10.json``, Maharana et al. 2024): a list of samples::

    [{"sample_id": "conv-26",
      "conversation": {"speaker_a": "Caroline", "speaker_b": "Melanie",
                       "session_1_date_time": "1:56 pm on 8 May, 2023",
                       "session_1": [{"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!",
                                      "img_url": ["..."], "blip_caption": "a photo of ..."}]},
      "qa": [{"question": "When did Caroline go to the LGBTQ support group?",
              "answer": "7 May 2023", "evidence": ["D1:3"], "category": 2}]}]

   Conversation id = ``sample_id``; session ids ``session_N``; dates such as ``1:56 pm on
   8 May, 2023`` become ``2023-05-08T13:56``; ``blip_caption`` is the image caption. Gold =
   the ``evidence`` dia_ids (an entry such as ``"D8:6; D9:17"`` is split; ``D30:05`` names ``D30:5``,
   counted). A question whose
   evidence is empty or names no existing turn is skipped and counted; evidence ids that
   name no turn are dropped from otherwise valid questions and counted. Category = ``cat``
   + the number (which number means what is disputed between papers; 5 is adversarial).

3. LongMemEval (Wu et al. 2024; ``longmemeval_s.json``/``_m``/``_oracle``): a list of
   questions, each with its own haystack::

    [{"question_id": "e47becba", "question_type": "single-session-user",
      "question": "What degree did I graduate with?", "answer": "Business Administration",
      "question_date": "2023/05/30 (Tue) 23:40",
      "haystack_session_ids": ["sharegpt_yywfq_0", "answer_280352e9"],
      "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/20 (Sat) 02:57"],
      "haystack_sessions": [[{"role": "user", "content": "..."}],
                            [{"role": "user", "content": "I graduated with ...", "has_answer": true}]],
      "answer_session_ids": ["answer_280352e9"]}]

   Each question is its own conversation (id = ``question_id``), turn ids are
   ``{session id}:{position}``, the speaker is the role. Gold = the turns with
   ``has_answer`` true; a question with none (the ``_abs`` abstention questions) is skipped
   and counted. Category = ``question_type``.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SPLITS = ("tune", "report")


class DatasetError(ValueError):
    """A dataset file that cannot be read: the message names the file and the field."""


@dataclass(frozen=True)
class Turn:
    id: str
    conversation: str
    session: str
    speaker: str
    text: str
    date: str | None = None  # the session's date, ISO 8601
    image_caption: str | None = None


@dataclass(frozen=True)
class Question:
    id: str
    conversation: str
    question: str
    gold: tuple[str, ...]  # turn ids of ``conversation``
    category: str | None = None
    date: str | None = None


@dataclass
class Conversation:
    id: str
    index: int  # position in the file
    split: str  # "tune" or "report"
    turns: list[Turn] = field(default_factory=list)
    speakers: tuple[str, ...] = ()

    @property
    def sessions(self) -> list[str]:
        return list(dict.fromkeys(turn.session for turn in self.turns))


@dataclass
class Dataset:
    name: str
    source: str  # the file it came from
    shape: str  # "canonical", "locomo" or "longmemeval"
    conversations: list[Conversation]
    questions: list[Question]
    # What loading left out, e.g. {"questions without evidence": 2}
    skipped: dict[str, int] = field(default_factory=dict)

    _index: dict[str, Conversation] = field(default_factory=dict, init=False, repr=False, compare=False)

    def conversation(self, conversation_id: str) -> Conversation:
        if len(self._index) != len(self.conversations):
            self._index = {c.id: c for c in self.conversations}
        return self._index[conversation_id]

    def split_of(self, question: Question) -> str:
        return self.conversation(question.conversation).split

    def turns(self) -> Iterable[Turn]:
        for conversation in self.conversations:
            yield from conversation.turns


def parity_split(index: int) -> str:
    return "report" if index % 2 else "tune"


# -- reading -----------------------------------------------------------------------------


def load(path: str | Path) -> Dataset:
    """Read and parse one dataset file (see the module docstring for the shapes)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    return parse(data, str(path), default_name=path.stem)


def detect_shape(data: Any, source: str = "<data>") -> str:
    if isinstance(data, dict) and "conversations" in data:
        return "canonical"
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if "sample_id" in data[0] or "conversation" in data[0]:
            return "locomo"
        if "haystack_sessions" in data[0] or "question_id" in data[0]:
            return "longmemeval"
    raise DatasetError(
        f'{source}: unrecognised dataset shape: expected an object with "conversations" '
        '(canonical), or a list of LoCoMo samples ("sample_id", "conversation", "qa") '
        'or of LongMemEval questions ("question_id", "haystack_sessions")'
    )


def parse(data: Any, source: str = "<data>", default_name: str = "dataset") -> Dataset:
    """The dataset in ``data`` (decoded JSON); ``source`` names it in errors."""
    shape = detect_shape(data, source)
    reader = {"canonical": _canonical, "locomo": _locomo, "longmemeval": _longmemeval}[shape]
    dataset = reader(_Reader(source), data, default_name)
    if not dataset.questions:
        raise DatasetError(f"{source}: no usable questions (skipped: {dataset.skipped or 'none'})")
    return dataset


class _Reader:
    """Typed field access whose errors name the file and the field's path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, message: str) -> DatasetError:
        return DatasetError(f"{self.source}: {where}: {message}")

    def get(
        self,
        obj: Any,
        key: str,
        where: str,
        kind: type | tuple[type, ...],
        *,
        required: bool = True,
        nonempty: bool = True,
    ) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(where, f"expected an object, got {type(obj).__name__}")
        here = f"{where}.{key}" if where else key
        if key not in obj or obj[key] is None:
            if required:
                raise self.fail(here, "missing")
            return None
        value = obj[key]
        if kind is str and isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)  # ids written as numbers
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise self.fail(here, f"expected {_article(names)}, got {type(value).__name__}")
        if (
            nonempty
            and isinstance(value, (str, list))
            and not (value.strip() if isinstance(value, str) else value)
        ):
            raise self.fail(here, "expected a non-empty " + ("string" if isinstance(value, str) else "list"))
        return value


def _article(name: str) -> str:
    name = {"str": "string", "list": "list", "dict": "object", "int": "integer"}.get(name, name)
    return ("an " if name[0] in "aeiou" else "a ") + name


def _iso_date(reader: _Reader, value: str, where: str) -> str:
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise reader.fail(where, f"not an ISO 8601 date: {value!r}") from None
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        return value.strip()
    return parsed.isoformat(timespec="minutes")


def _add_question(
    reader: _Reader, questions: list[Question], seen: set[str], question: Question, where: str
) -> None:
    if question.id in seen:
        raise reader.fail(f"{where}.id", f"duplicate question id {question.id!r}")
    seen.add(question.id)
    questions.append(question)


# -- canonical ---------------------------------------------------------------------------


def _canonical(reader: _Reader, data: dict, default_name: str) -> Dataset:
    name = reader.get(data, "name", "", str, required=False) or default_name
    conversations: list[Conversation] = []
    turn_ids: dict[str, set[str]] = {}
    for ci, conv in enumerate(reader.get(data, "conversations", "", list)):
        where = f"conversations[{ci}]"
        cid = reader.get(conv, "id", where, str)
        if cid in turn_ids:
            raise reader.fail(f"{where}.id", f"duplicate conversation id {cid!r}")
        split = reader.get(conv, "split", where, str, required=False) or parity_split(ci)
        if split not in SPLITS:
            raise reader.fail(f"{where}.split", f"expected one of {', '.join(SPLITS)}, got {split!r}")
        speakers = reader.get(conv, "speakers", where, list, required=False, nonempty=False) or []
        conversation = Conversation(cid, ci, split, speakers=tuple(str(s) for s in speakers))
        ids: set[str] = set()
        if "sessions" in conv:
            for si, session in enumerate(reader.get(conv, "sessions", where, list)):
                swhere = f"{where}.sessions[{si}]"
                sid = reader.get(session, "id", swhere, str)
                date = reader.get(session, "date", swhere, str, required=False)
                date = _iso_date(reader, date, f"{swhere}.date") if date else None
                for ti, turn in enumerate(reader.get(session, "turns", swhere, list)):
                    _canonical_turn(reader, conversation, ids, turn, f"{swhere}.turns[{ti}]", sid, date)
        elif "turns" in conv:
            for ti, turn in enumerate(reader.get(conv, "turns", where, list)):
                twhere = f"{where}.turns[{ti}]"
                sid = reader.get(turn, "session", twhere, str)
                date = reader.get(turn, "date", twhere, str, required=False)
                date = _iso_date(reader, date, f"{twhere}.date") if date else None
                _canonical_turn(reader, conversation, ids, turn, twhere, sid, date)
        else:
            raise reader.fail(where, 'expected "sessions" or "turns"')
        turn_ids[cid] = ids
        conversations.append(conversation)
    questions: list[Question] = []
    seen: set[str] = set()
    for qi, q in enumerate(reader.get(data, "questions", "", list)):
        where = f"questions[{qi}]"
        cid = reader.get(q, "conversation", where, str)
        if cid not in turn_ids:
            raise reader.fail(f"{where}.conversation", f"no conversation {cid!r}")
        gold = [str(g) for g in reader.get(q, "gold", where, list)]
        missing = [g for g in gold if g not in turn_ids[cid]]
        if missing:
            raise reader.fail(f"{where}.gold", f"no turn {missing[0]!r} in conversation {cid!r}")
        date = reader.get(q, "date", where, str, required=False)
        _add_question(
            reader,
            questions,
            seen,
            Question(
                id=reader.get(q, "id", where, str, required=False) or f"{cid}#q{qi}",
                conversation=cid,
                question=reader.get(q, "question", where, str),
                gold=tuple(dict.fromkeys(gold)),
                category=reader.get(q, "category", where, str, required=False),
                date=_iso_date(reader, date, f"{where}.date") if date else None,
            ),
            where,
        )
    return Dataset(name, reader.source, "canonical", conversations, questions)


def _canonical_turn(
    reader: _Reader,
    conversation: Conversation,
    ids: set[str],
    turn: Any,
    where: str,
    session: str,
    date: str | None,
) -> None:
    tid = reader.get(turn, "id", where, str)
    if tid in ids:
        raise reader.fail(f"{where}.id", f"duplicate turn id {tid!r} in conversation {conversation.id!r}")
    ids.add(tid)
    conversation.turns.append(
        Turn(
            id=tid,
            conversation=conversation.id,
            session=session,
            speaker=reader.get(turn, "speaker", where, str),
            text=reader.get(turn, "text", where, str),
            date=date,
            image_caption=reader.get(turn, "image_caption", where, str, required=False, nonempty=False)
            or None,
        )
    )


# -- LoCoMo ------------------------------------------------------------------------------

_MONTHS = {
    m.lower(): i
    for i, m in enumerate(
        "January February March April May June July August September October November December".split(), 1
    )
}
_LOCOMO_DATE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$", re.I
)
_SESSION_KEY = re.compile(r"^session_(\d+)$")


def locomo_date(text: str) -> str:
    """``1:56 pm on 8 May, 2023`` -> ``2023-05-08T13:56`` (ValueError when it is not one)."""
    match = _LOCOMO_DATE.match(text)
    if not match:
        raise ValueError(text)
    hour, minute, half, day, month_name, year = match.groups()
    month = _MONTHS.get(month_name.lower()) or next(
        (n for name, n in _MONTHS.items() if name.startswith(month_name.lower()) and len(month_name) >= 3),
        None,
    )
    if month is None:
        raise ValueError(text)
    hour12 = int(hour)
    if not 1 <= hour12 <= 12:
        raise ValueError(text)
    hour24 = hour12 % 12 + (12 if half.lower() == "p" else 0)
    return dt.datetime(int(year), month, int(day), hour24, int(minute)).isoformat(timespec="minutes")


def _evidence_ids(evidence: list) -> list[str]:
    out: list[str] = []
    for entry in evidence:
        out.extend(part for part in re.split(r"[;,\s]+", str(entry)) if part)
    return list(dict.fromkeys(out))


OTHERWISE = "evidence ids written otherwise (D1:03 for D1:3; kept)"
_DIA_ID = re.compile(r"^\s*D\s*(\d+)\s*:\s*(\d+)\s*$", re.I)


def dia_key(dia_id: str) -> str:
    """A dia_id as compared: LoCoMo's evidence sometimes writes ``D30:05`` or ``d1:3`` for
    the turn ``D30:5`` / ``D1:3``; other ids are compared as they are."""
    match = _DIA_ID.match(dia_id)
    return f"D{int(match.group(1))}:{int(match.group(2))}" if match else dia_id


def _locomo(reader: _Reader, data: list, default_name: str) -> Dataset:
    conversations: list[Conversation] = []
    questions: list[Question] = []
    skipped: dict[str, int] = {}
    seen: set[str] = set()
    for ci, sample in enumerate(data):
        where = f"[{ci}]"
        cid = reader.get(sample, "sample_id", where, str, required=False) or f"sample-{ci}"
        conv = reader.get(sample, "conversation", where, dict)
        cwhere = f"{where}.conversation"
        speakers = tuple(s for s in (conv.get("speaker_a"), conv.get("speaker_b")) if isinstance(s, str))
        conversation = Conversation(cid, ci, parity_split(ci), speakers=speakers)
        numbers = sorted(int(m.group(1)) for key in conv if (m := _SESSION_KEY.match(key)))
        ids: set[str] = set()
        for n in numbers:
            key = f"session_{n}"
            raw_date = reader.get(conv, f"{key}_date_time", cwhere, str, required=False)
            date = None
            if raw_date:
                try:
                    date = locomo_date(raw_date)
                except ValueError:
                    raise reader.fail(
                        f"{cwhere}.{key}_date_time",
                        f"not a LoCoMo date such as '1:56 pm on 8 May, 2023': {raw_date!r}",
                    ) from None
            for ti, turn in enumerate(reader.get(conv, key, cwhere, list, nonempty=False)):
                twhere = f"{cwhere}.{key}[{ti}]"
                tid = reader.get(turn, "dia_id", twhere, str)
                if tid in ids:
                    raise reader.fail(f"{twhere}.dia_id", f"duplicate dia_id {tid!r}")
                ids.add(tid)
                caption = turn.get("blip_caption")
                conversation.turns.append(
                    Turn(
                        id=tid,
                        conversation=cid,
                        session=key,
                        speaker=reader.get(turn, "speaker", twhere, str),
                        text=reader.get(turn, "text", twhere, str, nonempty=False),
                        date=date,
                        image_caption=caption.strip()
                        if isinstance(caption, str) and caption.strip()
                        else None,
                    )
                )
        if not conversation.turns:
            raise reader.fail(cwhere, "no session_N turns")
        conversations.append(conversation)
        by_key = {dia_key(t): t for t in ids}
        for qi, qa in enumerate(reader.get(sample, "qa", where, list, nonempty=False)):
            qwhere = f"{where}.qa[{qi}]"
            evidence = reader.get(qa, "evidence", qwhere, list, required=False, nonempty=False) or []
            named = _evidence_ids(evidence)
            gold = list(dict.fromkeys(by_key[dia_key(g)] for g in named if dia_key(g) in by_key))
            for reason, count in (
                (OTHERWISE, sum(1 for g in named if g not in ids and dia_key(g) in by_key)),
                ("evidence ids naming no turn (dropped)", sum(1 for g in named if dia_key(g) not in by_key)),
            ):
                if count:
                    skipped[reason] = skipped.get(reason, 0) + count
            if not gold:
                reason = (
                    "questions without evidence" if not named else "questions whose evidence names no turn"
                )
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            category = qa.get("category")
            _add_question(
                reader,
                questions,
                seen,
                Question(
                    id=f"{cid}#q{qi}",
                    conversation=cid,
                    question=reader.get(qa, "question", qwhere, str),
                    gold=tuple(gold),
                    category=f"cat{category}" if category is not None else None,
                ),
                qwhere,
            )
    return Dataset(default_name, reader.source, "locomo", conversations, questions, skipped)


# -- LongMemEval -------------------------------------------------------------------------

_LME_DATE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})(?:\s*\([A-Za-z]+\))?(?:\s+(\d{1,2}):(\d{2}))?\s*$")


def longmemeval_date(text: str) -> str:
    """``2023/05/20 (Sat) 02:21`` -> ``2023-05-20T02:21`` (ValueError when it is not one)."""
    match = _LME_DATE.match(text)
    if not match:
        raise ValueError(text)
    year, month, day, hour, minute = match.groups()
    if hour is None:
        return dt.date(int(year), int(month), int(day)).isoformat()
    return dt.datetime(int(year), int(month), int(day), int(hour), int(minute)).isoformat(timespec="minutes")


def _lme_date(reader: _Reader, value: Any, where: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise reader.fail(where, f"expected a string, got {type(value).__name__}")
    try:
        return longmemeval_date(value)
    except ValueError:
        raise reader.fail(
            where, f"not a LongMemEval date such as '2023/05/20 (Sat) 02:21': {value!r}"
        ) from None


def _longmemeval(reader: _Reader, data: list, default_name: str) -> Dataset:
    conversations: list[Conversation] = []
    questions: list[Question] = []
    skipped: dict[str, int] = {}
    seen: set[str] = set()
    for ci, item in enumerate(data):
        where = f"[{ci}]"
        qid = reader.get(item, "question_id", where, str)
        sessions = reader.get(item, "haystack_sessions", where, list)
        session_ids = reader.get(item, "haystack_session_ids", where, list, required=False) or []
        dates = reader.get(item, "haystack_dates", where, list, required=False) or []
        if session_ids and len(session_ids) != len(sessions):
            raise reader.fail(
                f"{where}.haystack_session_ids", f"{len(session_ids)} ids for {len(sessions)} sessions"
            )
        if dates and len(dates) != len(sessions):
            raise reader.fail(f"{where}.haystack_dates", f"{len(dates)} dates for {len(sessions)} sessions")
        conversation = Conversation(qid, ci, parity_split(ci))
        gold: list[str] = []
        ids: set[str] = set()
        for si, session in enumerate(sessions):
            swhere = f"{where}.haystack_sessions[{si}]"
            if not isinstance(session, list):
                raise reader.fail(swhere, f"expected a list of turns, got {type(session).__name__}")
            sid = str(session_ids[si]) if session_ids else f"session_{si + 1}"
            date = _lme_date(reader, dates[si], f"{where}.haystack_dates[{si}]") if dates else None
            for ti, turn in enumerate(session):
                twhere = f"{swhere}[{ti}]"
                tid = f"{sid}:{ti}"
                while tid in ids:  # the same session id twice in one haystack
                    tid += "'"
                ids.add(tid)
                conversation.turns.append(
                    Turn(
                        id=tid,
                        conversation=qid,
                        session=sid,
                        speaker=reader.get(turn, "role", twhere, str),
                        text=reader.get(turn, "content", twhere, str, nonempty=False),
                        date=date,
                    )
                )
                if turn.get("has_answer") is True:
                    gold.append(tid)
        conversations.append(conversation)
        if not gold:
            skipped["questions without has_answer turns"] = (
                skipped.get("questions without has_answer turns", 0) + 1
            )
            continue
        _add_question(
            reader,
            questions,
            seen,
            Question(
                id=qid,
                conversation=qid,
                question=reader.get(item, "question", where, str),
                gold=tuple(gold),
                category=reader.get(item, "question_type", where, str, required=False),
                date=_lme_date(reader, item.get("question_date"), f"{where}.question_date"),
            ),
            where,
        )
    return Dataset(default_name, reader.source, "longmemeval", conversations, questions, skipped)
