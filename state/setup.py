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
    owner = store.identities.owner()
    key = secrets.get(OWNER_KEY_SECRET)
    if owner is None:
        with store.transaction():
            owner, key = store.identities.create_owner()
        secrets.set(OWNER_KEY_SECRET, key)
        log.info("created the owner identity and key (%s)", secrets.describe())
        return key
    if key is None or (found := store.identities.identity_for_key(key)) is None or found["id"] != owner["id"]:
        with store.transaction():
            key = store.identities.issue_key(owner["id"], prefix="mco_")
        secrets.set(OWNER_KEY_SECRET, key)
        log.warning("issued a new owner key: the stored one was missing or invalid")
    return key
