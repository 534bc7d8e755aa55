"""Variants of the conversation context (state/turn_context.py) for bench/retrieval_turns.py:

    python bench/retrieval_turns.py DATASET --ideas bench/ideas/turn_context.py

Each variant builds its own store with N turns before each turn as context columns at one
weight, and ranks by words alone (as the default does for English)."""

from retrieval_turns import Config

import state.tokenize as tokenize
import state.turn_context as turn_context


def variant(label: str, turns: int, weight: float) -> Config:
    columns = tuple(f"before{n}" for n in range(1, turns + 1))
    rank = "bm25(1.0" + f", {weight}" * turns + ")"
    return Config(
        label,
        1.0,
        0.0,
        patches=(
            (turn_context, "CONTEXT_TURNS", turns),
            (turn_context, "COLUMNS", columns),
            (turn_context, "RANK", rank),
            (tokenize, "FTS_COLUMNS", ("tokens", *columns)),
        ),
    )


def ideas() -> list[Config]:
    return [
        variant("no context", 0, 0.0),
        variant("1 turn before, 0.3", 1, 0.3),
        variant("2 turns before, 0.2", 2, 0.2),
        variant("2 turns before, 0.5", 2, 0.5),
        variant("3 turns before, 0.3", 3, 0.3),
        variant("3 turns before, 0.2", 3, 0.2),
        variant("4 turns before, 0.2", 4, 0.2),
    ]
