"""Latency of the startup-item launcher, as an agent runtime's hook runs it.

A real daemon process, a temporary git repository connected with ``memorycloud connect
--runtime claude_code --yes`` (so the launcher, config, key and fallback cache are exactly
what a user gets), and then ``python3 .amp/launcher.py --runtime claude_code`` run as a new
process each time, with the daemon up (live context pack) and after stopping it (fallback
cache). Wall time per run, including interpreter start-up: that is what delays a session.

    python bench/launcher.py --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from latency import Daemon, Stats
from results import write_section

SECTION = "## Startup-item launcher"
TARGETS_MS = {"up": 150.0, "down": 100.0}
PYTHON = "python3"
SYSTEM_PYTHON = "/usr/bin/python3"


def hook_command(repo: Path) -> str:
    """The SessionStart command exactly as `connect` wrote it into .claude/settings.json."""
    settings = json.loads((repo / ".claude" / "settings.json").read_text(encoding="utf-8"))
    return settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]


def run_launcher(repo: Path, env: dict[str, str], python: str) -> tuple[float, str]:
    command = hook_command(repo).replace("python3", shlex.quote(python), 1)
    started = time.perf_counter()
    out = subprocess.run(
        ["sh", "-c", command],
        input=b'{"source": "startup"}',
        capture_output=True,
        env={**env, "CLAUDE_PROJECT_DIR": str(repo)},
        timeout=30,
    )
    elapsed = (time.perf_counter() - started) * 1000
    if out.returncode != 0:
        raise RuntimeError(f"launcher exited {out.returncode}: {out.stderr.decode()}")
    return elapsed, out.stdout.decode("utf-8")


def measure(repo: Path, env: dict[str, str], runs: int, expect_cached: bool, python: str) -> list[float]:
    samples = []
    for _ in range(runs):
        elapsed, text = run_launcher(repo, env, python)
        if ("CACHED" in text) != expect_cached:
            raise RuntimeError(f"unexpected launcher output (cached={expect_cached}): {text[:200]}")
        samples.append(elapsed)
    return samples


def setup_repo(home: Path, env: dict[str, str], daemon: Daemon) -> Path:
    repo = home / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "AGENTS.md").write_text("# Team rules\n", encoding="utf-8")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "daemon",
            "connect",
            "--runtime",
            "claude_code",
            "--repo",
            str(repo),
            "--yes",
            "--json",
        ],
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )
    return repo


def interpreters() -> list[str]:
    """``python3`` as found on PATH, the interpreter behind it when PATH holds a shim
    (pyenv's costs a bash script per start, which the user's machine may or may not have),
    and the system's own :data:`SYSTEM_PYTHON` (Debian's, what a user without pyenv runs)
    when it is another one."""
    real = subprocess.run(
        [PYTHON, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True
    ).stdout.strip()
    found = [PYTHON] + ([real] if real and not same_file(PYTHON, real) else [])
    if os.access(SYSTEM_PYTHON, os.X_OK) and not any(same_file(p, SYSTEM_PYTHON) for p in found):
        found.append(SYSTEM_PYTHON)
    return found


def same_file(a: str, b: str) -> bool:
    return os.path.realpath(shutil.which(a) or a) == os.path.realpath(shutil.which(b) or b)


def is_shim(python: str) -> bool:
    """Whether ``python`` (as PATH finds it) is a script that starts the interpreter (a
    pyenv shim), not the interpreter itself."""
    path = shutil.which(python)
    try:
        with open(path or python, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def section(
    rows: list[tuple[str, str, Stats, list[float]]],
    args: argparse.Namespace,
    command: str,
    python_paths: list[str],
) -> str:
    table = [
        f"| {python} | daemon {state} | {s.p50:.1f} | {s.p95:.1f} | {s.mean:.1f} | "
        f"{', '.join(f'{v:.1f}' for v in p50s)} | <= {TARGETS_MS[state]:.0f} | "
        f"{'yes' if s.p50 <= TARGETS_MS[state] else '**no**'} |"
        for python, state, s, p50s in rows
    ]
    return "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}` (repository root). Date: "
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC. Machine: {platform.system()} "
            f"{platform.machine()}, {os.cpu_count()} cores (shared, noisy). Interpreters: "
            + ", ".join(f"`{p}`" for p in python_paths)
            + ".",
            "",
            "The SessionStart command exactly as `memorycloud connect --runtime claude_code` wrote it"
            " (`python3 -S .../.amp/launcher.py --runtime claude_code`), run through `sh -c` as a"
            " new process per run, interpreter start-up included: with the daemon up it fetches a"
            " live context pack and saves the receipt; with the daemon stopped it prints the"
            f" fallback cache. {args.runs} runs after {args.warmup} warm-up, {args.repeat} repeats;"
            " figures are medians over repeats. On this machine `python3` on PATH is a pyenv shim"
            " (a bash script that adds ~60 ms to every start); the second interpreter row is the"
            " same Python started directly, as on a machine without a shim, and the third the"
            " system's own (Debian's), when there is one.",
            "",
            "| python3 | state | p50 ms | p95 ms | mean ms | p50 of each repeat | target p50 | met |",
            "|---|---|---:|---:|---:|---|---:|---|",
            *table,
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="timed runs per state and repeat")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first")
    parser.add_argument("--repeat", type=int, default=3, help="repeats; medians are reported")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    pythons = interpreters()
    runs: dict[tuple[str, str], list[Stats]] = {}
    with tempfile.TemporaryDirectory(prefix="mc-launcher-bench-") as tmp:
        home = Path(tmp)
        env = {**os.environ, "MEMORYCLOUD_HOME": str(home / "mchome"), "MEMORYCLOUD_SECRETS": "file"}
        env.pop("MEMORYCLOUD_API_KEY", None)
        daemon = Daemon(home, env)
        daemon.start()
        try:
            repo = setup_repo(home, env, daemon)
            for state, cached in (("up", False), ("down", True)):
                if cached:
                    daemon.stop()
                for python in pythons:
                    for _ in range(args.repeat):
                        measure(repo, env, args.warmup, cached, python)
                        runs.setdefault((python, state), []).append(
                            Stats.of(measure(repo, env, args.runs, cached, python))
                        )
        finally:
            daemon.stop()
    rows = [
        (python, state, Stats.median_of(values), [s.p50 for s in values])
        for (python, state), values in runs.items()
    ]
    command = " ".join(shlex.quote(w) for w in ["python", "bench/launcher.py", *(argv or sys.argv[1:])])
    text = section(rows, args, command, pythons)
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
