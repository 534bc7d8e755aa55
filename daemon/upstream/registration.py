"""Getting a key on the upstream.

Two ways, by what the upstream offers:

* a pairing code from the upstream's owner (``memorycloud agent pair`` on a daemon in the
  cloud role): ``POST /api/agent/register {"pairing_code", "handle"}``;
* open registration with proof of work (the MemoryCloud service, seed 000's Quick
  Connect): ``POST /api/agent/challenge`` gives ``challenge_id``, ``server_nonce`` and
  ``difficulty``; find a decimal ``nonce`` with sha256("challenge_id:server_nonce:nonce")
  starting with ``difficulty`` hex zeros; ``POST /api/agent/register`` with it.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from daemon.upstream.client import UpstreamClient, UpstreamRejected

MAX_DIFFICULTY = 7  # 16**7 hashes at worst: seconds, not hours; refuse anything harder


def solve_proof_of_work(challenge_id: str, server_nonce: str, difficulty: int) -> str:
    """The first decimal nonce whose sha256 hex digest starts with ``difficulty`` zeros."""
    if not 0 <= difficulty <= MAX_DIFFICULTY:
        raise ValueError(f"proof-of-work difficulty {difficulty} is out of range 0-{MAX_DIFFICULTY}")
    prefix = f"{challenge_id}:{server_nonce}:".encode()
    target = "0" * difficulty
    nonce = 0
    while True:
        if hashlib.sha256(prefix + str(nonce).encode()).hexdigest().startswith(target):
            return str(nonce)
        nonce += 1


async def register(client: UpstreamClient, *, pairing_code: str | None, handle: str) -> dict[str, Any]:
    """Register this daemon as an agent on the upstream; the answer holds ``api_key``."""
    if pairing_code:
        body = await client.call(
            "POST", "/api/agent/register", json={"pairing_code": pairing_code, "handle": handle}
        )
    else:
        try:
            challenge = await client.call(
                "POST", "/api/agent/challenge", json={"intent": "register", "agent_name": handle}
            )
        except UpstreamRejected as exc:
            if exc.status in (403, 404, 405):
                raise UpstreamRejected(
                    exc.status,
                    exc.body,
                    "this upstream registers agents by pairing code: ask its"
                    " owner for one (`memorycloud agent pair` there) and pass"
                    " --pairing-code",
                ) from exc
            raise
        nonce = await asyncio.to_thread(
            solve_proof_of_work,
            challenge["challenge_id"],
            challenge["server_nonce"],
            int(challenge["difficulty"]),
        )
        body = await client.call(
            "POST",
            "/api/agent/register",
            json={
                "challenge_id": challenge["challenge_id"],
                "nonce": nonce,
                "handle": handle,
                "display_name": handle,
                "agent_kind": "autonomous",
                "memory_format": "amp.memory.v1",
            },
        )
    if not isinstance(body, dict) or not body.get("api_key"):
        raise UpstreamRejected(502, body, "the upstream's registration answer has no api_key")
    return body
