"""Where this daemon deliberately answers otherwise than the MemoryCloud reference server.

The reference's wire contract (tests/contract/memorycloud-reference-contract.json) is
matched everywhere else, and the contract suite (tests/contract/) checks that. This is the
one list of the exceptions, each with its reason; the README repeats it, and
``GET /api/protocol/schema`` serves it as ``reference_differences``.
"""

from __future__ import annotations

from typing import Any

# (method, path) -> why the daemon does not serve it.
NOT_SERVED: dict[tuple[str, str], str] = {
    (
        "POST",
        "/api/catalog/{slug}/install-links",
    ): "install links hand a public package from one account to another on a shared"
    " marketplace; a local daemon has one person, whose agents install a suite directly"
    " (POST /api/agent/open-memories/install)",
    (
        "GET",
        "/api/agent/open-memory-installs/{install_code}",
    ): "the other half of install links (see POST /api/catalog/{slug}/install-links)",
    (
        "POST",
        "/api/agent/open-memory-installs/{install_code}/accept",
    ): "the other half of install links (see POST /api/catalog/{slug}/install-links)",
    (
        "POST",
        "/api/persona/distill-jobs/json",
    ): "distilling a real person's persona from free text needs that person's consent,"
    " which a local daemon cannot check; documents are distilled into a suite's"
    " collection instead (POST /api/memories/{slug}/persona-distill)",
    (
        "POST",
        "/api/workspaces",
    ): "workspaces are made by the owner (`memorycloud workspace add`): an agent key belongs"
    " to one workspace and cannot give itself another",
}

# (endpoint id of the contract sheet, status) -> what the daemon does instead, and why.
STATUS_DIFFERENCES: dict[tuple[str, str], str] = {
    **{
        (endpoint, "429"): "no rate limits on a local daemon: every caller is this machine's"
        " person or an agent they gave a key to"
        for endpoint in (
            "agent_challenge",
            "agent_register",
            "memories_create",
            "memories_import",
            "memories_sync",
            "memory_brief_create",
            "install_link_create",
            "open_memory_install_accept",
        )
    },
    **{
        (endpoint, "403"): "the owner key (a person) may do what an agent may: `memorycloud"
        " connect` and the TUI act for agents through these endpoints; every agent key is"
        " still held to its scopes and its workspace"
        for endpoint in (
            "updates_check",
            "updates_ack",
            "runtime_profile",
            "startup_items_confirm",
            "native_hooks_confirm",
            "bootstrap_verify",
            "agent_bindings_me",
            "sync_intents_list",
            "sync_intent_get",
            "sync_intent_resume",
            "sync_intent_discard",
        )
    },
    ("agent_register", "409"): "an agent is named by its owner when pairing (`memorycloud agent"
    " pair --name`), so the handle it sends cannot collide",
    ("sync_intent_resume", "400"): "a held-back memory delta resumes like every other held-back"
    " write (nothing an agent wrote is lost); the reference"
    " answers 400 and asks for the write again",
    ("memories_create", "500"): "a bad semver (or manifest) is refused with 422 naming the"
    " field, not a server error",
    ("memories_validate", "500"): "a bad semver is refused with 422 naming the field, not a server error",
    ("catalog_download", "500"): "archives are kept in the database with their versions, so"
    " no archive file can go missing",
    ("memory_brief_create", "410"): "handoffs between accounts are not served (one person per"
    " daemon); a handoff_code is named in `warnings`",
}


# endpoint id -> top-level keys answered as null: the feature they name does not exist here.
def _absent() -> dict[str, tuple[str, ...]]:
    from daemon.api.protocol import NO_SUCH_FEATURE
    from daemon.runtime.onboarding import ABSENT

    return {
        "protocol_schema": NO_SUCH_FEATURE,
        "discovery": ABSENT,
        "autostart": ("web_view",),
        "agent_start_json": ("web_view",),
        "navigation": ("web_view",),
    }


ABSENT_KEYS_REASON = (
    "the hosted service's web pages, account handoffs, memory graphs,"
    " integration and local-deployment catalogs have no counterpart on a"
    " local daemon: the key is there, with null"
)


def absent_keys(endpoint_id: str) -> tuple[str, ...]:
    return _absent().get(endpoint_id, ())


def describe() -> dict[str, Any]:
    """The lists as JSON, for /api/protocol/schema."""
    return {
        "not_served": [{"method": m, "path": p, "reason": why} for (m, p), why in NOT_SERVED.items()],
        "status_differences": [
            {"endpoint": e, "status": int(s), "instead": why} for (e, s), why in STATUS_DIFFERENCES.items()
        ],
        "null_keys": {"reason": ABSENT_KEYS_REASON, "keys": {e: list(k) for e, k in _absent().items()}},
    }
