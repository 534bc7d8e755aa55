"""The instructions of each memory tool (SKILL.md bodies). ``{base}`` is the daemon's URL;
the title and the Scopes line are added from the skill's metadata (daemon.runtime.skills)."""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "memory_tool_installer": """\
Send `Authorization: Bearer <key>`.

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
   {base}/api/agent/methods/query with {"user_message": ...}.
6. Startup items (files in the repository) only after the person approves the plan from
   POST {base}/api/agent/startup-items/install-plan.
""",
    "memory_brief_reader": """\
1. Before a task: POST {base}/api/agent/memory-brief with {"task": ..., "project_key": ...}.
2. Read `brief_markdown` first: relevant memories, project state, hand-off notes and recent
   events, each with the memory id it came from.
3. A detail you need in full: GET {base}/api/agent/memories/<memory_id>, or request the
   retrieval handle's `detail_endpoint` exactly as returned (already URL-encoded).
4. Read the brief again later with GET {base}/api/agent/memory-briefs/<brief_id>.
""",
    "capsule_installer": """\
Importing needs memory:write as well.

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
""",
    "cloud_workspace_memory": """\
Writing events needs memory:write as well.

1. Before a task: POST {base}/api/agent/memory-brief with {"task": ..., "project_key": ...};
   read `brief_markdown` (relevant memories, project state, hand-off, recent events).
2. During it: POST {base}/api/agent/memory-briefs/<brief_id>/events with
   {"event_type": "decision|changed_files|failure|handoff_ready|task_event",
   "summary": ..., "importance": 1-5}. Events reach the next context pack.
3. Search: GET {base}/api/workspaces/<workspace_id>/memory/query?q=...
""",
    "code_memory_context": """\
Recording decisions needs memory:write as well.

1. POST {base}/api/agent/runtime/profile with {"runtime": ..., "repo_root": ...}.
2. POST {base}/api/agent/project/probe with repo_root and git_remote: the same repository
   always gets the same project_binding_id.
3. POST {base}/api/agent/bootstrap/context with that project_binding_id.
4. Record code decisions as deltas with delta_type "decision" and retrieval_triggers naming
   files or modules; search with GET {base}/api/workspaces/<workspace_id>/memory/query?q=...
""",
    "method_query_helper": """\
When you do not remember how something is done here, ask instead of guessing endpoints.

1. POST {base}/api/agent/methods/query with {"user_message": "<what the person asked>",
   "task": "<what you are doing>", "runtime": {"type": "codex"}, "max_results": 3}.
2. Follow `results[0].steps` in order; `required_endpoint_urls` are ready to call and
   `required_skills` names the tools to pull first.
3. `result_count` 0: read every card with GET {base}/api/agent/methods, or ask the person.
""",
    "memorycloud_startup_item": """\
A startup item makes every session in a repository start with its memory. Writing it is
startup_setup: only after the person approves.

1. POST {base}/api/agent/project/probe with {"repo_root": ..., "git_remote": ...}; keep
   `project_binding.id`.
2. POST {base}/api/agent/startup-items/install-plan with {"runtime": ...,
   "project_binding_id": ...}. Show the person `copy_for_agent` and the plan's files; never
   write them yourself. `repo_root_exists: false` means the repository is not on this
   machine: probe again from where it is.
3. The person approves with `memorycloud setup approve <startup_item_id>` (or in the TUI);
   the daemon writes the files. The startup item holds no API key (credential_ref only).
4. POST {base}/api/agent/startup-items/confirm with `next.confirm_body`; `verified: true`
   means the files are what was approved.
""",
    "adaptive_memory_writer": """\
1. POST {base}/api/memory/router/select with {"task": ..., "what_i_remember": ...}
   (the forms: GET {base}/api/memory/templates).
2. Fill every field of `form_schema.required` (lists as JSON arrays).
3. POST {base}/api/memory/forms/<run_id>/submit with {"payload": {...}}. A 422 lists
   missing_fields. The memory enters the workspace's context packs. Read the run again with
   GET {base}/api/memory/forms/<run_id>.
""",
    "collaboration_claim": """\
Listing holders needs memory:read as well.

1. Before editing something other agents also work on: POST {base}/api/agent/claims with
   {"resource": "branch:main", "ttl_seconds": 900, "purpose": ...}.
2. A 409 names the holder and the expiry: wait, or take other work.
3. Claiming again while you hold it extends it. Release with
   POST {base}/api/agent/claims/<claim_id>/release; see holders with
   GET {base}/api/agent/claims?resource=...
""",
    "self_memory_sync": """\
Writing needs memory:write as well.

1. Lessons for the next session: POST {base}/api/agent/memory-delta (receipt header) with
   importance 4, or a `handoff_ready` event on your brief.
2. Your own suite: POST {base}/api/memories/<slug>/sync with
   {"events": [{"summary": ..., "event_type": ...}]}; it appends to today's
   memory/YYYY-MM-DD.md and makes a new patch version (GET {base}/api/catalog/<slug>/versions).
""",
}
