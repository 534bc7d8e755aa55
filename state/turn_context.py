"""The turns before a conversation turn, as weak search context.

A turn of a conversation often means little on its own: "Saturday the 29th, at Navy Pier"
answers the question asked the turn before ("When is the bread festival?"), and "Anything
under two hours" the one about a race goal. So a record that belongs to a session
(``provenance.session_id``: agent-memory1.0 messages, imported dialogues) is indexed with
the tokens of the two turns before it in the same namespace and session, each in a column
of the full-text index that counts for ``CONTEXT_WEIGHT`` (a fifth) of the turn's own text.
A turn written without a session id (kind ``message``, or a text that starts with its
speaker: an AMP delta or a local memory per turn) takes the turns before it in its
namespace of the same kind instead; a text that starts with a label ("Decision: ...",
"Open loop: ...": NOTE_LABELS) is a note, not a speaker's turn, and no turn's context.
Other records (notes, facts, most AMP deltas) have empty context columns and rank as
before.

Only the turns *before*: a new turn never changes an older turn's row, so a write costs one
index probe more and no update of another row. The turns after a record are rewritten only
when a turn is written out of order, changed, deleted or redacted (its followers' context
is then made anew).

Chosen on the tuning halves of three datasets of long conversations (bench/RESULTS.md,
"choosing the conversation context"; `--ideas bench/ideas/turn_context.py`). Recall@10
summed over the three tuning halves: no context 1.91 (the Porter baseline: 1.88), the turn
before 2.16, the two turns before at 0.2 2.27 (at 0.3: 2.22, at 0.5: 2.22), three turns at
0.2 2.29 for a third more index per turn, four 2.27. On the first dataset the turn before
and the turn after ranked below the two turns before, and one joined column of the same
turns a little below two. Session summaries are not turns and stay out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from state.db import Connection
from state.group_commit import deferred_value, run_deferred

CONTEXT_TURNS = 2  # the turns before a record that its context columns hold, nearest first
CONTEXT_WEIGHT = 0.2
# Each column's weight in BM25: a record's own tokens at 1, each context column at
# CONTEXT_WEIGHT. The one definition for both engines: FTS5's rank below, and the weighted
# frequencies PostgreSQL stores (state/pg/search.py).
WEIGHTS = (1.0,) + (CONTEXT_WEIGHT,) * CONTEXT_TURNS
RANK = f"bm25({', '.join(map(str, WEIGHTS))})"  # the FTS5 rank of the index
COLUMNS = tuple(f"before{n}" for n in range(1, CONTEXT_TURNS + 1))

# Matches the partial index of migration m0018 (so each lookup is one index probe).
_CHAIN = (
    "namespace = ? and json_extract(provenance, '$.session_id') = ?"
    " and deleted_at is null and kind != 'summary'"
)
# A turn stored without a session id (an AMP memory delta, a local memory: one namespace per
# conversation) chains to the records before it in its namespace of the same kind that have
# no session id either; matches the partial index of migration m0020. The kind is cast so
# that the planner does not compare it with another partial index's ``kind = 'summary'`` and
# plan the lookup again at every run (state/db.py, STATEMENT_CACHE).
_LOOSE_CHAIN = (
    "namespace = ? and kind = cast(? as text) and json_extract(provenance, '$.session_id') is null"
    " and deleted_at is null and kind != 'summary'"
)
# Which records without a session id are turns: kind "message", or a text that starts with a
# speaker ("Caroline: ...", "user: ...", "Dr. Lee: ...", "助手：..."). Ungated, the chain
# cost MADial-Bench (independent memories, no session ids) 0.045 MRR@10 in Chinese and 0.025
# in English; gated, MADial-Bench is unchanged and turns stored without session ids get back
# all that the context gives turns with them (bench/RESULTS.md, "choosing tokenizer 3").
LOOSE_TURN_KIND = "message"
# A time stamp a harness may put before the speaker: "[2023-05-08] Caroline: ...",
# "2023-05-08T19:12 Maya: ...", "(1:56 pm on 8 May, 2023) Caroline: ...", "On May 8, 2023,
# Dr. Lee said: ...": anything in brackets, an ISO or numeric date (and time), or a written
# date with its time; or in brackets after the speaker, "Caroline (8 May 2023): ...". Turns
# stored that way without a session id got no context at all: on the tuning halves,
# recall@10 0.604 / 0.666 / 0.829 against 0.808 / 0.795 / 0.907 with the gate that sees the
# speaker behind the stamp, which is what the same turns get without a stamp
# (bench/RESULTS.md, "turns stored with a time stamp"). Since tokenizer 9 also a turn's id
# ("D1:3 Caroline: ..."), a list or quote marker ("- Caroline: ...") and Markdown's emphasis
# ("**Caroline:** ..."): turns stored so got a third of the context's gain (held out, R@10
# over the Porter baseline +2.6-14.0 % against +19.5-30.1 % for "Caroline: ..."), and now
# the same (bench/RESULTS.md, "turns stored with an id, a list marker or emphasis").
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]{0,6}\.?"
_STAMP = (
    r"(?:[\[(\uff08\u3010<][^\])\uff09\u3011>\n]{1,64}[\])\uff09\u3011>]"
    r"|\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}(?: \d{1,2}:\d{2}(?::\d{2})?)?"
    r"|[a-z]{1,3}\d{1,4}:\d{1,4}"  # a turn's id: LoCoMo's "D1:3"
    r"|(?:\d{1,2}:\d{2}\s*(?:[ap]\.?m\.?)?\s*(?:on\s+)?)?"
    rf"(?:\d{{1,2}}\s+{_MONTH},?\s+\d{{4}}|{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}))"
)
SPEAKER = re.compile(
    r"(?:\s*[-*>\u2022]\s)?"  # a list or quote marker: "- Caroline: ...", "> Maya: ..."
    rf"(?i:\s*(?:(?:on|at)\s+)?{_STAMP}\s*[,:|\-\u2013\u2014]?)?"
    # Markdown's "**Caroline:**", and since tokenizer 10 a name in brackets: "[Caroline]: ...".
    r"\s*\[?\**(?P<label>[^\W\d_][\w'.\-]*(?: [\w'.\-]+){0,3})\**\]?"
    r"(?: ?[\[(\uff08][^\])\uff09\n]{1,64}[\])\uff09])? ?\**(?::\**(?:\s|$)|\uff1a)"
)

# A document's or a note's header (since tokenizer 10): "Title: Deploy notes", "Project:
# billing", "Tags: ...", as a Memory Stores document (kind document, no session id) or a
# delta's summary may start; before, documents so written held each other's words.
HEADER_LABELS = frozenset(
    """
    area author categories category component file heading keywords kind label labels
    module name owner path priority project repo repository source subject tag tags
    ticket title topic type url version
    titel projekt titre projet título proyecto
    """.split()
)
HEADER_ENDINGS = tuple(
    "标题 主题 项目 名称 标签 类别 分类 来源 作者 关键词 链接 路径 文件 タイトル 件名 プロジェクト タグ".split()
)
# What an agent writes before a note's colon to say what it is: "Decision: keep SQLite",
# "Open loop: the flaky test", "Deploy checklist: run migrations, ...", "TODO(alice): ...",
# "待办事项：...". Such a text matches SPEAKER, and the notes of one kind in one namespace
# (an AMP delta's kind is its delta type) then chained as a conversation: each took the
# words of the notes written before it as context, and a question about one note found its
# neighbour (a note's words counted in three records). Decided by the label's last word,
# casefolded (for Chinese and Japanese, by how it ends: NOTE_ENDINGS), so that "Key
# decision" and "User preferences" are labels too; a name (Caroline, Dr. Lee, user,
# assistant, 助手) is none of these. "Question" and "Answer" are left out: a "Q:" / "A:"
# pair is a conversation's turns. MADial-Bench's memories stored as "Note: ...", "事件：..."
# lost 0.011-0.041 MRR@10 to that chaining (by language and query); with the labels known
# they rank as without a label, within 0.008 (bench/RESULTS.md, "notes that start with a
# label"). What it gives up: a speaker called by one of these words ("Update: ...") is
# taken for a label; a session id keeps such turns a conversation.
NOTE_LABELS = HEADER_LABELS | frozenset(
    """
    action actions approach assumption assumptions background blocker blockers bug bugs
    caveat caveats cause change changelog changes checklist command commands conclusion
    config constraint constraints context convention conventions deadline decision
    decisions description design detail details done error errors event events example
    examples fact facts finding findings fix fixed fixes fixme followup follow-up fyi goal
    goals gotcha gotchas guideline guidelines hack hint hints idea ideas impact
    important incident info insight insights issue issues item items learned learning
    learnings lesson lessons link links loop loops memo memories memory milestone
    milestones nb next note notes observation observations outcome outcomes overview pattern
    patterns plan plans policy postmortem preference preferences problem problems progress
    ps reason recap reference reminder reminders requirement requirements result results
    risk risks rule rules self setup solution status step steps summary symptom symptoms
    takeaway takeaways task tasks tip tips tldr todo todos to-do tradeoff trade-off up update
    updates warning warnings workaround workarounds
    entscheidung notiz hinweis aufgabe fazit décision remarque tâche decisión nota tarea 注
    """.split()
)
# Chinese and Japanese labels, matched at a label's end ("部署清单", "决策记录", "待办事项").
NOTE_ENDINGS = HEADER_ENDINGS + tuple(
    """
    决定 决策 偏好 注意 备注 笔记 待办 结论 总结 摘要 约定 规则 规范 经验 教训 提醒 计划 目标
    任务 状态 更新 修复 原因 背景 说明 步骤 事项 要点 清单 风险 警告 提示 事实 约束 需求 结果
    观察 发现 变更 记忆 事件 进展 阻塞 想法 问题 记录 メモ 備考 結論 まとめ 課題 予定 手順 修正
    """.split()
)


# What decides a record's chain (chain_of, answers): namespace, session id, kind, its start.
_CHAIN_FIELDS = "namespace, json_extract(provenance, '$.session_id'), kind, substr(content, 1, 80)"


def chain_of(conn: Connection, seq: int, *, holders: bool = False) -> tuple[str, tuple[str, str]] | None:
    """(where clause, its parameters) that finds the turns of record ``seq``'s conversation,
    or None when the record is not a conversation turn.

    With ``holders``, for finding the turns whose context may hold ``seq``: a record without
    a session id gets its namespace and kind's loose chain even when it is not a turn
    itself. It may have stopped looking like a turn (an edit took its speaker away) or
    started to (an edit gave it one): the turns after it must then drop or take its words,
    and its deletion or redaction must reach their context, else a redacted record's words
    stay searchable in a turn's context column."""
    row = conn.execute(f"select {_CHAIN_FIELDS} from memory_records where seq = ?", (seq,)).fetchone()
    if row is None or row[2] == "summary":
        return None
    return _chain(*row, holders=holders)


@dataclass(frozen=True)
class ChainFields:
    """What decides a record's chain (the values of _CHAIN_FIELDS), as the writer of a new
    record has them: the chain of a record just written is known without reading it back."""

    namespace: str
    session: str | None  # provenance.session_id, when it is a string or absent
    kind: str
    content: str

    @classmethod
    def of(
        cls, namespace: str, provenance: Mapping[str, object], kind: str, content: str
    ) -> ChainFields | None:
        """The fields of a record about to be written; None when its provenance is not an
        object or its session id not a string (json_extract's reading of those is left to
        the database)."""
        if not isinstance(provenance, Mapping):
            return None
        session = provenance.get("session_id")
        if session is not None and not isinstance(session, str):
            return None
        return cls(namespace, session, kind, content[:80])  # substr(content, 1, 80)

    def chain(self) -> tuple[str, tuple[str, str]] | None:
        """What chain_of answers for the record."""
        if self.kind == "summary":
            return None
        return _chain(self.namespace, self.session, self.kind, self.content)


def _chain(
    namespace: str, session: object, kind: str, start: str | None, *, holders: bool = False
) -> tuple[str, tuple[str, str]] | None:
    """The chain of a record with these fields (see chain_of), or None if it is no turn."""
    if session is not None:
        return _CHAIN, (namespace, str(session))
    if holders or is_loose_turn(kind, start):
        return _LOOSE_CHAIN, (namespace, kind)
    return None


def is_loose_turn(kind: str, start: str | None) -> bool:
    """Whether a record without a session id is a conversation turn (see SPEAKER and
    NOTE_LABELS)."""
    if kind == LOOSE_TURN_KIND:
        return True
    found = SPEAKER.match(start or "")
    return found is not None and not is_note_label(found["label"])


def is_note_label(label: str) -> bool:
    """Whether the words before a text's colon name what the note is ("Decision", "Open
    loop", "Deploy checklist", "待办事项") rather than who speaks: by the last word, or for
    Chinese and Japanese by how the label ends."""
    head = label.split()[-1].casefold().strip(".'-")  # SPEAKER's label holds a word at least
    return head in NOTE_LABELS or head.endswith(NOTE_ENDINGS)


def preceding(conn: Connection, seq: int, fields: ChainFields | None = None) -> list[int]:
    """The live turns among the CONTEXT_TURNS records before ``seq`` in its chain, nearest
    first; ``fields``: its chain's fields, if the caller has them (a record just written).
    In a loose chain a record that is no turn itself (a note among the turns of its kind)
    is left out: a turn does not take a note's words. Every record of a session is a turn."""
    chain = chain_of(conn, seq) if fields is None else fields.chain()
    if chain is None:
        return []
    where, params = chain
    loose = where == _LOOSE_CHAIN
    # A session's turns are read from the index alone; a loose chain's starts from the rows.
    rows = conn.execute(
        f"select seq{', substr(content, 1, 80)' if loose else ''} from memory_records where {where}"
        " and seq < ? order by seq desc limit cast(? as integer)",
        (*params, seq, CONTEXT_TURNS),
    ).fetchall()
    return [row[0] for row in rows if not loose or is_loose_turn(params[1], row[1])]


def following(conn: Connection, seq: int) -> list[int]:
    """The live records after ``seq`` in its chain whose context may hold it, nearest first
    (``seq`` itself may be gone, or no longer be a turn). Usually none: a turn is written
    after those before it; a record without a session id is followed by the next records of
    its namespace and kind, turns or not (refreshing one that is not a turn changes nothing),
    and refreshed whether ``seq`` is a turn or not: an edit may have made it one, or
    stopped it being one."""
    chain = chain_of(conn, seq, holders=True)
    if chain is None:
        return []
    where, params = chain
    rows = conn.execute(
        f"select seq from memory_records where {where} and seq > ? order by seq asc limit cast(? as integer)",
        (*params, seq, CONTEXT_TURNS),
    )
    return [row[0] for row in rows]


# What an engine answers for the turns before a record: seq -> that turn's own index tokens,
# for those of ``seqs`` it holds (a turn out of the index, redacted or not copied yet, is none).
TokensOf = Callable[[list[int]], Mapping[int, str]]


def context_of(
    conn: Connection, seq: int, tokens_of: TokensOf, fields: ChainFields | None = None
) -> tuple[str, ...]:
    """The context columns of record ``seq`` on any engine: the own tokens ``tokens_of``
    gives for each of the turns before it, nearest first ('' where there is none, or the
    engine's index holds no tokens for it). ``fields``: see preceding."""
    seqs = preceding(conn, seq, fields)
    tokens = tokens_of(seqs) if seqs else {}
    columns = [tokens.get(s) or "" for s in seqs]
    return tuple(columns + [""] * (CONTEXT_TURNS - len(columns)))


def context_columns(
    conn: Connection, table: str, seq: int, fields: ChainFields | None = None
) -> tuple[str, ...]:
    """The context columns of record ``seq`` in the FTS table ``table`` (see context_of); a
    turn without a row there is a redacted turn, or one a rebuild has not copied yet, which
    cannot happen as it copies in order."""

    def tokens_of(seqs: list[int]) -> dict[int, str]:
        marks = ",".join("?" * len(seqs))
        found = dict(
            conn.execute(f"select rowid, tokens from {table} where rowid in ({marks})", seqs).fetchall()
        )
        # A turn written in the same group may have its row still waiting for the COMMIT.
        return {s: found.get(s) or deferred_value(conn, (table, s)) or "" for s in seqs}

    return context_of(conn, seq, tokens_of, fields)


def followers(conn: Connection, seq: int) -> list[int]:
    """The records whose context may hold record ``seq`` (see following), when it came out of
    order, changed or went; none without a query of the chain for the newest record (every
    new write), after which nothing comes."""
    # Ordered, so that the primary key answers even in a plan made for any ``seq``
    # (PostgreSQL's generic plan of a prepared statement, without the order, scanned the
    # table, all of it for the newest record).
    if (
        conn.execute("select 1 from memory_records where seq > ? order by seq limit 1", (seq,)).fetchone()
        is None
    ):
        return []
    return following(conn, seq)


def refresh_following(conn: Connection, table: str, seq: int) -> None:
    """Record ``seq`` came out of order, changed or went: the turns after it that hold it in
    their context get their context made anew. A turn without a row in ``table`` (a rebuild
    has not copied it yet) is left alone: the copy makes its row whole."""
    later_turns = followers(conn, seq)
    if later_turns:
        run_deferred(conn)  # the rows it updates may still wait for the group's COMMIT
    for later in later_turns:
        columns = context_columns(conn, table, later)
        assignments = ", ".join(f"{name} = ?" for name in COLUMNS)
        changed = " or ".join(f"{name} != ?" for name in COLUMNS)
        conn.execute(
            f"update {table} set {assignments} where rowid = ? and ({changed})", (*columns, later, *columns)
        )


# A question mark in any script that has its own: ASCII, full-width (Chinese, Japanese),
# Arabic, Greek's question mark is ';' (left out: it is also a semicolon).
QUESTION_MARKS = ("?", "\uff1f", "\u061f")


def answers(conn: Connection, seqs: list[int]) -> dict[int, tuple[int, int]]:
    """For each record of ``seqs`` that is a conversation turn asking something (its text
    holds a question mark): the turn after it in its session (or loose chain) and that
    turn's length in characters. The reply to "What did you name her?" is "Churro.", which
    shares no word with a question about the dog's name (see state/search.py ANSWER_SHARE).
    One read of the candidates, then one index probe per asking turn."""
    if not seqs:
        return {}
    marks = " or ".join("instr(content, ?) > 0" for _ in QUESTION_MARKS)
    asking = conn.execute(
        f"select seq, {_CHAIN_FIELDS} from memory_records where seq in ({','.join('?' * len(seqs))})"
        f" and kind != 'summary' and deleted_at is null and ({marks})",
        (*seqs, *QUESTION_MARKS),
    ).fetchall()
    found: dict[int, tuple[int, int]] = {}
    for seq, namespace, session, kind, start in asking:
        chain = _chain(namespace, session, kind, start)
        if chain is None:
            continue
        where, params = chain
        row = conn.execute(
            f"select seq, length(content), substr(content, 1, 80) from memory_records where {where}"
            " and seq > ? order by seq limit 1",
            (*params, seq),
        ).fetchone()
        # In a loose chain the next record of the kind must be a turn too (a note is no reply).
        if row is not None and (session is not None or is_loose_turn(kind, row[2])):
            found[seq] = (row[0], row[1])
    return found
