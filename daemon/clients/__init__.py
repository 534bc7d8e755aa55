"""Clients of the daemon's dialects, for agents and scripts (no daemon internals imported)."""
