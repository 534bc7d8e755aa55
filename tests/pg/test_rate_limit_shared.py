"""A key's request budget holds for the team server, not for each process (issue #18;
daemon/rate_limit.py, state/pg/rate_counts.py): processes on one PostgreSQL database share
their counts, so two processes do not give a key twice its budget."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx
import pytest

from daemon.rate_limit import KeyRateLimiter
from state.errors import RateLimited
from state.pg.engine import connect
from state.pg.rate_counts import RateCounts
from tests.e2e.conftest import cli
from tests.pg.conftest import team_process

MID_MINUTE = 1_800_000_030.0  # 30 s into a minute


def _share(limiter: KeyRateLimiter, counts: RateCounts) -> None:
    """What daemon/rate_limit.py's share_counts does each second."""
    minute, used = limiter.take_admitted()
    limiter.learn(minute, counts.add(minute, used))


def test_two_processes_share_one_budget_per_key(pg_url: str) -> None:
    wall = [MID_MINUTE]
    first, second = (KeyRateLimiter(10, wall=lambda: wall[0]) for _ in range(2))
    counts = [RateCounts(lambda: connect(pg_url)) for _ in range(2)]
    try:
        for limiter in (first, second):
            for _ in range(6):  # within each process's own budget
                limiter.admit("idn_busy")
        first.admit("idn_quiet")
        _share(first, counts[0])  # 6 on the team server so far: nothing refused
        first.admit("idn_busy")  # 7 + 6 on the team server, but the first has not heard yet
        _share(second, counts[1])  # 13 of 10: the second refuses the key from now on
        with pytest.raises(RateLimited, match="on this team server") as refused:
            second.admit("idn_busy")
        assert refused.value.details == {"retry_after_seconds": 30}  # the minute's end
        _share(first, counts[0])  # the first learns it too, with nothing new to add
        with pytest.raises(RateLimited):
            first.admit("idn_busy")
        first.admit("idn_quiet")  # another key keeps its budget
        wall[0] += 60  # the next minute: the key's team-wide budget is back
        first.admit("idn_busy")
        second.admit("idn_busy")
    finally:
        for each in counts:
            each.close()


def test_a_key_past_its_budget_through_two_processes_is_refused_by_both(pg_url: str, tmp_path: Path) -> None:
    processes = [
        team_process(tmp_path / host, pg_url, MEMORYCLOUD_RATE_LIMIT_PER_MINUTE="20")
        for host in ("host-a", "host-b")
    ]
    try:
        env = {**os.environ, "MEMORYCLOUD_HOME": str(processes[0].home)}
        key = json.loads(cli("agent", "add", "busy-agent", "--runtime", "codex", "--json", env=env).stdout)[
            "api_key"
        ]
        clients = [
            httpx.Client(base_url=p.url, headers={"Authorization": f"Bearer {key}"}, timeout=10)
            for p in processes
        ]
        if time.time() % 60 > 45:  # counts are per minute: start the test in a new one
            time.sleep(61 - time.time() % 60)
        # 12 through each: within each process's budget of 20, past the team server's.
        statuses = [
            c.get("/api/agent/search", params={"q": "budget"}).status_code for c in clients for _ in range(12)
        ]
        assert statuses.count(200) >= 20, statuses
        time.sleep(2.5)  # each process shares its counts every second
        for client in clients:
            answer = client.get("/api/agent/search", params={"q": "budget"})
            assert answer.status_code == 429, answer.text
            assert "team server" in answer.text and int(answer.headers["Retry-After"]) >= 1
        for client in clients:
            client.close()
    finally:
        for process in processes:
            process.stop()
