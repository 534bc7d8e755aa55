"""The cloud role's per-caller request budget (issue #18; daemon/rate_limit.py)."""

from __future__ import annotations

import pytest

from daemon.rate_limit import KeyRateLimiter
from state.config import Settings
from state.errors import RateLimited
from tests.conftest import start_api


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_key_gets_a_minute_of_requests_at_once_then_its_rate() -> None:
    clock = Clock()
    limiter = KeyRateLimiter(60, clock)  # one a second
    for _ in range(60):
        limiter.admit("idn_a")
    with pytest.raises(RateLimited) as refused:
        limiter.admit("idn_a")
    assert refused.value.details == {"retry_after_seconds": 1}
    limiter.admit("idn_b")  # another caller has its own budget
    clock.now += 1.0
    limiter.admit("idn_a")  # a second later: one more
    with pytest.raises(RateLimited):
        limiter.admit("idn_a")
    clock.now += 3600
    for _ in range(60):  # refilled, but never past a minute's worth
        limiter.admit("idn_a")
    with pytest.raises(RateLimited):
        limiter.admit("idn_a")


async def test_a_cloud_daemon_answers_429_with_retry_after_past_an_agent_budget(
    aiohttp_client, paths
) -> None:
    settings = Settings(check_responses=True, role="cloud", rate_limit_per_minute=3)
    api = await start_api(aiohttp_client, paths, settings=settings)
    for _ in range(3):
        await api.get("/api/sync/info")
    response = await api.client.get("/api/sync/info", headers=api.auth())
    assert response.status == 429
    assert int(response.headers["Retry-After"]) >= 1
    body = await response.json()
    assert body["error"]["type"] == "rate_limited" and "rate_limit_per_minute" in body["error"]["message"]
    # Another agent, and the owner, are not held back by it.
    other = api.new_agent("other-agent")
    await api.get("/api/sync/info", key=other)
    for _ in range(5):
        await api.get("/api/local/status", key=api.owner_key)


async def test_a_local_daemon_has_no_rate_limit(aiohttp_client, paths) -> None:
    api = await start_api(
        aiohttp_client, paths, settings=Settings(check_responses=True, rate_limit_per_minute=1)
    )
    for _ in range(5):
        await api.get("/api/sync/info")
