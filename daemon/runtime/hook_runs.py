"""Whether a startup item's hook has really run, and what the person still has to do if not.

Writing the hook files proves nothing: Codex needs a trusted project and the hook approved in
``/hooks``, Gemini CLI a trusted folder, Claude Code a trusted workspace. The launcher names
itself when a runtime's hook starts it (``X-MemoryCloud-Launcher: session-start;
runtime=codex``); the daemon records those calls (the context pack at session start, the
checkpoint delta before compaction) per binding, runtime and event. An agent that calls the
bootstrap endpoint itself sends no such header and is not counted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from startup_items.next_steps import next_steps
from startup_items.runtimes import RUNTIMES
from state.amp_records import ReceiptRecord
from state.identities import IdentityRecord
from state.startup_records import StartupPlanRecord
from state.store import Store

HEADER = "X-MemoryCloud-Launcher"
EVENTS = ("session-start", "pre-compact")


def parse_header(value: str | None) -> tuple[str | None, dict[str, str]]:
    """``"session-start; runtime=codex"`` -> ("session-start", {"runtime": "codex"}); an unknown
    event is (None, {})."""
    if not value:
        return None, {}
    event, *params = [part.strip() for part in value.split(";")]
    if event not in EVENTS:
        return None, {}
    pairs = dict(p.split("=", 1) for p in params if "=" in p)
    return event, {k.strip(): v.strip() for k, v in pairs.items()}


def source_of(reason: str | None) -> str:
    """The SessionStart source the launcher put into ``reason`` (agent_startup, session_resume)."""
    if not reason or reason == "agent_startup":
        return "startup"
    return reason.removeprefix("session_")


def _ago(stamp: str, now: datetime) -> str:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    minutes = int(max(0.0, (now - moment).total_seconds()) // 60)
    if minutes < 1:
        return "just now"
    if minutes < 120:
        return f"{minutes} min ago"
    if minutes < 48 * 60:
        return f"{minutes // 60} h ago"
    return f"{minutes // (24 * 60)} d ago"


class HookRunService:
    def __init__(self, store: Store) -> None:
        self.store = store

    def record_session_start(
        self, identity: IdentityRecord, header: str | None, pack: dict[str, Any]
    ) -> None:
        """After a context pack was built: count it if a runtime's hook asked for it."""
        event, _ = parse_header(header)
        binding_id = (pack.get("receipt") or {}).get("project_binding_id")
        if event != "session-start" or not binding_id:
            return
        with self.store.transaction():
            self.store.startup.record_hook_run(
                binding_id, pack["runtime"], event, source_of(pack.get("reason")), identity["id"]
            )

    def record_checkpoint(self, identity: IdentityRecord, header: str | None, receipt: ReceiptRecord) -> None:
        """After a memory delta was written: count it if the PreCompact hook sent it."""
        event, params = parse_header(header)
        if event != "pre-compact":
            return
        # The receipt names its pack, and the pack the binding and runtime it was built for.
        pack = self.store.amp.pack(receipt["context_pack_id"])
        binding_id = pack["project_binding_id"]
        runtime = params.get("runtime") or pack["runtime"]
        if not binding_id or runtime is None or runtime not in RUNTIMES:
            return
        with self.store.transaction():
            self.store.startup.record_hook_run(binding_id, runtime, event, None, identity["id"])

    def describe(self, plan: StartupPlanRecord, now: datetime | None = None) -> dict[str, Any]:
        """The plan's hook as the person is shown it: last run, or what is still to do."""
        runtime = plan["runtime"]
        spec = RUNTIMES.get(runtime)
        steps = next_steps(runtime)
        runs = self.store.startup.hook_runs(plan["binding_id"], runtime)
        out: dict[str, Any] = {
            "has_hook": bool(spec and spec.has_hook),
            "runs": runs,
            "todo": steps.todo,
            "memory_arrives": steps.memory_arrives,
        }
        if not out["has_hook"]:
            out.update(ran=None, text=f"no session hook: {steps.memory_arrives}")
            return out
        start = runs.get("session-start")
        if start is None:
            out.update(ran=False, last_run_at=None, text=f"hook has not run yet: {steps.todo}")
            return out
        when = _ago(start["last_run_at"], now or datetime.now(UTC))
        out.update(
            ran=True,
            last_run_at=start["last_run_at"],
            source=start["source"],
            text=f"hook last ran {when} ({start['source']})",
        )
        return out
