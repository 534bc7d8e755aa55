"""Turns written and searched through agent-memory1.0, as a harness of that dialect would,
for bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --split tune --ideas bench/ideas/mem1_harness.py

Each turn is one ``add_messages`` call (one user per conversation, the turn's session id,
the first speaker as ``user`` and the other as ``assistant``, every ``enable_*`` flag on, so
each session also gets its summary record), and each question one ``search_memory`` call
(``num`` as the page asks, threshold 0). Against the store's own search of the same turns
(``default (as shipped)``, written by the bench's ingest) and the Porter baseline.
"""

from __future__ import annotations

from collections.abc import Sequence

import retrieval_turns as rt
from retrieval_turns import Bench, Config, porter_rank
from turns_dataset import Question, Turn

from daemon.runtime.mem1 import Mem1Service
from state.store import Store

SCOPE = "bench"
# Per store (by id): its agent-memory1.0 service and each fragment's turn, by memory id.
_SERVICES: dict[int, tuple[Mem1Service, dict[str, tuple[str, str]]]] = {}


def ingest_through_mem1(summaries: bool):
    def ingest(store: Store, turns: Sequence[Turn]) -> dict[int, tuple[str, str]]:
        owner, _ = store.identities.create_owner()
        mem1 = Mem1Service(store)
        keys: dict[int, tuple[str, str]] = {}
        turn_of: dict[str, tuple[str, str]] = {}
        first_speaker: dict[str, str] = {}
        for turn in turns:
            first = first_speaker.setdefault(turn.conversation, turn.speaker)
            message = {
                "role": "user" if turn.speaker == first else "assistant",
                "content": rt.memory_text(turn),
            }
            answer = mem1.add_messages(
                owner,
                {
                    "user_id": turn.conversation,
                    "scope_id": SCOPE,
                    "session_id": turn.session,
                    "messages": [message],
                    "mem_variables": [],
                    "enable_long_term_mem": True,
                    "enable_user_profile": True,
                    "enable_semantic_memory": True,
                    "enable_episodic_memory": True,
                    "enable_summary_memory": summaries,
                },
            )
            seq, memory_id = store.conn.execute(
                "select seq, id from memory_records where json_extract(provenance, '$.message_id') = ?"
                " and kind != 'summary'",
                (answer["message_ids"][0],),
            ).fetchone()
            keys[seq] = turn_of[memory_id] = (turn.conversation, turn.id)
        _SERVICES[id(store)] = (mem1, turn_of)
        return keys

    return ingest


def search_memory(bench: Bench, question: Question, limit: int) -> list[tuple[str, str]]:
    mem1, turn_of = _SERVICES[id(bench.store)]
    found = mem1.search_memory(
        {
            "user_id": question.conversation,
            "scope_id": SCOPE,
            "query": question.question,
            "num": limit,
            "threshold": 0.0,
        }
    )
    return [turn_of[r["mem_id"]] for r in found["results"]]


def ideas() -> list[Config]:
    with_summaries = ((rt, "ingest", ingest_through_mem1(True)),)
    without = ((rt, "ingest", ingest_through_mem1(False)),)
    return [
        Config("baseline: through agent-memory1.0", rank=porter_rank, patches=with_summaries),
        Config.shipped("search_memory", rank=search_memory, patches=with_summaries),
        Config.shipped("search_memory, no session summaries", rank=search_memory, patches=without),
    ]
