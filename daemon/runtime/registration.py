"""Agent registration as MemoryCloud's clients do it, on a daemon where only a person gives
access: a proof-of-work challenge (the reference's rule), then a pairing code.

The reference registers any agent that solves its proof of work. A local daemon cannot: an
agent must never give itself access (DESIGN.md, security model), so ``register`` also needs
the one-time pairing code of ``memorycloud agent pair``. A client written for the reference
runs its usual flow, challenge and all, and is told exactly what is missing.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from state.errors import Forbidden, InvalidRequest
from state.identities import IdentityRecord
from state.ids import iso_from_datetime, new_id
from state.store import Store

CHALLENGE_SECONDS = 600  # as the reference: valid ten minutes, single use
DIFFICULTY = 3  # the reference's minimum; registration also needs a pairing code
MAX_OPEN_CHALLENGES = 1000  # kept in memory: a restart only makes a client ask again


@dataclass
class Challenge:
    challenge_id: str
    server_nonce: str
    difficulty: int
    expires: float
    solved: bool = False


def solves(challenge: Challenge, nonce: str) -> bool:
    """sha256(challenge_id + ':' + server_nonce + ':' + nonce) starts with `difficulty` zeros."""
    digest = hashlib.sha256(f"{challenge.challenge_id}:{challenge.server_nonce}:{nonce}".encode()).hexdigest()
    return digest.startswith("0" * challenge.difficulty)


class RegistrationService:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._challenges: dict[str, Challenge] = {}

    def challenge(self) -> dict[str, Any]:
        now = time.time()
        self._challenges = {k: c for k, c in self._challenges.items() if c.expires > now}
        if len(self._challenges) >= MAX_OPEN_CHALLENGES:
            oldest = min(self._challenges.values(), key=lambda c: c.expires)
            del self._challenges[oldest.challenge_id]
        issued = Challenge(new_id("pow_"), secrets.token_urlsafe(24), DIFFICULTY, now + CHALLENGE_SECONDS)
        self._challenges[issued.challenge_id] = issued
        return {
            "challenge_id": issued.challenge_id,
            "server_nonce": issued.server_nonce,
            "difficulty": issued.difficulty,
            "algorithm": "sha256(challenge_id + ':' + server_nonce + ':' + nonce)",
            "expires_at": iso_from_datetime(datetime.fromtimestamp(issued.expires, UTC)),
            "pairing_code_required": True,
        }

    def check_proof(self, body: dict[str, Any]) -> None:
        """The reference's checks, in its order: honeypot, challenge, proof of work (a failed
        attempt does not use the challenge up). No challenge at all is fine here: the
        pairing code is what gives access."""
        if body.get("website"):
            raise InvalidRequest("registration refused")
        challenge_id = body.get("challenge_id")
        if not challenge_id:
            return
        challenge = self._challenges.get(challenge_id)
        if challenge is None or challenge.solved or challenge.expires <= time.time():
            raise InvalidRequest(
                "challenge unknown, already solved or expired: ask for a new one (POST /api/agent/challenge)"
            )
        if not solves(challenge, body.get("nonce") or ""):
            raise InvalidRequest("the nonce does not solve the challenge's proof of work")
        challenge.solved = True

    def register(self, body: dict[str, Any]) -> tuple[IdentityRecord, str]:
        """A new agent and its key, in exchange for the owner's pairing code."""
        self.check_proof(body)
        code = body.get("pairing_code")
        if not code:
            raise Forbidden(
                "self-registration needs a pairing code from the owner: ask them to run"
                " `memorycloud agent pair --name NAME --runtime RUNTIME` and send its code as"
                " pairing_code",
                details={"pairing_required": True},
            )
        with self.store.transaction():
            return self.store.identities.redeem_pairing_code(code)
