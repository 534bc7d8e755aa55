"""The method registry: short, exact procedure cards for what agents forget, ranked for a
user message, a task and a runtime (``POST /api/agent/methods/query``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from state.tokenize import tokens


@dataclass(frozen=True)
class Method:
    method_id: str
    title: str
    when: str
    steps: tuple[str, ...]
    endpoints: tuple[str, ...]
    runtimes: tuple[str, ...] = ()          # empty: every runtime
    keywords: tuple[str, ...] = field(default_factory=tuple)

    def text(self) -> str:
        return " ".join((self.title, self.when, " ".join(self.steps), " ".join(self.keywords)))

    def public(self) -> dict[str, Any]:
        return {"schema": "amp.agent-method.v1", "method_id": self.method_id, "title": self.title,
                "when": self.when, "steps": list(self.steps), "endpoints": list(self.endpoints),
                "runtimes": list(self.runtimes) or ["any"]}


METHODS: tuple[Method, ...] = (
    Method("start_session", "Start a session with memory",
           "at the beginning of every session or after a context reset",
           ("POST /api/agent/bootstrap/context with project_binding_id (or project_key)",
            "inject summary_markdown as private context", "keep receipt_id for memory deltas"),
           ("POST /api/agent/bootstrap/context",), keywords=("startup", "begin", "context", "启动", "开始")),
    Method("write_back_decision", "Write back a decision",
           "you made a product, architecture or implementation choice worth remembering",
           ("POST /api/agent/memory-delta with delta_type decision, summary, why_it_matters",
            "send header X-AMP-Context-Receipt: <receipt_id>", "importance 4 for decisions that"
            " should shape future sessions"),
           ("POST /api/agent/memory-delta",), keywords=("decided", "choose", "remember", "决定", "记住")),
    Method("fetch_detail", "Fetch a detail on demand",
           "the summary mentions something you need in full",
           ("request the retrieval handle's detail_endpoint exactly as returned",
            "or search: GET /api/workspaces/{workspace_id}/memory/query?q=..."),
           ("GET /api/agent/memories/{memory_id}", "GET /api/workspaces/{workspace_id}/memory/query"),
           keywords=("detail", "search", "find", "查找", "搜索")),
    Method("resume_intent", "Resume a write held back by an update",
           "a write answered 409 amp.sync-interrupt.v1",
           ("GET /api/agent/updates/check", "re-pull the skills requires_repull names",
            "POST /api/agent/updates/ack", "POST /api/agent/sync-intents/{id}/resume"),
           ("GET /api/agent/updates/check", "POST /api/agent/updates/ack",
            "POST /api/agent/sync-intents/{sync_intent_id}/resume"),
           keywords=("409", "blocked", "interrupt", "update", "更新", "同步")),
    Method("install_suite", "Install a memory suite",
           "the user asks to use a published memory suite",
           ("GET /api/catalog?q=... to find it", "GET /api/catalog/{slug}/suite, check license and"
            " provenance", "POST /api/agent/open-memories/install with the slug",
            "inject runtime_context_pack.summary_markdown from the activation"),
           ("GET /api/catalog", "POST /api/agent/open-memories/install"),
           keywords=("install", "suite", "package", "安装", "套件")),
    Method("record_structured_memory", "Store a structured memory",
           "a fact, failure, procedure or preference deserves a proper form",
           ("POST /api/memory/router/select with task and what_i_remember",
            "fill form_schema's required fields", "POST /api/memory/forms/{run_id}/submit"),
           ("POST /api/memory/router/select", "POST /api/memory/forms/{run_id}/submit"),
           keywords=("store", "save", "procedure", "failure", "保存", "记录")),
    Method("hand_off", "Hand work to the next agent",
           "you stop and another session or agent continues",
           ("POST /api/agent/memory-briefs/{brief_id}/events with event_type handoff_ready",
            "the next memory brief shows it under Hand-off"),
           ("POST /api/agent/memory-briefs/{brief_id}/events",),
           keywords=("handoff", "continue", "next agent", "交接", "继续")),
    Method("claim_shared_resource", "Claim a shared resource",
           "several agents may edit the same file, branch or service",
           ("POST /api/agent/claims with resource and ttl_seconds",
            "a 409 names the holder and expiry: wait or pick other work",
            "POST /api/agent/claims/{claim_id}/release when done"),
           ("POST /api/agent/claims", "POST /api/agent/claims/{claim_id}/release"),
           keywords=("lock", "claim", "conflict", "shared", "锁", "冲突")),
    Method("connect_repository", "Set up startup items for a repository",
           "the user wants every session in this repository to start with memory",
           ("POST /api/agent/project/probe with repo_root", "POST /api/agent/startup-items/install-plan",
            "show the plan; the person approves it (memorycloud setup approve)",
            "POST /api/agent/startup-items/confirm"),
           ("POST /api/agent/startup-items/install-plan", "POST /api/agent/startup-items/confirm"),
           keywords=("hook", "startup", "setup", "repository", "启动项", "仓库")),
    Method("claude_code_compaction", "Keep memory across compaction (Claude Code)",
           "a long Claude Code session is about to compact",
           ("the PreCompact hook saves a checkpoint delta", "the SessionStart hook with matcher"
            " compact re-injects the context pack"), ("POST /api/agent/memory-delta",),
           runtimes=("claude_code",), keywords=("compact", "compaction", "压缩")),
)


def _idf() -> dict[str, float]:
    docs = [set(tokens(m.text())) for m in METHODS]
    vocabulary = set().union(*docs)
    return {t: math.log(1 + len(docs) / (1 + sum(t in d for d in docs))) for t in vocabulary}


IDF = _idf()
DOC_TOKENS = {m.method_id: set(tokens(m.text())) for m in METHODS}


def catalog() -> dict[str, Any]:
    return {"schema": "amp.agent-methods.v1", "methods": [m.public() for m in METHODS]}


def query(message: str, task: str, runtime: str | None, limit: int) -> dict[str, Any]:
    """Cards ranked by the IDF-weighted words they share with the message and task; a card
    for another runtime only is left out."""
    wanted = tokens(f"{message} {task}", for_query=True)
    scored = []
    for method in METHODS:
        if method.runtimes and runtime and runtime not in method.runtimes:
            continue
        score = sum(IDF.get(t, 0.0) for t in set(wanted) if t in DOC_TOKENS[method.method_id])
        if method.runtimes and runtime in method.runtimes:
            score *= 1.5
        if score > 0:
            scored.append((score, method))
    scored.sort(key=lambda item: -item[0])
    return {"schema": "amp.agent-method-query.v1", "runtime": runtime,
            "methods": [{**m.public(), "score": round(s, 3)} for s, m in scored[:limit]]}
