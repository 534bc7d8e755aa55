"""``memorycloud setup ...`` and ``memorycloud connect``: startup items, as a person runs them."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

from daemon.cli import mcp
from daemon.cli.context import add_command, client, emit
from daemon.cli.service import service_hint
from startup_items.next_steps import next_steps
from startup_items.plan_files import ACTIVE, file_state, files_by_path
from startup_items.runtimes import RUNTIMES
from state.errors import MemoryCloudError
from state.paths import Paths

# Runtimes whose agent reaches its memory through the MCP server `connect` registers: Codex
# (its sandbox refuses the launcher's connection; MCP servers run outside it), Cursor (no hook).
MCP_RUNTIMES = ("codex", "cursor")


def plan_text(plan: dict[str, Any], *, contents: bool = False) -> str:
    lines = [
        f"plan {plan['plan_id']}  [{plan['status']}]  {plan['runtime']} in {plan['repo_root']}",
        f"project {plan['project_key']} ({plan['project_binding_id']}), key via credential_ref"
        f" '{plan['credential_ref']}' (no key is written to the repository)",
    ]
    for path, items in files_by_path(plan["files"]):
        state = file_state(plan["status"], items)
        kinds = ", ".join(dict.fromkeys(i["kind"] for i in items))
        purposes = "; ".join(dict.fromkeys(i["purpose"] for i in items))
        lines.append(f"  {state:<9} {path}  ({kinds}: {purposes})")
        for item in items:
            if item.get("error"):
                lines.append(f"            ! {item['error']}")
            if contents and item["changes"]:
                lines.extend("            | " + line for line in item["content"].splitlines()[:40])
    for conflict in plan.get("conflicts", []):
        lines.append(f"  CONFLICT  {conflict['path']}: {conflict['reason']}")
    if plan.get("hook") and plan["status"] in ACTIVE:
        lines.append(f"  {plan['hook']['text']}")
    return "\n".join(lines)


def cmd_setup_list(args: argparse.Namespace, paths: Paths) -> int:
    plans = client(paths).get("/api/local/startup/plans", **({"status": args.status} if args.status else {}))[
        "plans"
    ]
    text = (
        "\n".join(
            f"{p['plan_id']}  {p['status']:<16} {p['runtime']:<12} {p['repo_root']}"
            + (f"\n    {p['hook']['text']}" if p.get("hook") and p["status"] in ACTIVE else "")
            for p in plans
        )
        or "no startup-item plans"
    )
    emit(args, plans, text)
    return 0


def cmd_setup_show(args: argparse.Namespace, paths: Paths) -> int:
    plan = client(paths).get(f"/api/local/startup/plans/{args.plan}")
    emit(args, plan, plan_text(plan, contents=True))
    return 0


def _decide(args: argparse.Namespace, paths: Paths, action: str, body: dict | None = None) -> int:
    result = client(paths).post(f"/api/local/startup/plans/{args.plan}/{action}", body)
    emit(args, result, plan_text(result))
    return 1 if result["status"] == "conflict" else 0


def cmd_setup_approve(args: argparse.Namespace, paths: Paths) -> int:
    return _decide(args, paths, "approve", {"overwrite": args.overwrite})


def cmd_setup_reject(args: argparse.Namespace, paths: Paths) -> int:
    return _decide(args, paths, "reject")


def cmd_setup_remove(args: argparse.Namespace, paths: Paths) -> int:
    owner = client(paths)
    result = owner.post(f"/api/local/startup/plans/{args.plan}/remove")
    text = plan_text(result)
    runtime = result["runtime"]
    if runtime in MCP_RUNTIMES:
        # `connect` registered the MCP server; the last plan that needs it takes it away again
        # (Cursor's is per repository, Codex's in the user's config serves every repository).
        others = [
            p
            for p in owner.get("/api/local/startup/plans")["plans"]
            if p["status"] in ACTIVE
            and p["runtime"] == runtime
            and (runtime == "codex" or p["repo_root"] == result["repo_root"])
        ]
        if not others:
            result["mcp"] = unregister_mcp(runtime, Path(result["repo_root"]), paths)
            text += f"\nMCP server: {result['mcp']['text']}"
    emit(args, result, text)
    return 0


def cmd_setup_conflicts(args: argparse.Namespace, paths: Paths) -> int:
    conflicts = client(paths).get("/api/local/conflicts")["conflicts"]
    text = (
        "\n".join(f"{c['id']}  {c['kind']}  {c['path']}: {c['detail'].get('reason', '')}" for c in conflicts)
        or "no open conflicts"
    )
    emit(args, conflicts, text)
    return 0


def _git(repo: Path, *argv: str) -> str | None:
    try:
        out = subprocess.run(["git", *argv], cwd=repo, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def detect_runtime(repo: Path) -> str:
    """A guess from what the repository already has; generic when nothing tells."""
    for marker, runtime in (
        (".claude", "claude_code"),
        ("CLAUDE.md", "claude_code"),
        (".codex", "codex"),
        (".gemini", "gemini_cli"),
        ("GEMINI.md", "gemini_cli"),
        (".cursor", "cursor"),
        ("MEMORY.md", "openclaw"),
    ):
        if (repo / marker).exists():
            return runtime
    return "generic"


def cmd_connect(args: argparse.Namespace, paths: Paths) -> int:
    """Quick Connect for a person: profile, probe, plan, show it, ask, approve, confirm."""
    start = Path(args.repo or ".").resolve()
    repo = Path(_git(start, "rev-parse", "--show-toplevel") or start)
    runtime = args.runtime or detect_runtime(repo)
    remote = _git(repo, "config", "--get", "remote.origin.url")
    owner = client(paths, start=True)
    owner.post(
        "/api/agent/runtime/profile",
        {"runtime": runtime, "repo_root": str(repo), **({"git_remote": remote} if remote else {})},
    )
    probe = owner.post(
        "/api/agent/project/probe",
        {"runtime": runtime, "repo_root": str(repo), **({"git_remote": remote} if remote else {})},
    )
    plan = owner.post(
        "/api/agent/startup-items/install-plan",
        {
            "runtime": runtime,
            "project_binding_id": probe["project_binding_id"],
            "credential_ref": args.credential_ref,
        },
    )
    if not args.json:
        print(plan_text(plan, contents=args.show_contents))
    if not args.yes:
        if not sys.stdin.isatty():
            emit(
                args,
                plan,
                f"not approved (no terminal to ask): run `memorycloud setup approve {plan['plan_id']}`",
            )
            return 0
        answer = input("Write these files? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            owner.post(f"/api/local/startup/plans/{plan['plan_id']}/reject")
            emit(args, {**plan, "status": "rejected"}, "rejected: nothing was written")
            return 0
    result = owner.post(f"/api/local/startup/plans/{plan['plan_id']}/approve")
    if result["status"] == "conflict":
        emit(args, result, plan_text(result) + "\nnothing was written; see `memorycloud setup conflicts`")
        return 1
    confirmed = owner.post(
        "/api/agent/startup-items/confirm",
        {"plan_id": plan["plan_id"], "observed_signature": plan["signature"]},
    )
    runtime = plan["runtime"]  # resolved: an alias or an unknown runtime named by the person
    registration = register_mcp(runtime, repo, paths) if runtime in MCP_RUNTIMES else None
    steps = next_steps(runtime)
    lines = [f"{confirmed['status']}: the files are written in {repo}."]
    if registration is not None:
        lines.append(f"MCP server: {registration['text']}")
    lines += [
        f"Sessions get their memory this way: {steps.memory_arrives}.",
        f"Still to do: {steps.todo}.",
        "`memorycloud setup list` shows when the hook last ran." if RUNTIMES[runtime].has_hook else "",
    ]
    # After a reboot nothing starts the daemon, and every session falls back to the cache.
    hint = service_hint(paths)
    if hint:
        lines.append(f"Tip: {hint}.")
    emit(
        args,
        {
            **result,
            "status": confirmed["status"],
            "next_steps": steps.todo,
            "memory_arrives": steps.memory_arrives,
            "service_hint": hint,
            **({"mcp": registration} if registration else {}),
        },
        "\n".join(line for line in lines if line),
    )
    return 0


def unregister_mcp(runtime: str, repo: Path, paths: Paths) -> dict[str, Any]:
    """Undo register_mcp (`memorycloud mcp uninstall`); nothing to undo is no error."""
    try:
        result = mcp.unregister(paths, runtime, repo)
    except MemoryCloudError as exc:
        return {"removed": False, "text": f"left as it is ({exc.message})"}
    return {"removed": True, "text": mcp.uninstall_text(result), "data": result}


def register_mcp(runtime: str, repo: Path, paths: Paths) -> dict[str, Any]:
    """Register the memorycloud MCP server in the runtime's own config (what `memorycloud
    mcp install` does). A failure is reported, not fatal: the startup item is written, and
    the person can run `memorycloud mcp install` later."""
    try:
        result = mcp.register(paths, runtime, repo)
    except MemoryCloudError as exc:
        return {
            "registered": False,
            "text": f"not registered ({exc.message}); run `memorycloud mcp install --runtime {runtime}`",
        }
    done = "registered" if result["written"] else "already registered"
    text = "; ".join([f"{done} in {result['file']}", *result["warnings"]])
    return {"registered": True, "text": text, "data": result}


def add_commands(sub: Any) -> None:
    """Register ``setup ...`` and ``connect`` on the main parser."""
    setup = sub.add_parser("setup", help="startup items: list, show, approve, reject, remove")
    ssub = setup.add_subparsers(title="setup commands", metavar="ACTION", required=True)
    p = add_command(ssub, "list", cmd_setup_list, "list install plans")
    p.add_argument("--status", help="pending_approval, applied, installed, fallback_active, ...")
    for name, func, text in (
        ("show", cmd_setup_show, "show a plan with the exact files it writes"),
        ("approve", cmd_setup_approve, "approve a plan: the daemon writes its files"),
        ("reject", cmd_setup_reject, "reject a plan: nothing is written"),
        ("remove", cmd_setup_remove, "undo an installation exactly"),
    ):
        p = add_command(ssub, name, func, text)
        p.add_argument("plan", help="plan id (splan_...)")
        if name == "approve":
            p.add_argument(
                "--overwrite",
                action="store_true",
                help="replace managed regions you edited by hand (after a conflict)",
            )
    add_command(ssub, "conflicts", cmd_setup_conflicts, "managed regions edited by hand, waiting for you")
    p = add_command(
        sub, "connect", cmd_connect, "connect this repository: plan the startup item, show it, ask, install"
    )
    p.add_argument(
        "--runtime",
        help="claude_code, codex, gemini_cli, cursor, openclaw, generic"
        " (default: guessed from the repository)",
    )
    p.add_argument("--repo", help="repository directory (default: the current one)")
    p.add_argument(
        "--credential-ref",
        default="memorycloud_default",
        help="name under which the launcher's key is kept (default memorycloud_default)",
    )
    p.add_argument("--yes", action="store_true", help="approve without asking")
    p.add_argument("--show-contents", action="store_true", help="print what each file will contain")
