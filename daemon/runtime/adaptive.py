"""Adaptive workspace memory: route what an agent remembers to a memory form, then store it.

``POST /api/memory/router/select`` picks a memory type for the task and returns the form to
fill (a "run"); ``POST /api/memory/forms/{run_id}/submit`` checks the required fields,
compiles the form to Markdown and stores it as a workspace memory that enters context packs.
The router is rule-based (keyword cues in English and Chinese), so it works offline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from daemon.runtime.access import public_memory, resolve_workspace
from daemon.runtime.changes import ContextChanges
from daemon.validation import ValidationFailed
from state.errors import Conflict, NotFound
from state.ids import new_id, now_iso
from state.memories import NewMemory
from state.store import Store


@dataclass(frozen=True)
class MemoryForm:
    memory_type: str
    label: str
    when: str
    required: tuple[str, ...]
    cues: tuple[str, ...]
    title_field: str
    summary_field: str


FORMS: tuple[MemoryForm, ...] = (
    MemoryForm("decision_memory", "Decision", "a choice between options and why it was made",
               ("decision", "context", "rationale", "retrieval_triggers"),
               ("decid", "decision", "chose", "choose", "instead of", "trade-off", "tradeoff",
                "决定", "选择", "取舍", "方案"), "decision", "rationale"),
    MemoryForm("failure_memory", "Failure", "something broke, and what fixed or would fix it",
               ("failure", "root_cause", "fix", "retrieval_triggers"),
               ("fail", "error", "bug", "crash", "broke", "regression", "rollback", "失败", "错误",
                "报错", "崩溃", "回滚"), "failure", "root_cause"),
    MemoryForm("procedure_memory", "Procedure", "how to do a recurring task, step by step",
               ("procedure", "steps", "retrieval_triggers"),
               ("how to", "steps", "procedure", "workflow", "run ", "deploy", "release", "步骤",
                "流程", "部署", "发布"), "procedure", "steps"),
    MemoryForm("profile_memory", "Preference or profile", "a stable preference or fact about a person",
               ("subject", "preference", "retrieval_triggers"),
               ("prefer", "likes", "dislike", "always", "never", "style", "偏好", "喜欢", "习惯",
                "总是", "不要"), "subject", "preference"),
    MemoryForm("code_memory", "Code knowledge", "where something lives in the code and how it works",
               ("subject", "code_refs", "explanation", "retrieval_triggers"),
               ("function", "module", "class", "file", "endpoint", "api", "schema", ".py", ".ts",
                "代码", "函数", "模块", "接口"), "subject", "explanation"),
    MemoryForm("task_execution_memory", "Task progress", "where a task stands and what comes next",
               ("task_goal", "current_state", "next_actions", "retrieval_triggers"),
               ("progress", "todo", "next", "remaining", "done", "wip", "进度", "下一步", "待办",
                "完成"), "task_goal", "current_state"),
    MemoryForm("project_memory", "Project fact", "a standing fact or convention of the project",
               ("project", "fact", "retrieval_triggers"), (), "project", "fact"),
)
FORMS_BY_TYPE = {form.memory_type: form for form in FORMS}
LIST_FIELDS = {"retrieval_triggers", "steps", "next_actions", "code_refs", "options_considered"}


def route(text: str) -> tuple[MemoryForm, list[str], float, str]:
    """The form whose cues occur most in the text; project facts when nothing matches."""
    lowered = text.lower()
    scored = sorted(
        ((sum(lowered.count(cue) for cue in form.cues), index, form) for index, form in enumerate(FORMS)),
        key=lambda item: (-item[0], item[1]),
    )
    best_score, _, best = scored[0]
    if best_score == 0:
        return FORMS_BY_TYPE["project_memory"], [], 0.4, "no cue matched: stored as a project fact"
    secondary = [form.memory_type for score, _, form in scored[1:4] if score > 0]
    confidence = round(min(0.95, 0.5 + 0.1 * best_score), 2)
    return best, secondary, confidence, f"{best_score} cue(s) for {best.label.lower()}"


def form_schema(form: MemoryForm) -> dict[str, Any]:
    return {
        "memory_type": form.memory_type,
        "label": form.label,
        "when": form.when,
        "required": list(form.required),
        "fields": {name: ("list of strings" if name in LIST_FIELDS else "string")
                   for name in form.required},
    }


def _compile(form: MemoryForm, payload: dict[str, Any], task: str) -> str:
    lines = [f"# {form.label}", "", f"- memory_type: `{form.memory_type}`", "", "## Task", task, ""]
    for name, value in payload.items():
        lines.append(f"## {name.replace('_', ' ').capitalize()}")
        if isinstance(value, list):
            lines.extend(f"- {item}" for item in value)
        elif isinstance(value, (dict,)):
            lines.append("```json\n" + json.dumps(value, ensure_ascii=False, indent=2) + "\n```")
        else:
            lines.append(str(value))
        lines.append("")
    return "\n".join(lines).strip()


class AdaptiveService:
    def __init__(self, store: Store, changes: ContextChanges) -> None:
        self.store = store
        self.changes = changes

    def select(self, identity: dict[str, Any], body: dict[str, Any], base_url: str) -> dict[str, Any]:
        workspace = resolve_workspace(self.store, identity, body.get("workspace_id"))
        form, secondary, confidence, reason = route(f"{body['task']}\n{body['what_i_remember']}")
        if body.get("memory_type"):
            form = FORMS_BY_TYPE[body["memory_type"]]
            reason, confidence = "memory_type given by the caller", 1.0
        run_id = new_id("arun_")
        selection = {"selected_memory_type": form.memory_type, "secondary_types": secondary,
                     "confidence": confidence, "reason": reason, "form_schema": form_schema(form)}
        with self.store.transaction():
            self.store.amp.insert_run({
                "id": run_id, "identity_id": identity["id"], "workspace_id": workspace["id"],
                "project_key": body.get("project_key"), "task": body["task"], "request": body,
                "selection": selection, "created_at": now_iso()})
        return {
            "schema": "amp.memory-route.v1",
            "run_id": run_id,
            "workspace": {"id": workspace["id"], "name": workspace["name"]},
            "project_key": body.get("project_key"),
            **selection,
            "provider": "rules",
            "llm_used": False,
            "submit": f"{base_url}/api/memory/forms/{run_id}/submit",
        }

    def prepare_submit(self, identity: dict[str, Any], run_id: str,
                       body: dict[str, Any]) -> tuple[dict[str, Any], MemoryForm, dict[str, Any]]:
        """Every check of a submit, without writing: (run, form, normalized payload).

        The sync gate runs between this and the write, so a held-back write is always one
        that would succeed."""
        run = self.store.amp.run(run_id)
        if identity["kind"] != "owner" and run["workspace_id"] != identity.get("workspace_id"):
            raise NotFound(f"memory form {run_id} not found")
        if run["status"] == "submitted":
            raise Conflict(f"memory form {run_id} was already submitted",
                           details={"memory_ids": run["memory_ids"]})
        form = FORMS_BY_TYPE[run["selection"]["selected_memory_type"]]
        payload = body["payload"]
        missing = [name for name in form.required if payload.get(name) in (None, "", [], {})]
        if missing:
            raise ValidationFailed(f"the form is missing required fields: {', '.join(missing)}",
                                   details={"missing_fields": missing})
        for name in LIST_FIELDS & set(payload):
            value = payload[name]
            if isinstance(value, str):
                payload[name] = value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValidationFailed(
                    f"field 'payload.{name}' must be a string or a list of strings",
                    details={"field": f"payload.{name}"})
        return run, form, payload

    def submit(self, identity: dict[str, Any], run_id: str, body: dict[str, Any]) -> dict[str, Any]:
        run, form, payload = self.prepare_submit(identity, run_id, body)
        triggers = payload.get("retrieval_triggers", [])[:20]
        title = str(payload.get(form.title_field) or run["task"])[:200]
        importance = body["importance"]
        with self.store.transaction():
            memory = self.store.memories.create(NewMemory(
                namespace=run["workspace_id"], project_key=run["project_key"],
                kind=form.memory_type, title=title,
                content=_compile(form, payload, run["task"]), source="adaptive_memory",
                importance=importance, triggers=triggers,
                provenance={"run_id": run_id, "visibility": body["visibility"],
                            "agent": identity["name"]},
                identity_id=identity["id"]))
            self.store.amp.mark_run_submitted(run_id, [memory["id"]])
        self.changes.changed(run["workspace_id"], run["project_key"])
        return {"schema": "amp.adaptive-memory.v1", "run_id": run_id, "memory": public_memory(memory)}
