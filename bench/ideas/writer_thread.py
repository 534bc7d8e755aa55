"""Tried for issue #16 and not kept: the busiest writes handled in a writer thread of their own.

The daemon answers every request on one event loop and uses one of the machine's two cores
(bench/writes.py: ~100 % of a core under 8 writing clients, the client ~2 %). The sqlite3
module lets go of the GIL inside ``sqlite3_step``, about 40 % of a write's time (native
profiles, bench/RESULTS.md "why writes stay under 1,000 per second"), so a writer thread
could in principle run SQLite while the event loop parses and answers the next requests.

This script measures that without changing the product: ``--serve`` starts the real daemon
with two patches. A second event loop runs in a thread of its own, on a second connection to
the same database (``open_store``), with its own services and its own group commit
(state/group_commit.py, unchanged: the writes of one of its turns share one COMMIT, each in
a SAVEPOINT, full-text rows at the COMMIT); memory deltas and add_messages run there, whole
(handler and its writes), and the request on the main loop waits for the answer. Everything
else (HTTP, auth, the body's validation, JSON) stays on the main loop. Then, alternating the
plain daemon and the patched one, 8 clients write as fast as they are answered (bench/
writes.py's load, into a workspace seeded with 5,000 memories): writes per second and the
daemon's CPU (a share of one core above 100 % would mean the threads ran side by side).

    python bench/ideas/writer_thread.py --rounds 2 --write
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shlex
import statistics
import sys
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import writes  # noqa: E402
from harness import (  # noqa: E402
    Daemon,
    ScriptDaemon,
    code_state,
    create_agents,
    daemon_env,
    machine_line,
    owner_key,
    serve_or_run,
)
from results import write_section  # noqa: E402
from scale import ingest  # noqa: E402

SECTION = "## Tried and not kept: writes in a writer thread (issue #16)"
APART_PATHS = ("/api/agent/memory-delta", "/add_messages/")
SEED = 5000


def patch_daemon() -> None:
    """The daemon's two patches (see the module docstring); called in the daemon process."""
    import contextvars

    from daemon import app as app_module
    from daemon import endpoints, keys
    from daemon.runtime.services import Services
    from state.group_commit import collect_commits, disable_group_commit, enable_group_commit, wait_commits
    from state.secrets import open_secret_store
    from state.store import open_store

    writer_services: contextvars.ContextVar = contextvars.ContextVar("writer_services", default=None)
    writer: dict = {}

    def services(call: endpoints.Call):
        own = writer_services.get()
        return own if own is not None else call.request.app[keys.SERVICES]

    endpoints.Call.services = property(services)  # type: ignore[assignment]
    plain_run_handler = endpoints.run_handler

    async def run_handler(request, call, endpoint, key):
        if endpoint.path not in APART_PATHS:
            return await plain_run_handler(request, call, endpoint, key)

        async def on_writer_loop():
            if not writer.get("used"):  # the run checks the log for it: the patch is in effect
                writer["used"] = True
                print(f"writer thread: {endpoint.path} on {threading.current_thread().name}", flush=True)
            writer_services.set(writer["services"])
            with collect_commits() as pending:  # as commit_middleware does on the main loop
                result = await plain_run_handler(request, call, endpoint, key)
                await wait_commits(pending)
            return result

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(on_writer_loop(), writer["loop"]))

    endpoints.run_handler = run_handler
    plain_store_context = app_module._store_context

    async def store_context(app):
        steps = plain_store_context(app)
        await steps.__anext__()
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            store = open_store(app[keys.PATHS], app[keys.SETTINGS])
            writer.update(
                loop=loop,
                store=store,
                services=Services.build(
                    store, app[keys.PATHS], open_secret_store(app[keys.PATHS].secrets_file)
                ),
            )
            enable_group_commit(store.conn, loop)
            ready.set()
            loop.run_forever()
            writer["services"].mem1.close()
            disable_group_commit(store.conn)
            store.close()

        thread = threading.Thread(target=serve, name="writer", daemon=True)
        thread.start()
        ready.wait()
        try:
            yield
        finally:
            writer["loop"].call_soon_threadsafe(writer["loop"].stop)
            thread.join()
            try:
                await steps.__anext__()
            except StopAsyncIteration:
                pass

    app_module._store_context = store_context


class PatchedDaemon(ScriptDaemon):
    """bench/harness.py's daemon, started through this script's ``--serve``."""

    script = __file__


def one_run(threaded: bool, kind: str, seconds: float) -> tuple[float, float]:
    """(writes per second, the daemon's CPU as a share of one core) for one daemon."""
    with tempfile.TemporaryDirectory(prefix="mc-writer-thread-") as tmp:
        home = Path(tmp)
        daemon = (PatchedDaemon if threaded else Daemon)(home, daemon_env(home))
        daemon.start()
        try:

            async def load() -> tuple[float, float]:
                rng = random.Random(3)
                agents = await create_agents(daemon.port, owner_key(home), writes.CLIENTS)
                await ingest(daemon.port, agents, SEED, rng, [])
                await asyncio.sleep(6)  # the checkpoint job and the segment merge settle
                clients = [
                    await writes.open_client(daemon.port, a, rng, f"c{i}") for i, a in enumerate(agents)
                ]
                result = writes.Result()
                await writes.many_clients(clients, kind, rng, seconds, daemon.process.pid, result)
                if result.errors[kind]:
                    raise RuntimeError(f"{result.errors[kind]} {kind} writes failed")
                if threaded and "writer thread:" not in (home / "daemon-stdout.log").read_text():
                    raise RuntimeError("the patched daemon wrote nothing on its writer thread")
                cpu, _client, wall = result.cpu[kind]
                return result.rate[kind], cpu / wall

            return asyncio.run(load())
        finally:
            daemon.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds of both daemons")
    parser.add_argument("--seconds", type=float, default=12.0, help="sustained writing per run")
    parser.add_argument("--kinds", default=",".join(writes.KINDS))
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    started = datetime.now(UTC)
    loads = [os.getloadavg()[0]]
    rows = [
        "| writes, 8 clients | daemon | writes per second (each round) | median | daemon CPU (share of a core) |",
        "|---|---|---|---:|---|",
    ]
    ratios: list[str] = []
    most_cpu = 0.0
    for kind in args.kinds.split(","):
        runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        for _ in range(args.rounds):
            for threaded in (False, True):
                runs[threaded].append(one_run(threaded, kind, args.seconds))
                loads.append(os.getloadavg()[0])
                print(kind, "writer thread" if threaded else "one loop", runs[threaded][-1], file=sys.stderr)
        medians = {t: statistics.median(r for r, _ in runs[t]) for t in (False, True)}
        ratios.append(f"{writes.LABELS[kind]} {medians[True] / medians[False]:.2f}x")
        most_cpu = max([most_cpu, *(c for _, c in runs[True])])
        for threaded in (False, True):
            rates = [r for r, _ in runs[threaded]]
            rows.append(
                f"| {writes.LABELS[kind]} | {'writer thread' if threaded else 'one event loop (shipped)'} |"
                f" {', '.join(f'{r:.0f}' for r in rates)} | {statistics.median(rates):.0f} |"
                f" {', '.join(f'{c:.0%}' for _, c in runs[threaded])} |"
            )
    command = "python bench/ideas/writer_thread.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    text = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command.strip()}` (repository root). Date: {started:%Y-%m-%d %H:%M} UTC."
            f" Code: `{code_state()}`.",
            f"Machine: {machine_line()}. 1-minute load average: {min(loads):.2f}-{max(loads):.2f}.",
            "",
            "Memory deltas and add_messages handled whole on a second event loop in a thread of"
            " its own, on a second connection with its own group commit; HTTP, auth, validation"
            " and JSON on the main loop (this script's docstring). Runs alternate, a fresh"
            f" daemon each, {SEED:,} memories seeded, {args.seconds:g} s of 8 clients:",
            "",
            *rows,
            "",
            f"The writer thread against one loop, by the medians: {', '.join(ratios)}. The patched"
            f" daemon used at most {most_cpu:.0%} of one core: "
            + (
                "its two threads took turns, not the two cores. Between statements a write holds"
                " the GIL (the repositories, tokens, vectors, group commit); the SQLite time it"
                " lets go is spent in many short steps, each of which must get the GIL back from"
                " the loop's thread, and the handing over costs more than the overlap gains."
                " Not kept; what is left for the write aims is a write that does less (the"
                ' section "why writes stay under 1,000 per second").'
                if most_cpu < 1.05
                else "the threads ran side by side."
            ),
            "",
        ]
    )
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    serve_or_run(patch_daemon, main)
