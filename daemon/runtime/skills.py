"""Memory tools (seed 000's skills): instructions an agent pulls to use this daemon well.

The catalog ships with the daemon; each skill has a version so a platform update can say
"re-pull memory_tool_installer" and the agent gets the current text. Shapes and scopes are
the MemoryCloud reference's (amp.agent-skills.v1, amp.agent-skill.v1: each skill names the
scopes a key needs to pull it); our earlier keys (skill_id, title, skills ...) stay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from daemon.runtime.constants import RUNTIME_VERSION
from daemon.runtime.skill_texts import TEXTS
from state.errors import Forbidden, NotFound
from state.identities import IdentityRecord

INSTALL = "skill:install"
READ, WRITE, CATALOG, SYNC = "memory:read", "memory:write", "catalog:read", "agent:sync"
# "POST {base}/api/..." in a skill's text: the endpoints it uses, listed from the text itself
# so the list cannot drift from the instructions.
_MENTION = re.compile(r"\b(GET|POST) \{base\}(/api/[A-Za-z0-9_/{}<>.-]+)")
_PLACEHOLDER = re.compile(r"<([^>]+)>")


@dataclass(frozen=True)
class Skill:
    skill_id: str
    title: str
    summary: str
    scopes: tuple[str, ...]  # what a key needs to pull it (the reference's lists)
    modes: tuple[str, ...]  # the memory it works with

    def markdown(self, base_url: str) -> str:
        head = f"# {self.skill_id}\n\nScopes: {', '.join(self.scopes)}.\n\n"
        return (head + TEXTS[self.skill_id]).replace("{base}", base_url)

    def endpoints(self) -> list[str]:
        found = []
        for match in _MENTION.finditer(TEXTS[self.skill_id]):
            path = _PLACEHOLDER.sub(r"{\1}", match.group(2)).rstrip(".")
            found.append(f"{match.group(1)} {path}")
        return list(dict.fromkeys(found))

    def public(self, base_url: str, identity: IdentityRecord | None) -> dict[str, Any]:
        url = f"{base_url}/api/agent/skills/{self.skill_id}"
        missing = missing_scopes(self, identity)
        if identity is None:
            reason = f"send an API key with {', '.join(self.scopes)} to pull it"
        elif missing:
            reason = f"this key lacks {', '.join(missing)}"
        else:
            reason = "this key has every scope the skill needs"
        return {
            "schema": "amp.agent-skill.v1",
            "id": self.skill_id,
            "skill_id": self.skill_id,
            "name": self.skill_id,
            "label": self.title,
            "title": self.title,
            "description": self.summary,
            "summary": self.summary,
            "memory_modes": list(self.modes),
            "required_scopes": list(self.scopes),
            "endpoints": self.endpoints(),
            "version": RUNTIME_VERSION,
            "permission_model": {
                "required_scopes": list(self.scopes),
                "can_pull": identity is not None and not missing,
                "reason": reason,
            },
            "pull": {
                "json": f"{url}/pull",
                "markdown": f"{url}/skill.md",
                "auth": "Authorization: Bearer <api_key>",
            },
        }


SKILLS: dict[str, Skill] = {
    s.skill_id: s
    for s in (
        Skill(
            "memory_tool_installer",
            "Memory tool installer",
            "Pull first: how to connect, start from a context pack and write memory back.",
            (INSTALL, CATALOG),
            ("runtime_context_pack", "memory_delta"),
        ),
        Skill(
            "memory_brief_reader",
            "Memory Brief reader",
            "Read the Memory Brief before a task and fetch details on demand.",
            (INSTALL, READ),
            ("memory_brief", "workspace"),
        ),
        Skill(
            "capsule_installer",
            "Suite and legacy capsule installer",
            "Import a suite or a legacy archive and install it into the workspace.",
            (INSTALL, CATALOG),
            ("memory_suite", "markdown"),
        ),
        Skill(
            "cloud_workspace_memory",
            "Workspace memory before a task",
            "Read the workspace's memory for the task at hand before acting.",
            (INSTALL, READ),
            ("workspace", "memory_brief"),
        ),
        Skill(
            "code_memory_context",
            "Code memory for coding agents",
            "Project conventions and decisions for the repository you are in.",
            (INSTALL, READ),
            ("project", "code"),
        ),
        Skill(
            "method_query_helper",
            "Method query helper",
            "Ask the method registry for the exact steps instead of guessing endpoints.",
            (INSTALL, CATALOG),
            ("method_registry",),
        ),
        Skill(
            "memorycloud_startup_item",
            "MemoryCloud startup item",
            "Plan a repository's startup item; the person approves; confirm it.",
            (INSTALL, READ, WRITE),
            ("startup_item", "runtime_context_pack"),
        ),
        Skill(
            "adaptive_memory_writer",
            "Structured memory writer",
            "Store a decision, failure, procedure or fact in the right form.",
            (INSTALL, WRITE),
            ("adaptive_memory", "workspace"),
        ),
        Skill(
            "collaboration_claim",
            "Claim before writing shared resources",
            "Announce work on a shared resource so agents do not collide.",
            (INSTALL, WRITE),
            ("collaboration",),
        ),
        Skill(
            "self_memory_sync",
            "Sync your own long-term experience",
            "Write stable lessons back so the next session starts with them.",
            (INSTALL, SYNC),
            ("memory_suite", "memory_delta"),
        ),
    )
}
# The pull endpoints check skill:install themselves (daemon/api/amp_updates.py).
assert all(INSTALL in skill.scopes for skill in SKILLS.values())


def missing_scopes(skill: Skill, identity: IdentityRecord | None) -> list[str]:
    """The skill's scopes the caller's key lacks (the owner has them all)."""
    if identity is None:
        return list(skill.scopes)
    if identity["kind"] == "owner":
        return []
    return [s for s in skill.scopes if s not in identity["scopes"]]


def catalog(base_url: str, identity: IdentityRecord | None) -> dict[str, Any]:
    """Every skill (amp.agent-skills.v1); ``skills`` is our earlier key for ``items``."""
    items = [s.public(base_url, identity) for s in SKILLS.values()]
    return {
        "schema": "amp.agent-skills.v1",
        "purpose": "memory tools: instructions an agent pulls to use this daemon's memory",
        "permission_scope": f"{INSTALL}, plus each skill's required_scopes to pull it",
        "runtime_version": RUNTIME_VERSION,
        "required_first_skill": "memory_tool_installer",
        "items": items,
        "skills": items,
    }


def find(skill_id: str) -> Skill:
    skill = SKILLS.get(skill_id)
    if skill is None:
        raise NotFound(f"skill {skill_id} not found; see GET /api/agent/skills")
    return skill


def pullable(skill_id: str, identity: IdentityRecord) -> Skill:
    """The skill, if it exists (404 first, as the reference checks) and the key may pull it."""
    skill = find(skill_id)
    missing = missing_scopes(skill, identity)
    if missing:
        raise Forbidden(
            f"scope required: {', '.join(missing)} (to pull {skill_id})",
            details={"required_scope": missing[0], "required_scopes": list(skill.scopes)},
        )
    return skill


def pull(skill: Skill, base_url: str, identity: IdentityRecord) -> dict[str, Any]:
    """The skill, its SKILL.md text and where to put it (our amp.memory-tool.v1 keys too)."""
    public = skill.public(base_url, identity)
    text = skill.markdown(base_url)
    return {
        **public,
        "schema": "amp.memory-tool.v1",
        "skill": public,
        "skill_md": text,
        "skill_markdown": text,
        "install": {
            "filename": "SKILL.md",
            "runtime_hint": f"save skill_md as <your runtime's skills directory>/"
            f"{skill.skill_id}/SKILL.md, or keep it in context",
        },
    }
