"""The method registry (``GET /api/agent/methods``) and method cards ranked for a user
message, a task and a runtime (``POST /api/agent/methods/query``), under the MemoryCloud
reference's names (amp.agent-method-registry.v1, results) and ours (methods)."""

from __future__ import annotations

import math
from typing import Any

from daemon.runtime.method_cards import METHODS, Method
from state.identities import normalize_runtime
from state.tokenize import tokens

RUNTIME_BOOST = 1.5  # a card for the caller's own runtime ranks above a general one
SCORE_SCALE = 100  # scores are integers, as the reference's are


def _idf() -> dict[str, float]:
    docs = [set(tokens(m.text())) for m in METHODS]
    vocabulary = set().union(*docs)
    return {t: math.log(1 + len(docs) / (1 + sum(t in d for d in docs))) for t in vocabulary}


IDF = _idf()
# A word no card has weighs like the rarest word: it lowers confidence, never raises a score.
UNKNOWN_IDF = max(IDF.values())
DOC_TOKENS = {m.method_id: set(tokens(m.text())) for m in METHODS}


def _help(base_url: str) -> dict[str, str]:
    return {
        "agent_help": f"POST {base_url}/api/agent/methods/query with user_message and task: the"
        " answer lists the exact steps; follow them instead of guessing endpoints.",
        "agent_help_markdown": (
            "## Forgot how to do something?\n\n"
            f'- `POST {base_url}/api/agent/methods/query` with `{{"user_message": ..., "task": ...}}`\n'
            f"- all cards: `GET {base_url}/api/agent/methods`\n"
            f"- tools: `GET {base_url}/api/agent/skills`\n"
        ),
        "human_help": "The person can list startup plans, conflicts and updates with"
        " `memorycloud setup list` and in the TUI (`memorycloud tui`).",
    }


def catalog(base_url: str) -> dict[str, Any]:
    """Every card (amp.agent-method-registry.v1; ``methods`` is our earlier key)."""
    cards = [m.public(base_url) for m in METHODS]
    return {
        "schema": "amp.agent-method-registry.v1",
        "purpose": "exact procedures for what agents forget, so they do not guess endpoints",
        "base_url": base_url,
        "query": f"{base_url}/api/agent/methods/query",
        **_help(base_url),
        "recommended_skill": "method_query_helper",
        "items": cards,
        "methods": cards,
    }


def runtime_name(runtime: str | dict[str, Any] | None) -> str | None:
    """The runtime type from a string or the reference's runtime object ({"type": ...})."""
    if isinstance(runtime, dict):
        runtime = next(
            (
                runtime[k]
                for k in ("type", "runtime", "name")
                if isinstance(runtime.get(k), str) and runtime[k].strip()
            ),
            None,
        )
    if not runtime or not runtime.strip():
        return None
    return normalize_runtime(runtime)


def normalized_query(body: dict[str, Any]) -> dict[str, Any]:
    """The request as the answer echoes it: every field, the runtime as an object."""
    runtime = body.get("runtime")
    runtime_object = dict(runtime) if isinstance(runtime, dict) else {}
    if name := runtime_name(runtime):
        runtime_object["type"] = name
    return {
        "user_message": body.get("user_message") or "",
        "task": body.get("task") or "",
        "agent_handle": body.get("agent_handle") or "",
        "current_route": body.get("current_route") or "",
        "runtime": runtime_object,
        "installed_skills": list(body.get("installed_skills") or []),
        "max_results": body["max_results"],
    }


def _score(method: Method, wanted: set[str], runtime: str | None) -> float:
    score = sum(IDF.get(t, 0.0) for t in wanted if t in DOC_TOKENS[method.method_id])
    return score * RUNTIME_BOOST if method.runtimes and runtime in method.runtimes else score


def query(body: dict[str, Any], base_url: str) -> dict[str, Any]:
    """Cards ranked by the IDF-weighted words they share with the message and task; a card
    for another runtime only is left out. Nothing to rank for is an empty answer, not an
    error: the reference answers 200 with result_count 0 and points to the registry."""
    asked = normalized_query(body)
    runtime = runtime_name(body.get("runtime"))
    wanted = set(tokens(f"{asked['user_message']} {asked['task']}", for_query=True))
    total = sum(IDF.get(t, UNKNOWN_IDF) for t in wanted)
    scored = []
    for method in METHODS:
        if method.runtimes and runtime and runtime not in method.runtimes:
            continue
        score = _score(method, wanted, runtime)
        if score > 0:
            scored.append((score, method))
    scored.sort(key=lambda item: -item[0])
    installed = set(asked["installed_skills"])
    results = []
    for score, method in scored[: asked["max_results"]]:
        card = {
            **method.public(base_url),
            "score": round(score * SCORE_SCALE),
            "confidence": round(min(1.0, score / total), 3) if total else 0.0,
        }
        if installed:
            card["missing_skills"] = [s for s in method.skills if s not in installed]
        results.append(card)
    if results:
        first = results[0]
        action = f"{first['title']}: {first['steps'][0]}"
    else:
        action = f"no card matches: read GET {base_url}/api/agent/methods, or ask the person"
    return {
        "schema": "amp.agent-method-query.v1",
        "query": asked,
        "result_count": len(results),
        "results": results,
        "recommended_first_action": action,
        "fallback": _help(base_url),
        "do_not_guess": True,
        # our earlier keys
        "runtime": runtime,
        "methods": results,
    }
