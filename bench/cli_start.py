"""How long the CLI and the daemon take to start, as a person (or a test) sees it.

Each sample is a new process, wall time from spawn to exit (or, for the daemon, to its first
``/healthz`` answer): ``memorycloud --help`` (imports only), ``memorycloud connect --runtime
generic --repo R --yes --json`` against a running daemon (an already connected repository,
so the command's requests are the same every time) and ``memorycloud daemon run`` until it
answers. Medians of ``--rounds`` samples each, the three kinds interleaved so that a change
in the machine's load falls on all of them. ``MC_BENCH_CODE`` measures another tree
(bench/harness.py), as bench/before_after.py does.

    python bench/cli_start.py --rounds 15 --write
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from harness import CODE, Daemon, code_state, daemon_env, machine_line
from results import write_section

SECTION = "## CLI and daemon start-up"


def run_cli(env: dict[str, str], *args: str) -> float:
    """Milliseconds for one ``python -m daemon ARGS`` process (run from CODE)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "daemon", *args], env=env, cwd=CODE, capture_output=True, timeout=120
    )
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"memorycloud {' '.join(args)} exited {done.returncode}: {done.stderr.decode()}")
    return elapsed


def daemon_start(daemon: Daemon) -> float:
    """Milliseconds from spawning the daemon to its first /healthz 200; then it is stopped."""
    started = time.perf_counter()
    daemon.start()
    elapsed = (time.perf_counter() - started) * 1000
    daemon.stop()
    return elapsed


def measure(rounds: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"help": [], "connect": [], "daemon": []}
    with tempfile.TemporaryDirectory(prefix="mc-cli-start-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = daemon_env(home) | {"CODEX_HOME": f"{tmp}/codex", "XDG_CONFIG_HOME": f"{tmp}/xdg"}
        repo = Path(tmp) / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        connect = ("connect", "--runtime", "generic", "--repo", str(repo), "--yes", "--json")
        daemon = Daemon(home, env)
        daemon.start()  # the first start creates the owner and the store: not a sample
        run_cli(env, *connect)  # the first connect writes the files: not a sample
        daemon.stop()
        for index in range(rounds):
            print(f"round {index + 1}/{rounds}", file=sys.stderr)
            samples["help"].append(run_cli(env, "--help"))
            samples["daemon"].append(daemon_start(daemon))
            daemon.start()
            try:
                samples["connect"].append(run_cli(env, *connect))
            finally:
                daemon.stop()
    return samples


def section(samples: dict[str, list[float]], command: str) -> str:
    names = {
        "help": "`memorycloud --help`",
        "connect": "`memorycloud connect` (already connected, daemon up)",
        "daemon": "`memorycloud daemon run` to its first /healthz",
    }
    rows = [
        f"| {names[kind]} | {len(values)} | {statistics.median(values):.0f} | {min(values):.0f} |"
        f" {max(values):.0f} |"
        for kind, values in samples.items()
    ]
    return "\n".join(
        [
            SECTION,
            "",
            f"`{command}` on {datetime.now(UTC):%Y-%m-%d}; {machine_line()}; code: {code_state()}.",
            "",
            "| process | samples | median ms | min ms | max ms |",
            "| --- | ---: | ---: | ---: | ---: |",
            *rows,
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--write", action="store_true", help=f"replace {SECTION!r} in RESULTS.md")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    command = shlex.join(["python", "bench/cli_start.py", *sys.argv[1:]])
    text = section(measure(args.rounds), command)
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    os.environ.pop("MEMORYCLOUD_API_KEY", None)
    raise SystemExit(main())
