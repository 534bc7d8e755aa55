"""Memory tools (seed 000's skills): instructions an agent pulls to use this daemon well.

The catalog ships with the daemon; each skill has a version so a platform update can say
"re-pull memory_tool_installer" and the agent gets the current text. (The suites issue
extends this with suite-provided tools.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from daemon.runtime.constants import RUNTIME_VERSION
from state.errors import NotFound


@dataclass(frozen=True)
class Skill:
    skill_id: str
    title: str
    summary: str
    body: str

    def public(self, base_url: str, *, with_body: bool) -> dict[str, Any]:
        out = {"skill_id": self.skill_id, "title": self.title, "summary": self.summary,
               "version": RUNTIME_VERSION, "pull": f"{base_url}/api/agent/skills/{self.skill_id}/pull"}
        if with_body:
            out["skill_markdown"] = self.body.replace("{base}", base_url)
        return out


SKILLS: dict[str, Skill] = {s.skill_id: s for s in (
    Skill("memory_tool_installer", "Memory tool installer",
          "Pull first: how to connect, start from a context pack and write memory back.",
          """# memory_tool_installer

Scopes: memory:read, memory:write, skill:install. Send `Authorization: Bearer <key>`.

1. Connect: the owner gives you a pairing code (`memorycloud agent pair`); POST it to
   {base}/api/agent/register as {"pairing_code": "..."} and keep the api_key private.
2. Every session: POST {base}/api/agent/bootstrap/context ({"project_key": ...} or
   {"project_binding_id": ...}); inject `summary_markdown` as private context; keep
   `receipt_id`.
3. During work: POST {base}/api/agent/memory-delta with header
   `X-AMP-Context-Receipt: <receipt_id>` and {"summary", "delta_type", "importance"};
   fetch details by requesting each retrieval handle's `detail_endpoint` as returned.
4. Updates: GET {base}/api/agent/updates/check; re-pull the skills `requires_repull` names
   (GET {base}/api/agent/skills/<skill_id>/pull); POST {base}/api/agent/updates/ack.
   A 409 amp.sync-interrupt.v1 means your write was kept: ack, then POST
   {base}/api/agent/sync-intents/<sync_intent_id>/resume.
5. Other tools: GET {base}/api/agent/skills. Procedures you forgot: POST
   {base}/api/agent/methods/query with {"message": ...}.
6. Startup items (files in the repository) only after the person approves the plan from
   POST {base}/api/agent/startup-items/install-plan.
"""),
    Skill("capsule_installer", "Suite and legacy capsule installer",
          "Import a suite or a legacy archive and install it into the workspace.",
          """# capsule_installer

Scopes: memory:write (import), catalog:read (read), skill:install (install).

1. Import: POST {base}/api/memories/import with the zip as the body
   (`Content-Type: application/zip`). Legacy archives (no suite/manifest.json) become
   light suites: MEMORY.md long-term memory, memory/*.md working memory, DREAMS.md
   reflections. A refused archive names the problem; nothing is stored.
2. Check: GET {base}/api/catalog/<slug>/suite (license, provenance, sha256 per file).
3. Install: POST {base}/api/agent/open-memories/install with {"slug": ...}; inject
   `runtime_context_pack.summary_markdown` from the answer (Active Installed Memory Lenses).
4. Details later: GET {base}/api/agent/installed-open-memories/<installed_memory_id>.
5. Facts that contradict the workspace's own memory wait for the person as conflicts;
   never work around them.
"""),
    Skill("cloud_workspace_memory", "Workspace memory before a task",
          "Read the workspace's memory for the task at hand before acting.",
          """# cloud_workspace_memory

Scopes: memory:read, memory:write.

1. Before a task: POST {base}/api/agent/memory-brief with {"task": ..., "project_key": ...};
   read `brief_markdown` (relevant memories, project state, hand-off, recent events).
2. During it: POST {base}/api/agent/memory-briefs/<brief_id>/events with
   {"event_type": "decision|changed_files|failure|handoff_ready|task_event",
   "summary": ..., "importance": 1-5}. Events reach the next context pack.
3. Search: GET {base}/api/workspaces/<workspace_id>/memory/query?q=...
"""),
    Skill("code_memory_context", "Code memory for coding agents",
          "Project conventions and decisions for the repository you are in.",
          """# code_memory_context

Scopes: memory:read, memory:write.

1. POST {base}/api/agent/runtime/profile with {"runtime": ..., "repo_root": ...}.
2. POST {base}/api/agent/project/probe with repo_root and git_remote: the same repository
   always gets the same project_binding_id.
3. POST {base}/api/agent/bootstrap/context with that project_binding_id.
4. Record code decisions as deltas with delta_type "decision" and retrieval_triggers naming
   files or modules; search with GET {base}/api/workspaces/<workspace_id>/memory/query?q=...
"""),
    Skill("adaptive_memory_writer", "Structured memory writer",
          "Store a decision, failure, procedure or fact in the right form.",
          """# adaptive_memory_writer

Scopes: memory:write.

1. POST {base}/api/memory/router/select with {"task": ..., "what_i_remember": ...}.
2. Fill every field of `form_schema.required` (lists as JSON arrays).
3. POST {base}/api/memory/forms/<run_id>/submit with {"payload": {...}}. A 422 lists
   missing_fields. The memory enters the workspace's context packs.
"""),
    Skill("collaboration_claim", "Claim before writing shared resources",
          "Announce work on a shared resource so agents do not collide.",
          """# collaboration_claim

Scopes: memory:write (claim, release), memory:read (list).

1. Before editing something other agents also work on: POST {base}/api/agent/claims with
   {"resource": "branch:main", "ttl_seconds": 900, "purpose": ...}.
2. A 409 names the holder and the expiry: wait, or take other work.
3. Claiming again while you hold it extends it. Release with
   POST {base}/api/agent/claims/<claim_id>/release; see holders with
   GET {base}/api/agent/claims?resource=...
"""),
    Skill("self_memory_sync", "Sync your own long-term experience",
          "Write stable lessons back so the next session starts with them.",
          """# self_memory_sync

Scopes: memory:write.

1. Lessons for the next session: POST {base}/api/agent/memory-delta (receipt header) with
   importance 4, or a `handoff_ready` event on your brief.
2. Your own suite: POST {base}/api/memories/<slug>/sync with
   {"events": [{"summary": ..., "event_type": ...}]}; it appends to today's
   memory/YYYY-MM-DD.md and makes a new patch version (GET {base}/api/catalog/<slug>/versions).
"""),
)}


def catalog(base_url: str) -> dict[str, Any]:
    return {"schema": "amp.memory-tools.v1", "runtime_version": RUNTIME_VERSION,
            "required_first_skill": "memory_tool_installer",
            "skills": [s.public(base_url, with_body=False) for s in SKILLS.values()]}


def pull(skill_id: str, base_url: str) -> dict[str, Any]:
    skill = SKILLS.get(skill_id)
    if skill is None:
        raise NotFound(f"skill {skill_id} not found; see GET /api/agent/skills")
    return {"schema": "amp.memory-tool.v1", **skill.public(base_url, with_body=True)}
