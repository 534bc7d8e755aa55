"""The memory forms of adaptive memory (``GET /api/memory/templates``) and the rule-based
router that picks one for what an agent remembers (keyword cues in English and Chinese, so
it works offline).

The ten memory types and the optional field names are the MemoryCloud reference's; each
form requires only the fields this daemon needs to store a useful memory (the reference asks
for more, e.g. a decision's consequences: they are accepted here and optional).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from state.errors import ValidationFailed

STRING, STRINGS, OBJECTS = "string", "list of strings", "list of objects or strings"
FIELD_KINDS: dict[str, str] = {
    **{
        name: STRINGS
        for name in (
            "retrieval_triggers",
            "steps",
            "next_actions",
            "code_refs",
            "options_considered",
            "consequences",
            "prevention",
            "preconditions",
            "success_criteria",
            "failure_modes",
            "stable_preferences",
            "boundaries",
            "completed_steps",
            "blockers",
            "goals",
            "architecture",
            "risks",
            "tests",
            "facts",
            "commitments",
            "open_questions",
            "handoff",
        )
    },
    **{
        name: OBJECTS
        for name in ("files_changed", "api_contracts", "entities", "relations", "participants", "ownership")
    },
}


@dataclass(frozen=True)
class MemoryForm:
    memory_type: str
    label: str
    when: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    cues: tuple[str, ...]
    title_field: str
    summary_field: str

    def schema(self) -> dict[str, Any]:
        """The form to fill: {memory_type, label, when, required, fields}."""
        return {"memory_type": self.memory_type, **self.template()}

    def template(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "when": self.when,
            "required": list(self.required),
            "fields": {name: FIELD_KINDS.get(name, STRING) for name in (*self.required, *self.optional)},
        }


FORMS: tuple[MemoryForm, ...] = (
    MemoryForm(
        "decision_memory",
        "Decision",
        "a choice between options and why it was made",
        ("decision", "context", "rationale", "retrieval_triggers"),
        ("options_considered", "consequences"),
        (
            "decid",
            "decision",
            "chose",
            "choose",
            "instead of",
            "trade-off",
            "tradeoff",
            "决定",
            "选择",
            "取舍",
            "方案",
        ),
        "decision",
        "rationale",
    ),
    MemoryForm(
        "failure_memory",
        "Failure",
        "something broke, and what fixed or would fix it",
        ("failure", "root_cause", "fix", "retrieval_triggers"),
        ("prevention",),
        (
            "fail",
            "error",
            "bug",
            "crash",
            "broke",
            "regression",
            "rollback",
            "失败",
            "错误",
            "报错",
            "崩溃",
            "回滚",
        ),
        "failure",
        "root_cause",
    ),
    MemoryForm(
        "procedure_memory",
        "Procedure",
        "how to do a recurring task, step by step",
        ("procedure", "steps", "retrieval_triggers"),
        ("skill_name", "preconditions", "success_criteria", "failure_modes"),
        (
            "how to",
            "steps",
            "procedure",
            "workflow",
            "run ",
            "deploy",
            "release",
            "步骤",
            "流程",
            "部署",
            "发布",
        ),
        "procedure",
        "steps",
    ),
    MemoryForm(
        "profile_memory",
        "Preference or profile",
        "a stable preference or fact about a person",
        ("subject", "preference", "retrieval_triggers"),
        ("stable_preferences", "boundaries", "confidence"),
        ("prefer", "likes", "dislike", "always", "never", "style", "偏好", "喜欢", "习惯", "总是", "不要"),
        "subject",
        "preference",
    ),
    MemoryForm(
        "code_memory",
        "Code knowledge",
        "where something lives in the code and how it works",
        ("subject", "code_refs", "explanation", "retrieval_triggers"),
        ("project", "task", "files_changed", "api_contracts", "tests", "risks"),
        (
            "function",
            "module",
            "class",
            "file",
            "endpoint",
            "api",
            "schema",
            ".py",
            ".ts",
            "代码",
            "函数",
            "模块",
            "接口",
        ),
        "subject",
        "explanation",
    ),
    MemoryForm(
        "task_execution_memory",
        "Task progress",
        "where a task stands and what comes next",
        ("task_goal", "current_state", "next_actions", "retrieval_triggers"),
        ("completed_steps", "blockers"),
        ("progress", "todo", "next", "remaining", "done", "wip", "进度", "下一步", "待办", "完成"),
        "task_goal",
        "current_state",
    ),
    MemoryForm(
        "entity_memory",
        "Entities and relations",
        "people, organisations, services or concepts and how they relate",
        ("entities", "relations", "retrieval_triggers"),
        ("time_scope",),
        (
            "relation",
            "depends on",
            "dependency",
            "organization",
            "organisation",
            "entity",
            "关系",
            "实体",
            "组织",
            "依赖",
        ),
        "entities",
        "relations",
    ),
    MemoryForm(
        "conversation_memory",
        "Conversation",
        "lasting facts and commitments from a conversation",
        ("participants", "facts", "retrieval_triggers"),
        ("commitments", "open_questions"),
        ("conversation", "promised", "commitment", "user said", "对话", "承诺", "用户说"),
        "facts",
        "facts",
    ),
    MemoryForm(
        "collaboration_memory",
        "Collaboration",
        "who works on what, shared state and hand-offs between people and agents",
        ("participants", "shared_state", "retrieval_triggers"),
        ("workspace", "ownership", "handoff"),
        (
            "collaborat",
            "multi-agent",
            "shared state",
            "ownership",
            "permission",
            "协作",
            "多人",
            "共享",
            "权限",
            "分工",
        ),
        "shared_state",
        "shared_state",
    ),
    MemoryForm(
        "project_memory",
        "Project fact",
        "a standing fact or convention of the project",
        ("project", "fact", "retrieval_triggers"),
        ("goals", "architecture", "current_state", "risks"),
        (),
        "project",
        "fact",
    ),
)
FORMS_BY_TYPE = {form.memory_type: form for form in FORMS}


def templates() -> dict[str, Any]:
    """Every form, keyed by memory type (the reference's items object)."""
    return {form.memory_type: form.template() for form in FORMS}


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


def normalize_payload(form: MemoryForm, payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with list fields as lists; 422 naming the missing required fields, or a
    list field of the wrong shape."""
    missing = [name for name in form.required if payload.get(name) in (None, "", [], {})]
    if missing:
        raise ValidationFailed(
            f"the form is missing required fields: {', '.join(missing)}", details={"missing_fields": missing}
        )
    out = dict(payload)
    for name, kind in FIELD_KINDS.items():
        if name not in out or kind == STRING:
            continue
        value = out[name]
        if isinstance(value, (str, dict)):
            out[name] = value = [value]
        allowed = (str,) if kind == STRINGS else (str, dict)
        if not isinstance(value, list) or not all(isinstance(v, allowed) for v in value):
            shape = "a string or a list of strings" if kind == STRINGS else "a list of objects or strings"
            raise ValidationFailed(
                f"field 'payload.{name}' must be {shape}", details={"field": f"payload.{name}"}
            )
    return out
