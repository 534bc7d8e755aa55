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

1. Connect: the owner gives you a pairing code; POST {base}/api/agent/register.
2. Every session: POST {base}/api/agent/bootstrap/context, inject `summary_markdown` as
   private context, keep `receipt_id`.
3. During work: POST {base}/api/agent/memory-delta with header
   `X-AMP-Context-Receipt: <receipt_id>`; fetch details through `retrieval_handles`.
4. Updates: GET {base}/api/agent/updates/check; re-pull the skills `requires_repull` names;
   POST {base}/api/agent/updates/ack. A 409 amp.sync-interrupt.v1 means your write was
   kept: ack, then POST the `resume.after_ack` URL.
5. Startup items (files in the repository) only after the person approves the plan.
"""),
    Skill("capsule_installer", "Legacy capsule installer",
          "Import a legacy archive (no suite/manifest.json) as Markdown memory.",
          "# capsule_installer\n\nLegacy archives import as a light suite: MEMORY.md is long-term"
          " memory, memory/*.md work memory, DREAMS.md reflections. Suites: {base}/api/memories/import.\n"),
    Skill("cloud_workspace_memory", "Workspace memory before a task",
          "Read the workspace's memory for the task at hand before acting.",
          "# cloud_workspace_memory\n\nPOST {base}/api/agent/memory-brief with your task; read"
          " `brief_markdown`; write key events to the brief's `next.writeback` URL.\n"),
    Skill("code_memory_context", "Code memory for coding agents",
          "Project conventions and decisions for the repository you are in.",
          "# code_memory_context\n\nPOST {base}/api/agent/project/probe with repo_root and"
          " git_remote, then bootstrap/context with the project_binding_id; search with"
          " GET {base}/api/workspaces/<workspace_id>/memory/query?q=...\n"),
    Skill("adaptive_memory_writer", "Structured memory writer",
          "Store a decision, failure, procedure or fact in the right form.",
          "# adaptive_memory_writer\n\nPOST {base}/api/memory/router/select with task and"
          " what_i_remember; fill the returned form; POST it to {base}/api/memory/forms/<run_id>/submit.\n"),
    Skill("collaboration_claim", "Claim before writing shared resources",
          "Announce work on a shared resource so agents do not collide.",
          "# collaboration_claim\n\nScopes: memory:write. Before editing something other agents"
          " also work on, POST {base}/api/agent/claims with {\"resource\": ..., \"ttl_seconds\": 900}."
          " A 409 names the holder and the expiry: wait or take other work. Release with"
          " POST {base}/api/agent/claims/<claim_id>/release; see who holds what with"
          " GET {base}/api/agent/claims?resource=...\n"),
    Skill("self_memory_sync", "Sync your own long-term experience",
          "Write stable lessons back so the next session starts with them.",
          "# self_memory_sync\n\nAt the end of a task write a `handoff_ready` brief event or a memory"
          " delta with importance 4 for lessons that should outlive the session.\n"),
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
