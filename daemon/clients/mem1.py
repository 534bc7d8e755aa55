"""The agent-memory1.0 skill's client (seed 004), against this daemon or any mem1 server.

Operations: search (four-way recall), get, save (direct or buffered), flush, update, delete,
batch_delete, update_variables, delete_variables, trace, status. Every failure is fail-open:
``success: false`` and an error, never an exception. A circuit breaker whose state is a file
(shared by every process) stops calls after repeated failures for a cooldown.

Run as a script with the seed's JSON parameters::

    python -m daemon.clients.mem1 '{"operation": "search", "user_id": "u1", "query": "...", "top_k": 5}'

The HTTP bodies are the ones the skill's own client sends (every documented default
included: ``scope_id`` "edp_agent", the five ``enable_*`` flags), so any mem1 server answers
them alike. Where the seed is silent this client follows the skill's published script
(summary recall ``num`` 5, page fallback of ``max(top_k, 10)``, ``get`` through
``/get_user_mem_by_page_with_total/``, a trace carrying the caller's ``user_id``). Fields a
server names as ignored (this daemon's ``warnings``) are passed on in the result's
``warnings``, so a mismatch between client and server is never silent.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import httpx

from daemon.http_clients import verify_tls
from state.atomic import write_atomic

MAX_CONTENT_CHARS = 3900
SUMMARY_RECALL = 5  # summaries are long: the skill recalls at most five, whatever top_k is
PAGE_FALLBACK_MIN = 10
PAGE_SCORE = 0.5  # a page is not ranked: its items get a neutral score
FLAGS = (
    "enable_long_term_mem",
    "enable_semantic_memory",
    "enable_episodic_memory",
    "enable_summary_memory",
    "enable_user_profile",
)


@dataclass(frozen=True)
class Config:
    base_url: str
    api_key: str
    timeout: float
    state_dir: Path
    breaker_threshold: int
    breaker_cooldown: float
    buffer_chars_threshold: int
    default_scope_id: str

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        if env is None:
            env = os.environ
        return cls(
            base_url=env.get("MEM1_BASE_URL", "http://127.0.0.1:8517").rstrip("/"),
            api_key=env.get("MEM1_API_KEY", ""),
            timeout=float(env.get("MEM1_TIMEOUT", "30")),
            state_dir=Path(env.get("MEM1_STATE_DIR", "/tmp/mem1_skill_state")),
            breaker_threshold=int(env.get("MEM1_CIRCUIT_BREAKER_THRESHOLD", "5")),
            breaker_cooldown=float(env.get("MEM1_CIRCUIT_BREAKER_COOLDOWN", "120")),
            buffer_chars_threshold=int(env.get("MEM1_BUFFER_CHARS_THRESHOLD", "20000")),
            default_scope_id=env.get("MEM1_DEFAULT_SCOPE_ID", "edp_agent"),
        )


class CircuitBreaker:
    """Failure count and open-until time in one JSON file, updated under a file lock."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.path = config.state_dir / "circuit_breaker.json"

    @contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                state = json.loads(self.path.read_text())
            except (FileNotFoundError, ValueError):
                state = {"failure_count": 0, "breaker_open_until": 0.0}
            yield state
            write_atomic(self.path, json.dumps(state))

    def is_open(self) -> bool:
        with self._locked() as state:
            if state["breaker_open_until"] and time.time() >= state["breaker_open_until"]:
                state["breaker_open_until"] = 0.0  # cooldown over: try again
                state["failure_count"] = 0
            return time.time() < state["breaker_open_until"]

    def record(self, ok: bool) -> None:
        with self._locked() as state:
            if ok:
                state["failure_count"] = 0
                return
            state["failure_count"] += 1
            if state["failure_count"] >= self.config.breaker_threshold:
                state["breaker_open_until"] = time.time() + self.config.breaker_cooldown

    def status(self) -> dict[str, Any]:
        with self._locked() as state:
            return {
                "open": time.time() < state["breaker_open_until"],
                "failure_count": state["failure_count"],
                "threshold": self.config.breaker_threshold,
                "cooldown_seconds": _number(self.config.breaker_cooldown),
                "breaker_open_until": state["breaker_open_until"],
            }


def _number(value: float) -> int | float:
    """30, not 30.0: the seed's status shows whole seconds as integers."""
    return int(value) if float(value).is_integer() else value


class Mem1Client:
    def __init__(self, config: Config | None = None) -> None:
        self.config = config or Config.from_env()
        self.breaker = CircuitBreaker(self.config)
        self._warnings: list[str] = []  # what the server ignored during this operation
        self._http: httpx.Client | None = None  # made at the first call, then reused

    # -- transport ----------------------------------------------------------------------------

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}
        try:
            if self._http is None:  # one search is up to four calls: one connection, one TLS context
                self._http = httpx.Client(
                    timeout=self.config.timeout, verify=verify_tls(self.config.base_url)
                )
            response = self._http.post(f"{self.config.base_url}{path}", json=body, headers=headers)
        except httpx.HTTPError as exc:
            self.breaker.record(False)
            raise RuntimeError(f"连接失败: {exc}") from exc
        if response.status_code >= 500:
            self.breaker.record(False)
        else:
            self.breaker.record(True)
        if response.status_code >= 400:
            try:
                detail = response.json().get("detail")
            except ValueError:
                detail = response.text
            raise RuntimeError(f"HTTP {response.status_code}: {detail}")
        reply = response.json()
        if isinstance(reply, dict) and isinstance(reply.get("warnings"), list):
            self._warnings.extend(f"{path} {w}" for w in reply["warnings"])
        return reply

    def run(self, params: dict[str, Any]) -> dict[str, Any]:
        """One operation, fail-open: always a dict with ``success``."""
        operation = params.get("operation")
        handler = getattr(self, f"op_{operation}", None)
        base = {"operation": operation}
        if "user_id" in params:
            base["user_id"] = params["user_id"]
        if handler is None:
            return {**base, "success": False, "error": f"unknown operation {operation!r}"}
        if operation not in ("status", "trace") and not params.get("user_id"):
            return {**base, "success": False, "error": "user_id is required"}
        if operation != "status" and self.breaker.is_open():
            paused = {
                **base,
                "success": False,
                "error": "circuit breaker open: memory calls paused",
                "breaker_open": True,
            }
            return {**paused, "results": []} if operation == "search" else paused
        self._warnings = []
        try:
            result = handler(params)
        except Exception as exc:  # fail-open: the agent's flow must never break on memory
            result = {"success": False, "error": str(exc)}
            if operation == "search":
                result["results"] = []
        if self._warnings:
            result = {**result, "warnings": list(self._warnings)}
        return {**base, **result, "breaker_open": self.breaker.is_open()}

    def _who(self, params: dict[str, Any]) -> dict[str, str]:
        return {
            "user_id": params["user_id"],
            "scope_id": params.get("scope_id") or self.config.default_scope_id,
        }

    # -- operations ----------------------------------------------------------------------------

    def op_search(self, params: dict[str, Any]) -> dict[str, Any]:
        """Four-way recall: variables, vector search, summary search, and paging only when
        both searches found nothing; merged without duplicates, at most ``top_k``."""
        who = self._who(params)
        query, top_k = params.get("query") or "业务关键词", int(params.get("top_k", 5))
        threshold = float(params.get("threshold", 0.0))
        variables = self._post("/get_variables/", who).get("variables", {})
        vector = self._post("/search_memory/", {"query": query, "num": top_k, **who, "threshold": threshold})[
            "results"
        ]
        summary = self._post(
            "/search_user_history_summary/",
            {"query": query, "num": SUMMARY_RECALL, **who, "threshold": threshold},
        )["results"]
        paged = (
            []
            if vector or summary
            else [
                {**item, "score": PAGE_SCORE}
                for item in self._post(
                    "/get_user_mem_by_page/",
                    {**who, "page_idx": 1, "page_size": max(top_k, PAGE_FALLBACK_MIN)},
                )["results"]
            ]
        )
        seen, results = set(), []
        for source, items in (
            ("vector_search", vector),
            ("summary_search", summary),
            ("page_retrieval", paged),
        ):
            for item in items:
                key = item.get("mem_id") or item.get("content")
                if key in seen:
                    continue
                seen.add(key)
                results.append(
                    {
                        "content": item["content"],
                        "type": item.get("type"),
                        "score": item.get("score", 1.0),
                        "source": source,
                        "mem_id": item.get("mem_id"),
                    }
                )
        results = results[:top_k]  # the seed's top_k is the limit of the merged results
        return {
            "success": True,
            "scope_id": who["scope_id"],
            "total_results": len(results),
            "variables": variables,
            "results": results,
            "search_summary": f"共召回 {len(results)} 条记忆：画像变量 {len(variables)} 项 + 向量搜索"
            f" {len(vector)} 条 + 摘要搜索 {len(summary)} 条 + 页面检索 {len(paged)} 条",
        }

    def op_get(self, params: dict[str, Any]) -> dict[str, Any]:
        """One page of ``top_k`` memories with their timestamps and ``source_id`` (what a
        trace takes), and the real total."""
        top_k = int(params.get("top_k", 20))
        page = self._post(
            "/get_user_mem_by_page_with_total/", {**self._who(params), "page_idx": 1, "page_size": top_k}
        )
        return {
            "success": True,
            "scope_id": self._who(params)["scope_id"],
            "results": page["results"],
            "total_results": len(page["results"]),
            "total_global": page.get("total", len(page["results"])),
        }

    @staticmethod
    def _messages(params: dict[str, Any]) -> list[dict[str, str]]:
        messages = params.get("messages") or [
            {"role": params.get("role") or "assistant", "content": params.get("content") or ""}
        ]
        return [
            {"role": str(m.get("role") or "user"), "content": str(m["content"])[:MAX_CONTENT_CHARS]}
            for m in messages
            if isinstance(m, dict) and str(m.get("content") or "").strip()
        ]

    def _buffer_path(self, user_id: str) -> Path:
        # Percent-encoded: a user id such as "../x" stays inside the state directory
        # (ordinary ids keep the seed's name buffer_{user_id}.jsonl unchanged).
        return self.config.state_dir / f"buffer_{quote(user_id, safe='')}.jsonl"

    def _flags(self, params: dict[str, Any]) -> dict[str, bool]:
        """The five enable_* flags, each the caller's or the seed's default (true)."""
        return {flag: bool(params.get(flag, True)) for flag in FLAGS}

    def op_save(self, params: dict[str, Any]) -> dict[str, Any]:
        messages = self._messages(params)
        if not messages:
            return {
                "success": False,
                "mode": "filtered",
                "error": "没有可写入的消息内容（全部为空或仅包含空白字符）",
            }
        if params.get("buffer"):
            path = self._buffer_path(params["user_id"])
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() and self._buffer_chars(path) >= self.config.buffer_chars_threshold:
                self.op_flush(params)  # over the threshold already: flush first, then append
            with open(path, "a", encoding="utf-8") as handle:
                for message in messages:
                    handle.write(
                        json.dumps(
                            {**message, **self._who(params), "session_id": params.get("session_id") or ""},
                            ensure_ascii=False,
                        )
                        + "\n"
                    )
            total = self._buffer_chars(path)
            if total >= self.config.buffer_chars_threshold:
                flushed = self.op_flush(params)
                return {
                    "success": True,
                    "mode": "buffered_flushed",
                    "flushed_count": flushed["flushed_count"],
                }
            return {
                "success": True,
                "mode": "buffered",
                "buffered_messages": len(messages),
                "buffer_total_chars": total,
                "buffer_threshold": self.config.buffer_chars_threshold,
            }
        body = {**self._who(params), "messages": messages, **self._flags(params)}
        if params.get("session_id"):  # the seed's default "" leaves the server's own default
            body["session_id"] = params["session_id"]
        self._post("/add_messages/", body)
        return {"success": True, "mode": "direct", "message_count": len(messages)}

    @staticmethod
    def _buffer_chars(path: Path) -> int:
        return sum(
            len(json.loads(line)["content"]) for line in path.read_text(encoding="utf-8").splitlines() if line
        )

    def op_flush(self, params: dict[str, Any]) -> dict[str, Any]:
        """Write the buffer, one add_messages per scope and session. A message keeps the
        session its save named; the others go to the flush's ``session_id`` (seed default
        "", which leaves the server's default)."""
        path = self._buffer_path(params["user_id"])
        if not path.exists():
            return {"success": True, "flushed_count": 0}
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
        groups: dict[tuple[str, str, str], list[dict[str, str]]] = {}
        for line in lines:
            key = (
                line["user_id"],
                line["scope_id"],
                line.get("session_id") or params.get("session_id") or "",
            )
            groups.setdefault(key, []).append({"role": line["role"], "content": line["content"]})
        for (user, scope, session), messages in groups.items():
            body = {"user_id": user, "scope_id": scope, "messages": messages, **self._flags(params)}
            if session:
                body["session_id"] = session
            self._post("/add_messages/", body)
        path.unlink()  # only after every group was written: a failed flush keeps the buffer
        return {"success": True, "flushed_count": len(lines)}

    def op_update(self, params: dict[str, Any]) -> dict[str, Any]:
        self._post(
            "/update_mem_by_id/",
            {
                "mem_id": params["mem_id"],
                "memory": str(params["memory"])[:MAX_CONTENT_CHARS],
                **self._who(params),
            },
        )
        return {
            "success": True,
            "scope_id": self._who(params)["scope_id"],
            "mem_id": params["mem_id"],
            "message": "Memory updated successfully",
        }

    def op_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        self._post("/delete_mem_by_id/", {"mem_id": params["mem_id"], **self._who(params)})
        return {
            "success": True,
            "scope_id": self._who(params)["scope_id"],
            "mem_id": params["mem_id"],
            "message": "Memory deleted successfully",
        }

    def op_batch_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        reply = self._post("/batch_delete_mem/", {"mem_ids": list(params["mem_ids"]), **self._who(params)})
        return {
            "success": True,
            "scope_id": self._who(params)["scope_id"],
            "deleted": reply["deleted"],
            "failed": reply["failed"],
            "errors": reply.get("errors", []),
        }

    def op_update_variables(self, params: dict[str, Any]) -> dict[str, Any]:
        variables = {str(k): str(v) for k, v in params["variables"].items()}
        self._post("/update_variables/", {"variables": variables, **self._who(params)})
        return {
            "success": True,
            "scope_id": self._who(params)["scope_id"],
            "updated_count": len(variables),
            "message": "Variables updated successfully",
        }

    def op_delete_variables(self, params: dict[str, Any]) -> dict[str, Any]:
        reply = self._post("/delete_variables/", {"names": list(params["names"]), **self._who(params)})
        return {
            "success": True,
            "scope_id": self._who(params)["scope_id"],
            "deleted": reply.get("deleted_count", len(params["names"])),
        }

    def op_trace(self, params: dict[str, Any]) -> dict[str, Any]:
        """The seed's call names only the message id; like the skill, the caller's user_id
        goes along when given (and a scope_id only when the caller names one: the default
        scope is no filter here), so a trace never crosses to another user's message."""
        body = {"message_id": params["message_id"]}
        for name in ("user_id", "scope_id"):
            if params.get(name):
                body[name] = params[name]
        reply = self._post("/get_message_by_id/", body)
        message = (
            {k: reply[k] for k in ("role", "content", "timestamp")}
            if reply.get("found")
            else {"found": False, "message_id": params["message_id"]}
        )
        return {"success": True, "message_id": params["message_id"], "message": message}

    def op_status(self, params: dict[str, Any]) -> dict[str, Any]:
        buffers = {}
        for path in sorted(self.config.state_dir.glob("buffer_*.jsonl")):
            lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line]
            buffers[unquote(path.stem.removeprefix("buffer_"))] = {
                "message_count": len(lines),
                "total_chars": self._buffer_chars(path),
            }
        return {
            "success": True,
            "circuit_breaker": self.breaker.status(),
            "config": {
                "base_url": self.config.base_url,
                "timeout": _number(self.config.timeout),
                "buffer_chars_threshold": self.config.buffer_chars_threshold,
                "state_dir": str(self.config.state_dir),
            },
            "buffers": buffers,
        }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        params = json.loads(args[0]) if args else json.load(sys.stdin)
    except (ValueError, IndexError) as exc:
        print(json.dumps({"success": False, "error": f"parameters must be a JSON object: {exc}"}))
        return 0
    print(json.dumps(Mem1Client().run(params if isinstance(params, dict) else {}), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
