"""The memory tools under the MemoryCloud reference's contract: a public catalog
(amp.agent-skills.v1) and manifests (amp.agent-skill.v1), pulls held to each skill's own
required_scopes, SKILL.md as text, and the runtime notices for agents."""

from __future__ import annotations

import pytest

from daemon.runtime.skills import SKILLS
from tests.daemon.reference_shapes import shape_problems

# The conformance suite (issue #18): each test runs on SQLite and on PostgreSQL.
pytestmark = pytest.mark.both_engines

SKILL = "memory_brief_reader"  # needs skill:install and memory:read


async def _get(api, path: str, key: str | None = None):
    response = await api.client.get(path, headers=api.auth(key) if key else {})
    body = await response.read()
    return response, body


async def test_catalog_is_public_and_agents_get_the_notices(api):
    response = await api.client.get("/api/agent/skills")
    anonymous = await response.json()
    assert response.status == 200, anonymous
    assert shape_problems("skills", anonymous, caller_is_agent=False) == []
    assert "runtime_connection_notice" not in anonymous  # only for an agent caller
    assert all(not item["permission_model"]["can_pull"] for item in anonymous["items"])
    agent = await api.get("/api/agent/skills")
    assert shape_problems("skills", agent) == []
    assert agent["runtime_connection_notice"]["schema"] == "amp.runtime-connection-notice.v1"
    assert agent["mandatory_runtime_notice"]["legacy_name"] is True
    assert all(item["permission_model"]["can_pull"] for item in agent["items"])
    assert agent["skills"] == agent["items"]
    owner = await api.get("/api/agent/skills", key=api.owner_key)
    assert "runtime_connection_notice" not in owner


async def test_a_bad_key_reads_the_catalog_as_anonymous(api):
    response = await api.client.get("/api/agent/skills", headers={"Authorization": "Bearer mca_nope"})
    assert response.status == 200
    assert "runtime_connection_notice" not in await response.json()


async def test_manifest_of_each_skill(api):
    reader = api.new_agent("reader", scopes=["memory:read"])
    for skill_id, skill in SKILLS.items():
        manifest = await api.get(f"/api/agent/skills/{skill_id}", key=reader)
        assert shape_problems("skill_manifest", manifest) == []
        assert manifest["id"] == skill_id and manifest["required_scopes"] == list(skill.scopes)
        assert manifest["permission_model"]["can_pull"] is False  # no skill:install
        assert "skill:install" in manifest["permission_model"]["reason"]
        assert manifest["pull"]["json"].endswith(f"/api/agent/skills/{skill_id}/pull")
        assert manifest["pull"]["markdown"].endswith(f"/api/agent/skills/{skill_id}/skill.md")
    missing = await api.get("/api/agent/skills/nope", status=404)
    assert "skill nope not found" in missing["error"]["message"]


async def test_pull_has_the_reference_keys(api):
    pulled = await api.get(f"/api/agent/skills/{SKILL}/pull")
    assert shape_problems("skill_pull", pulled) == []
    assert pulled["skill"]["schema"] == "amp.agent-skill.v1" and pulled["skill"]["id"] == SKILL
    assert pulled["skill_md"] == pulled["skill_markdown"]
    assert pulled["skill_md"].startswith(f"# {SKILL}\n\nScopes: skill:install, memory:read.")
    assert pulled["install"]["filename"] == "SKILL.md"
    assert pulled["schema"] == "amp.memory-tool.v1"  # ours; the reference's pull has none


async def test_skill_md_is_the_pulled_text(api):
    pulled = await api.get(f"/api/agent/skills/{SKILL}/pull")
    response, body = await _get(api, f"/api/agent/skills/{SKILL}/skill.md", api.agent_key)
    assert response.status == 200 and response.content_type == "text/plain"
    assert body.decode() == pulled["skill_md"]


@pytest.mark.parametrize(
    "scopes,skill_id,missing",
    [
        (["skill:install"], "memory_brief_reader", "memory:read"),
        (["skill:install", "memory:read"], "memory_tool_installer", "catalog:read"),
        (["skill:install", "memory:read"], "memorycloud_startup_item", "memory:write"),
        (["memory:read", "catalog:read"], "memory_brief_reader", "skill:install"),
    ],
)
@pytest.mark.parametrize("suffix", ["pull", "skill.md"])
async def test_pulling_needs_the_skills_own_scopes(api, scopes, skill_id, missing, suffix):
    key = api.new_agent("partial", scopes=scopes)
    response, body = await _get(api, f"/api/agent/skills/{skill_id}/{suffix}", key)
    assert response.status == 403, body
    assert missing in body.decode()


async def test_the_skills_scopes_are_enough(api):
    key = api.new_agent("brief-reader", scopes=["skill:install", "memory:read"])
    pulled = await api.get(f"/api/agent/skills/{SKILL}/pull", key=key)
    assert pulled["skill"]["permission_model"]["can_pull"] is True


@pytest.mark.parametrize("suffix", ["pull", "skill.md"])
async def test_unknown_skill_is_404_before_its_scopes(api, suffix):
    key = api.new_agent("installer", scopes=["skill:install"])
    response, body = await _get(api, f"/api/agent/skills/nope/{suffix}", key)
    assert response.status == 404, body


@pytest.mark.parametrize("suffix", ["pull", "skill.md"])
async def test_pulling_needs_a_key(api, suffix):
    response, _ = await _get(api, f"/api/agent/skills/{SKILL}/{suffix}")
    assert response.status == 401
