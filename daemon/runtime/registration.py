"""Agent registration as MemoryCloud's clients do it, on a daemon where only a person gives
access: a proof-of-work challenge (the reference's rule), then a pairing code.

The reference registers any agent that solves its proof of work. A local daemon cannot: an
agent must never give itself access (DESIGN.md, security model), so ``register`` also needs
the one-time pairing code of ``memorycloud agent pair``. A client written for the reference
runs its usual flow, challenge and all, and is told exactly what is missing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from state.errors import Forbidden, InvalidRequest
from state.identities import IdentityRecord
from state.ids import iso_from_datetime
from state.store import Store

CHALLENGE_SECONDS = 600  # as the reference: valid ten minutes, single use
DIFFICULTY = 3  # the reference's minimum; registration also needs a pairing code
MAX_SOLVED = 10_000  # challenges remembered as used (each cost its solver a proof of work)
_ID = re.compile(r"^pow_([0-9a-f]{8})[0-9a-f]{24}$")


@dataclass
class Challenge:
    challenge_id: str
    server_nonce: str
    difficulty: int
    expires: float


def solves(challenge: Challenge, nonce: str) -> bool:
    """sha256(challenge_id + ':' + server_nonce + ':' + nonce) starts with `difficulty` zeros."""
    digest = hashlib.sha256(f"{challenge.challenge_id}:{challenge.server_nonce}:{nonce}".encode()).hexdigest()
    return digest.startswith("0" * challenge.difficulty)


class RegistrationService:
    """Challenges are kept nowhere: the id carries its expiry and the server nonce is an HMAC
    of the id under a secret of the store (state/identities.py), so any process serving the
    store checks a challenge another one issued (a team server's processes behind one
    address), and a restart keeps them. Single use is remembered per process; the pairing
    code, the actual gate, is single use in the store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._solved: dict[str, float] = {}  # challenge id -> expiry

    def _server_nonce(self, challenge_id: str) -> str:
        mac = hmac.new(self.store.identities.server_secret(), challenge_id.encode(), hashlib.sha256)
        return base64.urlsafe_b64encode(mac.digest()).decode()[:32]

    def _issued(self, challenge_id: str) -> Challenge | None:
        """The challenge this store issued under ``challenge_id``, or None."""
        match = _ID.match(challenge_id)
        if match is None:
            return None
        return Challenge(challenge_id, self._server_nonce(challenge_id), DIFFICULTY, int(match.group(1), 16))

    def challenge(self) -> dict[str, Any]:
        expires = int(time.time()) + CHALLENGE_SECONDS
        issued = self._issued(f"pow_{expires:08x}{secrets.token_hex(12)}")
        assert issued is not None
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
        now = time.time()
        challenge = self._issued(str(challenge_id))
        if challenge is None or challenge.challenge_id in self._solved or challenge.expires <= now:
            raise InvalidRequest(
                "challenge unknown, already solved or expired: ask for a new one (POST /api/agent/challenge)"
            )
        if not solves(challenge, body.get("nonce") or ""):
            raise InvalidRequest("the nonce does not solve the challenge's proof of work")
        if len(self._solved) >= MAX_SOLVED:
            self._solved = {k: e for k, e in self._solved.items() if e > now}
            while len(self._solved) >= MAX_SOLVED:  # a flood: the oldest go (a proof skipped, no more)
                del self._solved[next(iter(self._solved))]
        self._solved[challenge.challenge_id] = challenge.expires

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
