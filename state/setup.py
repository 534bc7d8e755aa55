"""First-start setup shared by the daemon and the CLI: the owner, its key, the workspace."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI reads OWNER_KEY_SECRET without loading the store's code
    from state.secrets import SecretStore
    from state.store import Store

log = logging.getLogger(__name__)

OWNER_KEY_SECRET = "owner_key"


def ensure_installation(store: Store, secrets: SecretStore) -> str:
    """Create the owner (with the default workspace) on first start; return the owner key.

    If the owner exists but its key is gone from the secret store (a wiped keyring), a new
    key is issued so the person is never locked out of their own memory.
    """
    key = secrets.get(OWNER_KEY_SECRET)
    owner = store.identities.owner()
    if (
        owner is not None
        and key is not None
        and (found := store.identities.identity_for_key(key)) is not None
    ):
        if found["id"] == owner["id"]:
            return key  # every start but the first: nothing to write
    # Read again inside the write transaction: daemon processes that start together on one
    # PostgreSQL database (a team server) must make one owner, not one each.
    with store.transaction():
        owner = store.identities.owner()
        if owner is None:
            owner, key = store.identities.create_owner()
            created = True
        else:
            key = store.identities.issue_key(owner["id"], prefix="mco_")
            created = False
    secrets.set(OWNER_KEY_SECRET, key)
    if created:
        log.info("created the owner identity and key (%s)", secrets.describe())
    else:
        # A wiped keyring, or another process's home on a shared database: a key of its own.
        log.warning("issued a new owner key: the stored one was missing or invalid")
    return key
