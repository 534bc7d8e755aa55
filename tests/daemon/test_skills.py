"""Every memory tool pulls, and names only endpoints this daemon serves."""

from __future__ import annotations

import re

import pytest

from daemon.api import all_endpoints

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

ROUTES = [(e.method, re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", e.path) + "$")) for e in all_endpoints()]
MENTION = re.compile(r"\b(GET|POST)?\s*(?:\{base\}|http://127\.0\.0\.1:\d+)?(/api/[A-Za-z0-9_/{}<>.-]+)")


def _served(path: str) -> bool:
    path = re.sub(r"<[^>]+>", "x", path.rstrip(".")).split("?")[0]
    return any(pattern.match(path) for _, pattern in ROUTES)


async def test_every_skill_pulls_and_names_real_endpoints(api):
    catalog = await api.get("/api/agent/skills")
    ids = [s["skill_id"] for s in catalog["skills"]]
    assert ids[0] == catalog["required_first_skill"] == "memory_tool_installer"
    assert set(ids) == {
        "memory_tool_installer",
        "capsule_installer",
        "cloud_workspace_memory",
        "code_memory_context",
        "adaptive_memory_writer",
        "collaboration_claim",
        "self_memory_sync",
        "memory_brief_reader",
        "method_query_helper",
        "memorycloud_startup_item",
    }
    mentions = 0
    for skill_id in ids:
        pulled = await api.get(f"/api/agent/skills/{skill_id}/pull")
        text = pulled["skill_markdown"]
        assert text.startswith(f"# {skill_id}") and "{base}" not in text
        assert re.search(r"^Scopes: ", text, re.M), f"{skill_id} must say which scopes it needs"
        mentioned = [m.group(2) for m in MENTION.finditer(text)]
        assert all(_served(p) for p in mentioned), (skill_id, [p for p in mentioned if not _served(p)])
        mentions += len(mentioned)
        listed = [e.split(" ", 1)[1] for e in pulled["skill"]["endpoints"]]
        assert listed and all(_served(p) for p in listed), (skill_id, listed)
    assert mentions >= 10  # the skills really do name endpoints
    missing = await api.get("/api/agent/skills/nope/pull", status=404)
    assert "skill nope not found" in missing["error"]["message"]
