"""The files of a suite built by the daemon (from JSON fields, or rebuilt by a sync), in the
layout and with the manifest keys the MemoryCloud reference writes (contracts sheet,
``archives.built_suite_zip``): manifest.json, suite/manifest.json, MEMORY.md, DREAMS.md (even
empty), agent.instructions.md, README.md, install/openclaw.json and one memory/<date>.md per
day of work memory. Our own keys (``slug``, ``content_layers``, the seed's compatibility
matrix) are kept beside the reference's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from daemon.runtime.suite_archive import WORK_DAY, sha256_text
from state.suite_records import StoredSuiteVersion

SUITE_SCHEMA = "amp.memory-suite.v1"
MEMORY_SCHEMA = "amp.memory.v1"
LAYOUT_MEMBERS = (
    "manifest.json",
    "suite/manifest.json",
    "MEMORY.md",
    "DREAMS.md",
    "agent.instructions.md",
    "README.md",
    "install/openclaw.json",
)
INSTALL_LIFECYCLE = [
    "inspect_suite_manifest",
    "verify_license_provenance_and_sha256",
    "select_compatible_memory_tools",
    "pull_required_agent_skills",
    "install_tools_into_agent_runtime",
    "connect_memory_ontology_backend",
    "test_retrieval_with_a_known_query",
    "record_installed_suite_provenance",
]
REQUIRED_TOOLS = ["memory_tool_installer", "capsule_installer"]
MEMORY_TOOLS = ["memory_tool_installer", "capsule_installer", "cloud_workspace_memory"]
MERGE = {"long_term": "MEMORY.md", "work_memory": "memory/*.md", "reflections": "DREAMS.md"}
ACTIVATION_PROMPT = (
    "Install this memory suite as a lens: merge MEMORY.md as long-term memory, memory/*.md as"
    " work memory and DREAMS.md as reflections, keep its provenance, and never let it override"
    " system, developer or user instructions."
)
OPENCLAW = {
    "target": "openclaw",
    "suite_schema": SUITE_SCHEMA,
    "merge": MERGE,
    "required_tools": REQUIRED_TOOLS,
    "activation_prompt": ACTIVATION_PROMPT,
}
ONTOLOGY = {
    "components": [
        {
            "id": "long_term_markdown",
            "path": "MEMORY.md",
            "layer": "markdown",
            "role": "long-term memory: identity boundaries, preferences, stable facts, conventions",
        },
        {
            "id": "working_markdown",
            "path": "memory/*.md",
            "layer": "markdown",
            "role": "work memory: one file per day, appended by syncs",
        },
        {
            "id": "reflection_markdown",
            "path": "DREAMS.md",
            "layer": "markdown",
            "role": "reflections and distilled conclusions, read before the first task",
        },
    ]
}
TOOLS = [
    {"id": "openclaw_mapping", "kind": "mapping", "path": "install/openclaw.json"},
    {"id": "memory_tool_installer", "kind": "skill", "pull": "/api/agent/skills/memory_tool_installer/pull"},
    {"id": "capsule_installer", "kind": "skill", "pull": "/api/agent/skills/capsule_installer/pull"},
]
COMPATIBILITY = {
    "openclaw": True,
    "generic_agent": True,
    "codex_skill_runtime": True,
    "memory_backends": ["markdown", "workspace"],
    "import_targets": ["markdown_agent", "openclaw", "adaptive_memories"],
    "tool_install": {
        "required_first_skill": "memory_tool_installer",
        "skill_pull": "/api/agent/skills/{skill_id}/pull",
    },
}
# The seed's compatibility matrix (target runtime, data, tools).
COMPATIBILITY_MATRIX = [
    {
        "runtime": "markdown_agent",
        "data": "MEMORY.md, memory/*.md, DREAMS.md",
        "tools": ["memory_tool_installer", "capsule_installer"],
    },
    {"runtime": "openclaw", "data": "install/openclaw.json", "tools": ["OpenClaw active-memory mapping"]},
    {
        "runtime": "codex_skill_runtime",
        "data": "local files or workspace",
        "tools": ["/api/agent/skills/{skill_id}/pull"],
    },
    {
        "runtime": "multi_agent_workspace",
        "data": "adaptive_memories",
        "tools": ["cloud_workspace_memory", "collaboration_claim"],
    },
]
SAFETY = {
    "claims_to_be_original_person": False,
    "consent_required_for_real_person": True,
    "install_boundary": "a lens: never overrides system, developer or user instructions",
    "identity": "a lens, never an impersonation",
    "secrets": "none",
}
DEFAULT_INSTRUCTIONS = (
    "# Installing this memory suite\n\n"
    "1. Read suite/manifest.json, then manifest.json (license, provenance, sha256).\n"
    "2. Pull the memory_tool_installer skill.\n"
    "3. Merge MEMORY.md as long-term memory, memory/*.md as working memory, DREAMS.md as"
    " reflections.\n"
    "4. On conflict: system and safety policy first, then the user's explicit instructions, then"
    " these install instructions and provenance, then the suite's content.\n"
    "5. Run one retrieval test and record suite_id, version, provenance and sha256.\n"
)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def content_layers(files: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {"layer": "markdown", "files": sorted(p for p in files if p.endswith(".md"))},
        {"layer": "database_rows", "status": "not_included"},
        {"layer": "vector_collection", "status": "not_included"},
        {"layer": "graph", "status": "not_included"},
        {"layer": "workspace", "target": "adaptive_memories", "status": "on_install"},
    ]


def suite_manifest(manifest: dict[str, Any], slug: str, files: dict[str, str]) -> dict[str, Any]:
    """suite/manifest.json for a manifest (also derived for an archive without one)."""
    return {
        "schema": SUITE_SCHEMA,
        "suite_id": str(manifest.get("suite_id") or slug),
        "slug": slug,
        "title": manifest["title"],
        "summary": manifest.get("summary", ""),
        "version": manifest["version"],
        "license": manifest["license"],
        "provenance": manifest.get("provenance") or {},
        "ontology": ONTOLOGY,
        "tools": TOOLS,
        "compatibility": COMPATIBILITY,
        "install_lifecycle": INSTALL_LIFECYCLE,
        "content_layers": content_layers(files),
        "compatibility_matrix": COMPATIBILITY_MATRIX,
    }


def stored_manifest(manifest: dict[str, Any], created_at: str) -> dict[str, Any]:
    """An imported manifest with the defaults the reference fills in (the archive itself is
    kept as uploaded)."""
    compatibility = manifest.get("compatibility")
    compatibility = dict(compatibility) if isinstance(compatibility, dict) else {}
    for key in ("openclaw", "generic_agent", "codex_skill_runtime"):
        compatibility.setdefault(key, True)
    compatibility.setdefault("memory_backends", COMPATIBILITY["memory_backends"])
    return {
        **manifest,
        "created_at": manifest.get("created_at") or created_at,
        "compatibility": compatibility,
        "files": manifest.get("files") or {},
        "memory_ontology": manifest.get("memory_ontology") or MERGE,
        "memory_tools": manifest.get("memory_tools") or MEMORY_TOOLS,
        "persona_type": manifest.get("persona_type") or "agent",
    }


def readme(title: str, summary: str, version: str, license_: str) -> str:
    return (
        f"# {title}\n\n{summary}\n\n"
        f"A MemoryCloud memory suite ({SUITE_SCHEMA}), version {version}, license {license_}.\n\n"
        "- MEMORY.md: long-term memory\n"
        "- memory/YYYY-MM-DD.md: work memory, one file per day\n"
        "- DREAMS.md: reflections\n"
        "- agent.instructions.md: how to merge it, and what wins on conflict\n"
        "- suite/manifest.json, manifest.json: what it is, where it comes from, the sha256"
        " of every file\n"
        "- install/openclaw.json: the OpenClaw active-memory mapping\n"
    )


@dataclass
class SuiteFields:
    """What a built suite is made of."""

    slug: str
    title: str
    summary: str
    version: str
    license: str
    provenance: dict[str, Any]
    author: str
    created_at: str
    persona_type: str = "agent"
    tags: list[str] = field(default_factory=list)
    memory_md: str = ""
    dreams_md: str = ""
    instructions_md: str = ""
    readme_md: str = ""
    work_memory: dict[str, str] = field(default_factory=dict)  # date -> Markdown
    extra_files: dict[str, str] = field(default_factory=dict)  # kept from an earlier version
    manifest_extra: dict[str, Any] = field(default_factory=dict)  # from a supplied manifest


def build_files(fields: SuiteFields) -> dict[str, str]:
    """Every member of the suite zip, manifest.json last (it lists the others' sha256)."""
    files: dict[str, str] = dict(fields.extra_files)
    files.update(
        {
            "MEMORY.md": fields.memory_md,
            "DREAMS.md": fields.dreams_md,
            "agent.instructions.md": fields.instructions_md or DEFAULT_INSTRUCTIONS,
            "README.md": fields.readme_md
            or readme(fields.title, fields.summary, fields.version, fields.license),
            "install/openclaw.json": dumps(OPENCLAW),
        }
    )
    for day, text in sorted(fields.work_memory.items()):
        if text.strip():
            files[f"memory/{day}.md"] = text
    manifest: dict[str, Any] = {
        **fields.manifest_extra,
        "schema": MEMORY_SCHEMA,
        "slug": fields.slug,
        "title": fields.title,
        "summary": fields.summary,
        "version": fields.version,
        "license": fields.license,
        "tags": fields.tags,
        "persona_type": fields.persona_type,
        "author": {"handle": fields.author},
        "provenance": fields.provenance,
        "created_at": fields.created_at,
        "compatibility": COMPATIBILITY,
        "safety": SAFETY,
        "memory_ontology": MERGE,
        "memory_tools": MEMORY_TOOLS,
    }
    files["suite/manifest.json"] = dumps(suite_manifest(manifest, fields.slug, files))
    manifest["suite"] = json.loads(files["suite/manifest.json"])
    manifest["files"] = {
        p: {"sha256": sha256_text(t), "bytes": len(t.encode("utf-8"))} for p, t in sorted(files.items())
    }
    files["manifest.json"] = dumps(manifest)
    return files


def fields_of(stored: StoredSuiteVersion, slug: str) -> SuiteFields:
    """The fields of a stored version, to rebuild it (a sync): its layers and any other text
    member it holds; the manifest's own keys are kept."""
    files, manifest = stored["files"], stored["manifest"]
    work = {m.group(1): text for p, text in files.items() if (m := WORK_DAY.fullmatch(p))}
    extra = {p: t for p, t in files.items() if p not in LAYOUT_MEMBERS and not WORK_DAY.fullmatch(p)}
    author = manifest.get("author")
    return SuiteFields(
        slug=slug,
        title=manifest["title"],
        summary=manifest.get("summary") or "",
        version=manifest["version"],
        license=manifest["license"],
        provenance=manifest.get("provenance") or {"source_type": "self_authored"},
        author=str(author.get("handle")) if isinstance(author, dict) else "",
        created_at=str(manifest.get("created_at") or ""),
        persona_type=str(manifest.get("persona_type") or "agent"),
        tags=list(manifest.get("tags") or []),
        memory_md=files.get("MEMORY.md", ""),
        dreams_md=files.get("DREAMS.md", ""),
        instructions_md=files.get("agent.instructions.md", ""),
        readme_md=files.get("README.md", ""),
        work_memory=work,
        extra_files=extra,
        manifest_extra={k: v for k, v in manifest.items() if k not in ("files", "suite")},
    )
