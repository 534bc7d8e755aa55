"""Versions this daemon speaks (seed 000, Platform Updates)."""

RUNTIME_VERSION = "2026.06.07-startup-item-primary.1"
PROTOCOL_VERSION = "amp.runtime.2026-06-07"

# Delta and event types the seed suggests; others are accepted and stored as given.
SUGGESTED_EVENT_TYPES = ("decision", "changed_files", "failure", "handoff_ready", "task_event")

# Summary card types (the reference's): a delta of another type is a recent_delta card.
CARD_TYPES = frozenset({"project_state", "decision", "failure", "open_loop", "code_memory"})
