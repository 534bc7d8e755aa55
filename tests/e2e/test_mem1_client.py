"""The agent-memory1.0 skill client as a script, against the real daemon and against nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.e2e.conftest import free_port


def run(params: dict, env: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "daemon.clients.mem1", json.dumps(params, ensure_ascii=False)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    # The daemon names every field it ignored and the client passes that on: none may be.
    assert "warnings" not in result, result["warnings"]
    return result


USER = "USER_001"
# The seed's call_mcp script_params, field for field ({user_id}, {mem_id}, {message_id} are
# the seed's placeholders); "get" is listed in the seed's operations with only top_k.
SEED = {
    "search": {
        "operation": "search",
        "user_id": "{user_id}",
        "query": "用户 {user_id} 的历史处理记录",
        "top_k": 5,
    },
    "get": {"operation": "get", "user_id": "{user_id}"},
    "save": {"operation": "save", "user_id": "{user_id}", "content": "处理结果...", "role": "assistant"},
    "buffer": {"operation": "save", "user_id": "{user_id}", "content": "中间结果...", "buffer": True},
    "flush": {"operation": "flush", "user_id": "{user_id}"},
    "status": {"operation": "status"},
    "update": {
        "operation": "update",
        "user_id": "{user_id}",
        "mem_id": "{mem_id}",
        "memory": "修正后的内容...",
    },
    "delete": {"operation": "delete", "user_id": "{user_id}", "mem_id": "{mem_id}"},
    "batch_delete": {"operation": "batch_delete", "user_id": "{user_id}", "mem_ids": ["mem_abc", "mem_def"]},
    "update_variables": {
        "operation": "update_variables",
        "user_id": "{user_id}",
        "variables": {"status": "normal", "priority": "high"},
    },
    "delete_variables": {"operation": "delete_variables", "user_id": "{user_id}", "names": ["old_var_name"]},
    "trace": {"operation": "trace", "message_id": "{message_id}"},
}


def seed(name: str, **values) -> dict:
    """The seed's call ``name`` with its placeholders filled (user_id defaults to USER)."""
    values = {"user_id": USER, **values}

    def fill(value):
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, str):
            for key, text in values.items():
                value = value.replace("{" + key + "}", text)
        return value

    return fill(SEED[name])


@pytest.fixture
def env(daemon, agent_key, tmp_path) -> dict:
    return {
        **os.environ,
        "MEM1_BASE_URL": daemon.url,
        "MEM1_API_KEY": agent_key,
        "MEM1_STATE_DIR": str(tmp_path / "state"),
        "MEM1_BUFFER_CHARS_THRESHOLD": "60",
    }


def test_status_as_the_seed_shows_it(env, tmp_path):
    status = run(seed("status"), env)
    assert status["success"] is True and status["operation"] == "status" and status["buffers"] == {}
    assert status["circuit_breaker"] == {
        "open": False,
        "failure_count": 0,
        "threshold": 5,
        "cooldown_seconds": 120,
        "breaker_open_until": 0.0,
    }
    assert status["config"] == {
        "base_url": env["MEM1_BASE_URL"],
        "timeout": 30,
        "buffer_chars_threshold": 60,
        "state_dir": str(tmp_path / "state"),
    }
    # Whole seconds as the seed prints them (30, 120), not 30.0.
    assert (
        type(status["config"]["timeout"]) is int
        and type(status["circuit_breaker"]["cooldown_seconds"]) is int
    )


def test_search_save_and_variables(env):
    base = {"user_id": USER, "breaker_open": False}
    nothing = run(seed("search"), env)
    assert (nothing["success"], nothing["results"], nothing["scope_id"]) == (True, [], "edp_agent")
    assert (
        nothing["search_summary"]
        == "共召回 0 条记忆：画像变量 0 项 + 向量搜索 0 条 + 摘要搜索 0 条 + 页面检索 0 条"
    )
    assert run(seed("update_variables"), env) == {
        **base,
        "success": True,
        "operation": "update_variables",
        "scope_id": "edp_agent",
        "updated_count": 2,
        "message": "Variables updated successfully",
    }
    assert run(seed("save"), env) == {
        **base,
        "success": True,
        "operation": "save",
        "mode": "direct",
        "message_count": 1,
    }
    empty = run({**seed("save"), "content": "   "}, env)
    assert empty == {
        **base,
        "success": False,
        "operation": "save",
        "mode": "filtered",
        "error": "没有可写入的消息内容（全部为空或仅包含空白字符）",
    }
    for turn in range(6):
        run({**seed("save"), "content": f"2024-01-{10 + turn}，用户 {USER} 处理结论：正常 {turn}"}, env)

    found = run(seed("search"), env)
    assert found["success"] is True and found["operation"] == "search" and found["scope_id"] == "edp_agent"
    assert found["variables"] == {"status": "normal", "priority": "high"}
    # top_k is the limit of the merged recall (vector search alone finds five, the summary more).
    assert found["total_results"] == len(found["results"]) == 5
    assert {r["source"] for r in found["results"]} == {"vector_search"}
    assert all({"content", "type", "score", "source"} <= set(r) for r in found["results"])
    assert found["search_summary"].startswith(
        "共召回 5 条记忆：画像变量 2 项 + 向量搜索 5 条 + 摘要搜索 1 条"
    )
    with_summary = run({**seed("search"), "top_k": 10}, env)
    assert {r["source"] for r in with_summary["results"]} == {"vector_search", "summary_search"}
    # Nothing matches: the fourth recall, the page, is the fallback.
    fallback = run({**seed("search"), "query": "zqxj wvkp"}, env)
    assert len(fallback["results"]) == 5 and {r["source"] for r in fallback["results"]} == {"page_retrieval"}
    assert {r["score"] for r in fallback["results"]} == {0.5}
    assert fallback["search_summary"].endswith("向量搜索 0 条 + 摘要搜索 0 条 + 页面检索 8 条")

    run({**seed("update_variables"), "variables": {"old_var_name": "x"}}, env)
    assert run(seed("delete_variables"), env) == {
        **base,
        "success": True,
        "operation": "delete_variables",
        "scope_id": "edp_agent",
        "deleted": 1,
    }
    assert run(seed("delete_variables"), env)["deleted"] == 0
    other = run({**seed("get"), "user_id": "USER_002"}, env)
    assert other["results"] == []  # isolation by user_id


def test_buffered_save_and_flush(env):
    base = {"user_id": USER, "breaker_open": False}
    buffered = run(seed("buffer"), env)
    assert buffered == {
        **base,
        "success": True,
        "operation": "save",
        "mode": "buffered",
        "buffered_messages": 1,
        "buffer_total_chars": len("中间结果..."),
        "buffer_threshold": 60,
    }
    assert run(seed("status"), env)["buffers"] == {
        USER: {"message_count": 1, "total_chars": len("中间结果...")}
    }
    assert run(seed("flush"), env) == {**base, "success": True, "operation": "flush", "flushed_count": 1}
    assert run(seed("status"), env)["buffers"] == {}
    assert [m["content"] for m in run(seed("get"), env)["results"] if m["type"] != "summary"] == [
        "中间结果..."
    ]
    auto = run({**seed("buffer"), "content": "长" * 70}, env)
    assert auto["mode"] == "buffered_flushed" and auto["flushed_count"] == 1
    # A user id is a file name only once encoded: "team/alice" buffers like any other.
    slash = run({**seed("buffer"), "user_id": "team/alice"}, env)
    assert slash["success"] is True, slash
    assert run(seed("status"), env)["buffers"] == {
        "team/alice": {"message_count": 1, "total_chars": len("中间结果...")}
    }
    assert run({**seed("flush"), "user_id": "team/alice"}, env)["flushed_count"] == 1


def test_get_trace_update_and_delete(env):
    base = {"user_id": USER, "breaker_open": False}
    run(seed("save"), env)
    listed = run(seed("get"), env)
    assert listed["success"] is True and listed["total_results"] == listed["total_global"] == 2
    memory = next(m for m in listed["results"] if m["type"] != "summary")
    assert memory["content"] == "处理结果..." and memory["source_id"].startswith("msg_")

    # The seed's trace (message id only), and with the user id the skill's client adds.
    traced = run(seed("trace", message_id=memory["source_id"]), env)
    assert traced["success"] is True and traced["message_id"] == memory["source_id"]
    assert set(traced["message"]) == {"role", "content", "timestamp"}
    assert (traced["message"]["role"], traced["message"]["content"]) == ("assistant", "处理结果...")
    mine = run({**seed("trace", message_id=memory["source_id"]), "user_id": USER}, env)
    assert mine["message"] == traced["message"]
    theirs = run({**seed("trace", message_id=memory["source_id"]), "user_id": "USER_002"}, env)
    assert theirs["message"] == {"found": False, "message_id": memory["source_id"]}
    assert run(seed("trace", message_id="msg_nonexistent_id"), env)["message"] == {
        "found": False,
        "message_id": "msg_nonexistent_id",
    }

    assert run(seed("update", mem_id=memory["mem_id"]), env) == {
        **base,
        "success": True,
        "operation": "update",
        "scope_id": "edp_agent",
        "mem_id": memory["mem_id"],
        "message": "Memory updated successfully",
    }
    assert "修正后的内容..." in {m["content"] for m in run(seed("get"), env)["results"]}
    assert run(seed("delete", mem_id=memory["mem_id"]), env) == {
        **base,
        "success": True,
        "operation": "delete",
        "scope_id": "edp_agent",
        "mem_id": memory["mem_id"],
        "message": "Memory deleted successfully",
    }
    literal = run(seed("batch_delete"), env)  # the seed's ids, which do not exist
    assert (literal["success"], literal["deleted"], literal["failed"]) == (True, 0, 2)
    rest = [m["mem_id"] for m in run(seed("get"), env)["results"]]
    assert run({**seed("batch_delete"), "mem_ids": rest}, env) == {
        **base,
        "success": True,
        "operation": "batch_delete",
        "scope_id": "edp_agent",
        "deleted": len(rest),
        "failed": 0,
        "errors": [],
    }
    assert run(seed("get"), env)["results"] == []
    gone = run(seed("update", mem_id=memory["mem_id"]), env)  # fail-open: a 404 is an answer
    assert gone["success"] is False and "HTTP 404" in gone["error"]


def test_fail_open_and_a_breaker_shared_across_processes(tmp_path):
    env = {
        **os.environ,
        "MEM1_BASE_URL": f"http://127.0.0.1:{free_port()}",
        "MEM1_STATE_DIR": str(tmp_path),
        "MEM1_CIRCUIT_BREAKER_THRESHOLD": "3",
        "MEM1_CIRCUIT_BREAKER_COOLDOWN": "600",
    }
    for _ in range(3):  # each a separate process
        result = run({"operation": "search", "user_id": "u", "query": "x"}, env)
        assert result["success"] is False and result["results"] == [] and "连接失败" in result["error"]
    paused = run({"operation": "save", "user_id": "u", "content": "kept nowhere"}, env)
    assert paused["success"] is False and paused["breaker_open"] is True
    assert "circuit breaker open" in paused["error"]
    breaker = run({"operation": "status"}, env)["circuit_breaker"]
    assert breaker["open"] is True and breaker["failure_count"] == 3
