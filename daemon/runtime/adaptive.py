"""Adaptive workspace memory: route what an agent remembers to a memory form, then store it.

``POST /api/memory/router/select`` picks a memory type for the task and returns the form to
fill (a "run", ``GET /api/memory/forms/{run_id}``); ``POST /api/memory/forms/{run_id}/submit``
checks the required fields, compiles the form to Markdown and stores it as a workspace memory
that enters context packs. The forms and the router are in ``daemon.runtime.memory_forms``.
"""

from __future__ import annotations

import json
from typing import Any

from daemon.runtime.access import memory_detail, resolve_workspace, workspace_slug
from daemon.runtime.changes import ContextChanges
from daemon.runtime.memory_forms import FORMS_BY_TYPE, MemoryForm, normalize_payload, route
from state.amp_records import AdaptiveRunRecord
from state.errors import Conflict, Forbidden
from state.identities import IdentityRecord
from state.ids import new_id, now_iso
from state.memories import NewMemory
from state.store import Store

VISIBILITIES = ("private", "workspace", "public")


def submit_importance(body: dict[str, Any]) -> int:
    """How important a form submit is for the sync gate: the reference derives it from the
    visibility (4 for workspace, the default, and public; 3 for private); ``importance`` is
    our own optional override."""
    if body.get("importance") is not None:
        return body["importance"]
    return 3 if body["visibility"] == "private" else 4


def _storage_plan(form: MemoryForm) -> dict[str, bool]:
    """What storing this form keeps, as this daemon does it."""
    return {
        "raw_event": True,  # the request is kept with the run
        "structured_json": True,  # the payload is kept in the memory's provenance
        "compiled_markdown": True,
        "vector_index_ready": True,  # every record is in the hybrid index
        "temporal_graph_ready": False,  # no graph store here
        "skill_library_ready": False,  # procedures stay memories, not skills
        "audit_version_log": True,
    }  # every write appends an immutable version


RETRIEVAL_POLICY = {
    "priority": "this workspace and project first, then retrieval_triggers, importance and recency",
    "conflict_policy": "current system and user instructions override stored memory; a newer"
    " version replaces the older one in context packs, which keeps its history",
}


def _compile(form: MemoryForm, payload: dict[str, Any], task: str) -> str:
    lines = [f"# {form.label}", "", f"- memory_type: `{form.memory_type}`", "", "## Task", task, ""]
    for name, value in payload.items():
        lines.append(f"## {name.replace('_', ' ').capitalize()}")
        if isinstance(value, list):
            lines.extend(
                f"- {json.dumps(item, ensure_ascii=False) if isinstance(item, dict) else item}"
                for item in value
            )
        elif isinstance(value, dict):
            lines.append("```json\n" + json.dumps(value, ensure_ascii=False, indent=2) + "\n```")
        else:
            lines.append(str(value))
        lines.append("")
    return "\n".join(lines).strip()


def _text(payload: dict[str, Any], *names: str) -> str | None:
    return next(
        (payload[n].strip() for n in names if isinstance(payload.get(n), str) and payload[n].strip()), None
    )


def _listed(payload: dict[str, Any], *names: str) -> list[Any]:
    return [item for name in names for item in payload.get(name) or []]


class AdaptiveService:
    def __init__(self, store: Store, changes: ContextChanges) -> None:
        self.store = store
        self.changes = changes

    def _router_result(
        self, form: MemoryForm, selection: dict[str, Any], workspace: str, base_url: str
    ) -> dict[str, Any]:
        return {
            **selection,
            "form_schema": form.schema(),
            "provider": "rules",
            "llm_used": False,
            "storage_plan": _storage_plan(form),
            "retrieval_policy": RETRIEVAL_POLICY,
            "integration_recommendation": {
                "schema": "amp.memory-integration-recommendation.v1",
                "enters_context_pack": True,
                "context_pack": f"{base_url}/api/agent/bootstrap/context",
                "search": f"{base_url}/api/workspaces/{workspace}/memory/query?q=",
                "detail": f"{base_url}/api/agent/memories/{{memory_id}}",
                "recommended_skill": "adaptive_memory_writer",
            },
        }

    def select(self, identity: IdentityRecord, body: dict[str, Any], base_url: str) -> dict[str, Any]:
        workspace = resolve_workspace(self.store, identity, body.get("workspace_id"))
        form, secondary, confidence, reason = route(f"{body['task']}\n{body['what_i_remember']}")
        if body.get("memory_type"):
            form = FORMS_BY_TYPE[body["memory_type"]]
            reason, confidence = "memory_type given by the caller", 1.0
        run_id = new_id("arun_")
        selection = {
            "selected_memory_type": form.memory_type,
            "secondary_types": secondary,
            "confidence": confidence,
            "reason": reason,
            "form_schema": form.schema(),
        }
        run = {
            "id": run_id,
            "identity_id": identity["id"],
            "workspace_id": workspace["id"],
            "project_key": body.get("project_key"),
            "task": body["task"],
            "request": body,
            "selection": selection,
            "created_at": now_iso(),
        }
        with self.store.transaction():
            self.store.amp.insert_run(run)
        return {
            "schema": "amp.memory-route.v1",
            "run_id": run_id,
            "workspace": {"id": workspace["id"], "name": workspace["name"]},
            "project_key": body.get("project_key"),
            **self._router_result(form, selection, workspace["id"], base_url),
            "submit": f"{base_url}/api/memory/forms/{run_id}/submit",
        }

    def _run(self, identity: IdentityRecord, run_id: str) -> AdaptiveRunRecord:
        """A run of the caller's workspace (403 for another's, as the reference answers a
        caller without a role there)."""
        run = self.store.amp.run(run_id)
        if identity["kind"] != "owner" and run["workspace_id"] != identity.get("workspace_id"):
            raise Forbidden(f"memory form {run_id} belongs to another workspace")
        return run

    def form(self, identity: IdentityRecord, run_id: str, base_url: str) -> dict[str, Any]:
        """A run as it stands: the form to fill, and ``stored`` once it was submitted."""
        run = self._run(identity, run_id)
        form = FORMS_BY_TYPE[run["selection"]["selected_memory_type"]]
        return {
            "schema": "amp.memory-form.v1",
            "run_id": run_id,
            "selected_memory_type": form.memory_type,
            "form_schema": form.schema(),
            "router_result": self._router_result(form, run["selection"], run["workspace_id"], base_url),
            "status": "stored" if run["status"] == "submitted" else "selected",
            "workspace_id": run["workspace_id"],
            "project_key": run["project_key"],
            "task": run["task"],
            "memory_ids": run["memory_ids"],
            "created_at": run["created_at"],
            "submitted_at": run["submitted_at"],
            "submit": f"{base_url}/api/memory/forms/{run_id}/submit",
        }

    def submit(self, identity: IdentityRecord, run_id: str, body: dict[str, Any]) -> dict[str, Any]:
        run = self._run(identity, run_id)
        if run["status"] == "submitted":
            raise Conflict(
                f"memory form {run_id} was already submitted", details={"memory_ids": run["memory_ids"]}
            )
        form = FORMS_BY_TYPE[run["selection"]["selected_memory_type"]]
        payload = normalize_payload(form, body["payload"])
        triggers = [str(t) for t in payload.get("retrieval_triggers", [])][:20]
        title = (_text(payload, "title", form.title_field) or run["task"])[:200]
        what = run["request"].get("what_i_remember", "")
        summary = (_text(payload, "summary", form.summary_field) or what.strip())[:500]
        content = _compile(form, payload, run["task"])
        # What the reference shows of the memory, kept with it so that reading it later
        # (GET /api/agent/memories/{id}) shows the same.
        view = {
            "type": form.memory_type,
            "summary": summary,
            "entities": _listed(payload, "entities", "participants"),
            "code_refs": _listed(payload, "code_refs", "files_changed", "api_contracts"),
            "tags": list(dict.fromkeys([form.memory_type, *triggers[:8]])),
            "slug": workspace_slug(title),
            "visibility": body["visibility"],
        }
        with self.store.transaction():
            memory = self.store.memories.create(
                NewMemory(
                    namespace=run["workspace_id"],
                    project_key=run["project_key"],
                    kind=form.memory_type,
                    title=title,
                    content=content,
                    source="adaptive_memory",
                    importance=submit_importance(body),
                    triggers=triggers,
                    provenance={
                        "run_id": run_id,
                        "visibility": body["visibility"],
                        "agent": identity["name"],
                        "payload": payload,
                        "view": view,
                    },
                    identity_id=identity["id"],
                )
            )
            self.store.amp.mark_run_submitted(run_id, [memory["id"]])
        self.changes.changed(run["workspace_id"], run["project_key"])
        return {"schema": "amp.adaptive-memory.v1", "run_id": run_id, "memory": memory_detail(memory)}
