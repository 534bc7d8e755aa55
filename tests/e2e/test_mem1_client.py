"""The agent-memory1.0 skill client as a script, against the real daemon and against nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.e2e.conftest import free_port


def run(params: dict, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-m", "daemon.clients.mem1", json.dumps(params, ensure_ascii=False)],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.fixture
def env(daemon, agent_key, tmp_path) -> dict:
    return {**os.environ, "MEM1_BASE_URL": daemon.url, "MEM1_API_KEY": agent_key,
            "MEM1_STATE_DIR": str(tmp_path / "state"), "MEM1_BUFFER_CHARS_THRESHOLD": "60"}


def test_skill_operations_against_the_daemon(env):
    user = {"user_id": "USER_001"}
    saved = run({"operation": "save", **user, "content": "2024-01-15 处理结论：正常，客户偏好电话联系", "role": "assistant"}, env)
    assert (saved["success"], saved["mode"], saved["message_count"]) == (True, "direct", 1)
    empty = run({"operation": "save", **user, "content": "   "}, env)
    assert (empty["success"], empty["mode"]) == (False, "filtered")
    run({"operation": "update_variables", **user, "variables": {"status": "normal", "priority": "high"}}, env)
    found = run({"operation": "search", **user, "query": "处理结论", "top_k": 5}, env)
    assert found["success"] and found["variables"] == {"status": "normal", "priority": "high"}
    assert {r["source"] for r in found["results"]} <= {"vector_search", "summary_search", "page_search"}
    assert any("处理结论" in r["content"] for r in found["results"])
    assert found["search_summary"].startswith("共召回")

    buffered = run({"operation": "save", **user, "content": "第一段中间结果", "buffer": True}, env)
    assert buffered["mode"] == "buffered" and buffered["buffer_threshold"] == 60
    status = run({"operation": "status"}, env)
    assert status["buffers"] == {"USER_001": len("第一段中间结果")}
    flushed = run({"operation": "flush", **user}, env)
    assert flushed["flushed_count"] == 1 and run({"operation": "status"}, env)["buffers"] == {}
    auto = run({"operation": "save", **user, "content": "长" * 70, "buffer": True}, env)
    assert auto["mode"] == "buffered_flushed" and auto["flushed_count"] == 1

    memories = run({"operation": "get", **user, "top_k": 50}, env)["results"]
    first = memories[0]["mem_id"]
    assert run({"operation": "update", **user, "mem_id": first, "memory": "修正后的内容"}, env)["success"]
    assert run({"operation": "delete", **user, "mem_id": first}, env)["success"]
    batch = run({"operation": "batch_delete", **user, "mem_ids": [memories[1]["mem_id"], "mem_nope"]}, env)
    assert (batch["deleted"], batch["failed"]) == (1, 1)
    assert run({"operation": "delete_variables", **user, "names": ["priority"]}, env)["deleted"] == 1
    assert run({"operation": "trace", "message_id": "msg_nope"}, env)["message"] == {
        "found": False, "message_id": "msg_nope"}
    other = run({"operation": "get", "user_id": "USER_002", "top_k": 50}, env)
    assert other["results"] == []  # isolation by user_id


def test_fail_open_and_a_breaker_shared_across_processes(tmp_path):
    env = {**os.environ, "MEM1_BASE_URL": f"http://127.0.0.1:{free_port()}", "MEM1_STATE_DIR": str(tmp_path),
           "MEM1_CIRCUIT_BREAKER_THRESHOLD": "3", "MEM1_CIRCUIT_BREAKER_COOLDOWN": "600"}
    for _ in range(3):  # each a separate process
        result = run({"operation": "search", "user_id": "u", "query": "x"}, env)
        assert result["success"] is False and result["results"] == [] and "连接失败" in result["error"]
    paused = run({"operation": "save", "user_id": "u", "content": "kept nowhere"}, env)
    assert paused["success"] is False and paused["breaker_open"] is True
    assert "circuit breaker open" in paused["error"]
    breaker = run({"operation": "status"}, env)["circuit_breaker"]
    assert breaker["open"] is True and breaker["failure_count"] == 3
