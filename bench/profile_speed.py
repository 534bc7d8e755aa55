"""Where the time goes, for the speed aims that are missed: search, briefs and writes.

1. **Search and brief at scale, in-process.** A store of ``--memories`` memories (one
   workspace, the texts of bench/latency.py) is written through ``DeltaService.record``, the
   code the memory-delta endpoint runs, in batches (no HTTP: this part is about the store).
   Then, per kind of query, the median cost of each step of ``SearchIndex.search``: BM25 (FTS5
   ranks every matching document; their number is shown), the query vector, the vector
   rerank of BM25's candidates (``vector_mode = "rerank"``) or the KNN scan of the namespace
   (when BM25 finds too few), and the whole search; then bootstrap/context and memory-brief.
2. **Writes under load, sampled.** With py-spy installed (``pip install py-spy``), a real
   daemon process is sampled while 8 clients write memory deltas, then mem1 turns, as fast
   as it answers (bench/writes.py's load): the share of the daemon's samples in each
   function (self) and below it (inclusive).

    python bench/profile_speed.py --write
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import writes
from harness import Daemon, code_state, create_agents, daemon_env, machine_line, owner_key, record_delta
from latency import PROJECTS, delta_body, search_query, typo_query
from results import write_section
from scale import brief_task, ingest

SECTION = "## Speed and scale: where the time goes"


PLAN = """What the figures say, what was done, and the plan (to 1M memories and beyond):

- **BM25.** FTS5 has no top-k pruning: `ORDER BY rank LIMIT k` scores every record holding
  any query term. Done: on a large store a query whose terms many records hold ranks a
  bounded set (state/search.py `MAX_RANKED_MATCHES`: the records holding its rarest terms
  and the newest 500 holding only common ones, scored with the whole query's exact BM25), so
  BM25 costs about the same at 10k and 100k (above). What is given up: an older record that
  holds only common terms. Next, for 1M: one FTS table per large namespace (a query in a
  small namespace still walks the posting lists of the others).
- **memory-brief** (aim for issue #16: p50 <= 4 ms at 10k over HTTP) is mostly the search of
  its task sentence (the step table above: about 60 % of an in-process brief, BM25's three
  bounded subqueries most of it). Done (issue #16): the project's standing memories and the
  installed lenses are read once for the brief and its pack (two reads and four became one
  and one), and the recent events and hand-off walk brief_events newest first (m0017; they
  joined every brief ever made, a cost that grew with each brief). What is left besides the
  search: storing the pack (its ~28 KB JSON) and the brief, and encoding the ~50 KB answer.
  Next: a cheaper BM25 for long task sentences (the search's own budget, state/search.py).
- **Vectors.** The KNN scan (used when BM25 finds too few) reads every vector of the
  namespace: linear, hence the misspelt queries' p99 at 100k. A 1-bit quantized first pass
  was measured and rejected: with the sparse hashing vectors, rescoring the top 200 of a bit
  scan recovered under 2 % of the true top 10. At 1M: an ANN index when sqlite-vec has one,
  or a denser embedder with the bit pass.
- **Writes.** Done: group commit (state/group_commit.py: the writes of one event-loop turn
  share one COMMIT, each in its own savepoint, answers after the COMMIT; WAL written per
  delta 124 -> 44 KB with 8 clients), a faster hashing embedder with identical bytes, and the
  mem1 session summary rebuilt after the turns instead of at each. What is left is per-write
  work that scales with the records a call writes: a mem1 call with two messages writes two
  memories (record, version, FTS, vector, change log each), so its calls per second are about
  half a delta's. Issue #16: the v2 tokenizer (every script) cost ~3x v1 per text; its
  ASCII runs now skip the regex module (2.6x faster, same tokens), and a mem1 session's
  deferred summary is rebuilt at most every 5 s (was 1 s). Left: tokens are made twice per
  record (FTS and the embedder), the vector insert, the version row with its two triggers,
  and the COMMIT (FTS5 segment writes). Next: one token list for both indexes; embed off
  the request path (vectors are derived data; the `backfill_vectors` job already adds
  missing ones).
- **Size.** About 500 MB per 100k memories in the file (int8 vectors at 1024 dimensions,
  ~100 MB of it; FTS, summary cards and the delta log repeat the text); stored context packs
  grow with every bootstrap (~28 KB each) and want a retention period. At 1M: ~5 GB.
"""


class NoChanges:
    def changed(self, *args) -> None:  # no startup items to refresh in this store
        pass


def build_store(home: Path, count: int):
    """A daemon home with one agent and ``count`` memory deltas in its workspace."""
    daemon = Daemon(home, daemon_env(home))
    daemon.start()
    try:
        agent = asyncio.run(create_agents(daemon.port, owner_key(home), 1))[0]
    finally:
        daemon.stop()
    from daemon.runtime.deltas import DeltaService
    from state.config import load_settings
    from state.paths import resolve_paths
    from state.store import Store

    paths = resolve_paths({"MEMORYCLOUD_HOME": str(home)})
    store = Store.open(paths.database, load_settings(paths.config_file))
    identity = store.identities.get(agent["id"])
    service = DeltaService(store, NoChanges())
    rng = random.Random(20240601)
    for first in range(0, count, 1000):
        with store.transaction():
            for _ in range(min(1000, count - first)):
                body = delta_body(rng)
                record_delta(service, identity, body)
    store.conn.execute("pragma wal_checkpoint(truncate)")
    return store, identity


def timed(call) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def search_steps(store, workspace: str, queries: int) -> list[str]:
    from state import search as search_module

    index = store.search
    rows = [
        "| queries | whole search | BM25 | documents matched | query vector | vector rerank |"
        " KNN scan (share of queries) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    rng = random.Random(1)
    for label, make in (
        ("vocabulary", search_query),
        ("misspelt", typo_query),
        ("a brief's task", brief_task),
    ):
        steps: dict[str, list[float]] = {k: [] for k in ("all", "bm25", "vector", "rerank", "knn")}
        matched: list[int] = []
        scans = 0
        for _ in range(queries):
            query = make(rng)
            steps["all"].append(timed(lambda: index.search(query, [workspace], limit=8))[0])
            terms = index._bm25_terms(query)
            match = search_module.fts_match(terms)
            ms, bm25 = timed(lambda: index._bm25_ranked(terms, [workspace], 50))
            steps["bm25"].append(ms)
            if match:
                matched.append(
                    store.conn.execute(
                        "select count(*) from memory_fts where memory_fts match ?", (match,)
                    ).fetchone()[0]
                )
            ms, vector = timed(lambda: index._query_vector(query))
            steps["vector"].append(ms)
            if vector is None:
                continue
            if len(bm25) < 8:
                scans += 1
                steps["knn"].append(timed(lambda: index._knn(vector, [workspace], 50))[0])
            elif index.vector_mode == "rerank":
                steps["rerank"].append(timed(lambda: index._rerank(vector, bm25))[0])

        def med(key: str) -> str:
            return f"{statistics.median(steps[key]):.2f} ms" if steps[key] else "-"

        rows.append(
            f"| {label} | {med('all')} | {med('bm25')} |"
            f" {statistics.median(matched) if matched else 0:.0f} | {med('vector')} |"
            f" {med('rerank')} | {med('knn')} ({scans / queries:.0%}) |"
        )
    return rows


def pack_steps(store, identity, queries: int) -> list[str]:
    from daemon.runtime.briefs import BriefService
    from daemon.runtime.changes import ContextChanges
    from daemon.runtime.context_packs import ContextPackService
    from daemon.runtime.deltas import DeltaService

    changes = ContextChanges()
    packs = ContextPackService(store)
    briefs = BriefService(store, packs, DeltaService(store, changes), changes)
    rng = random.Random(2)
    boot = [
        timed(lambda: packs.build(identity, {"project_key": rng.choice(PROJECTS)}, "http://x"))[0]
        for _ in range(queries)
    ]
    brief, relevant = [], []
    for _ in range(queries):
        body = {"task": brief_task(rng), "project_key": rng.choice(PROJECTS), "max_items": 8}
        brief.append(timed(lambda: briefs.create(identity, body, "http://x"))[0])
        query = f"{body['task']}\n"
        relevant.append(timed(lambda: briefs._relevant(identity["workspace_id"], query, 8))[0])
    return [
        "| operation | p50 | of which the search of the task |",
        "|---|---:|---:|",
        f"| bootstrap/context | {statistics.median(boot):.2f} ms | - |",
        f"| memory-brief | {statistics.median(brief):.2f} ms | {statistics.median(relevant):.2f} ms |",
    ]


# The steps of a memory brief, each timed where it is called (inclusive: a step's time
# includes the steps it calls; `of which` names the enclosing step).
BRIEF_STEPS = (
    ("daemon.runtime.briefs", "BriefService", "create", "whole brief (in process)", None),
    ("daemon.runtime.briefs", "BriefService", "_relevant", "search of the task + its records", "whole brief"),
    ("state.search", "SearchIndex", "search", "hybrid search", "search of the task"),
    ("state.search", "SearchIndex", "_bm25_ranked", "BM25", "hybrid search"),
    ("state.search", "SearchIndex", "_rerank", "vector rerank", "hybrid search"),
    ("state.search", "SearchIndex", "_query_vector", "query vector", "hybrid search"),
    ("state.memories", "MemoryRepository", "top_for_context", "standing memories", "whole brief"),
    ("state.amp_records", "AmpRecords", "recent_events", "recent events", "whole brief"),
    ("daemon.runtime.briefs", "BriefService", "_handoff", "hand-off", "whole brief"),
    ("state.suite_records", "SuiteRecords", "installed_lenses", "installed lenses", "whole brief"),
    (
        "daemon.runtime.context_packs",
        "ContextPackService",
        "compose",
        "compose the context pack",
        "whole brief",
    ),
    ("daemon.runtime.context_packs", "ContextPackService", "save", "store pack and receipt", "whole brief"),
    ("state.amp_records", "AmpRecords", "insert_brief", "store the brief", "whole brief"),
)


def brief_steps(store, identity, briefs: int) -> list[str]:
    """Where a memory brief's time goes, step by step (bench/scale.py's brief tasks)."""
    import functools
    import importlib
    import json

    try:  # what the daemon encodes an answer with (orjson, since 2026-12-06)
        from state.json_text import compact_bytes as encoder

        encoder_name = "orjson, as the daemon"
    except ImportError:  # a checkout from before it (MC_BENCH_CODE)
        encoder, encoder_name = (lambda value: json.dumps(value, ensure_ascii=False)), "json.dumps"

    from daemon.runtime.briefs import BriefService
    from daemon.runtime.changes import ContextChanges
    from daemon.runtime.context_packs import ContextPackService
    from daemon.runtime.deltas import DeltaService

    spent: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    originals = []
    for module, cls_name, name, label, _ in BRIEF_STEPS:
        cls = getattr(importlib.import_module(module), cls_name)
        original = getattr(cls, name)
        originals.append((cls, name, original))

        def timed_step(*a, _f=original, _label=label, **k):
            started = time.perf_counter()
            try:
                return _f(*a, **k)
            finally:
                spent[_label] += time.perf_counter() - started
                calls[_label] += 1

        setattr(cls, name, functools.wraps(original)(timed_step))
    try:
        changes = ContextChanges()
        packs = ContextPackService(store)
        service = BriefService(store, packs, DeltaService(store, changes), changes)
        rng = random.Random(4)
        encode: list[float] = []
        for _round in range(2):  # the first round warms caches and is not counted
            spent.clear()
            calls.clear()
            encode.clear()
            for _ in range(briefs):
                body = {"task": brief_task(rng), "project_key": rng.choice(PROJECTS), "max_items": 8}
                answer = service.create(identity, body, "http://x")
                encode.append(timed(lambda: encoder(answer))[0])
    finally:
        for cls, name, original in originals:
            setattr(cls, name, original)
    whole = spent["whole brief (in process)"]
    rows = [
        "| step | ms per brief | share of the brief | calls per brief | of which |",
        "|---|---:|---:|---:|---|",
    ]
    for _, _, _, label, parent in BRIEF_STEPS:
        rows.append(
            f"| {label} | {spent[label] / briefs * 1000:.2f} | {spent[label] / whole:.0%} |"
            f" {calls[label] / briefs:.1f} | {parent or '-'} |"
        )
    rows.append(
        f"| the answer's JSON ({encoder_name}, {len(encoder(answer)) // 1000} KB)"
        f" | {statistics.mean(encode):.2f} | - | 1.0 | HTTP layer |"
    )
    return rows


def aggregate(raw: Path, top: int) -> tuple[int, list[tuple[str, float]], list[tuple[str, float]]]:
    """py-spy raw output -> (samples, self shares, inclusive shares)."""
    own: Counter[str] = Counter()
    below: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = []
        for frame in stack.split(";"):
            name, _, where = frame.partition(" (")
            frames.append(f"{name} ({where.split(':')[0].rsplit('/', 1)[-1]})" if where else name)
        own[frames[-1]] += n
        for frame in set(frames):
            below[frame] += n
    skip = (
        "_run_code",
        "_run_module_as_main",
        "<module>",
        "main (__init__.py)",
        "cmd_daemon_run",
        "run (runners.py)",
        "Runner.run",
        "BaseEventLoop",
        "Handle._run",
        "Thread.",
        "_bootstrap",
        "_fix_request_current_app",
        "Application._handle",
        "error_middleware",
        "guard_middleware",
        "RequestHandler._handle_request",
    )
    inclusive = [(f, n / total) for f, n in below.most_common() if not any(s in f for s in skip)]
    return total, [(f, n / total) for f, n in own.most_common(top)], inclusive[:top]


def profile_writes(seconds: float, top: int) -> list[str]:
    if shutil.which("py-spy") is None and not (Path(sys.executable).parent / "py-spy").exists():
        return ["py-spy is not installed: `pip install py-spy` for this part."]
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    out: list[str] = []
    for kind in ("delta", "mem1"):
        with tempfile.TemporaryDirectory(prefix="mc-profile-") as tmp:
            home = Path(tmp)
            daemon = Daemon(home, daemon_env(home))
            daemon.start()
            raw = home / "profile.txt"
            try:

                async def load() -> dict:
                    rng = random.Random(3)
                    agents = await create_agents(daemon.port, owner_key(home), 8)
                    await ingest(daemon.port, agents, 5000, rng, [])
                    await asyncio.sleep(6)
                    clients = [
                        await writes.open_client(daemon.port, a, rng, f"c{i}") for i, a in enumerate(agents)
                    ]
                    spy_proc = subprocess.Popen(  # noqa: ASYNC220 - runs beside the loop until killed
                        [
                            spy,
                            "record",
                            "--pid",
                            str(daemon.process.pid),
                            "-r",
                            "200",
                            "-d",
                            str(int(seconds)),
                            "-f",
                            "raw",
                            "-o",
                            str(raw),
                        ],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                    await asyncio.sleep(1)
                    result = writes.Result()
                    await writes.many_clients(clients, kind, rng, seconds - 2, daemon.process.pid, result)
                    await asyncio.to_thread(spy_proc.wait)
                    return {"rate": result.rate[kind]}

                figures = asyncio.run(load())
            finally:
                daemon.stop()
            total, own, inclusive = aggregate(raw, top)
        out += [
            f"{writes.LABELS[kind]}, 8 clients, {figures['rate']:.0f} per second while sampled"
            f" ({total} samples of the daemon process):",
            "",
            "| function (self) | share | function (inclusive) | share |",
            "|---|---:|---|---:|",
        ]
        for (f1, s1), (f2, s2) in zip(own, inclusive, strict=False):  # may differ in length
            out.append(f"| `{f1}` | {s1:.1%} | `{f2}` | {s2:.1%} |")
        out.append("")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--seconds", type=float, default=12.0, help="sampling time per write kind")
    parser.add_argument("--top", type=int, default=14)
    parser.add_argument("--briefs", type=int, default=200, help="briefs timed step by step")
    parser.add_argument("--no-writes", action="store_true", help="skip the sampled write profiles")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    command = shlex.join(["python", "bench/profile_speed.py", *(sys.argv[1:] if argv is None else argv)])
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="mc-profile-store-") as tmp:
        started = time.perf_counter()
        store, identity = build_store(Path(tmp), args.memories)
        built = time.perf_counter() - started
        try:
            settings = store.settings
            search_rows = search_steps(store, identity["workspace_id"], args.queries)
            pack_rows = pack_steps(store, identity, max(20, args.queries // 2))
            pack_rows += [
                "",
                f"A memory brief step by step ({args.briefs} briefs after as many"
                " untimed; steps timed where they are called, so a step includes"
                " those it calls):",
                "",
                *brief_steps(store, identity, args.briefs),
            ]
        finally:
            store.close()
    write_rows = [] if args.no_writes else profile_writes(args.seconds, args.top)
    text = "\n".join(
        [
            SECTION,
            "",
            f"Command: `{command}` (repository root). Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC."
            f" Code: `{code_state()}`.",
            f"Machine: {machine_line()}. 1-minute load average at the start: {load_start:.2f}, at the"
            f" end: {os.getloadavg()[0]:.2f}.",
            "",
            f"In-process, {args.memories} memories in one workspace (written through"
            f" DeltaService.record in {built:.0f} s); embedder {settings.embedder}, dimension"
            f" {settings.dimension}, vector_mode {settings.vector_mode}; {args.queries} queries of each kind;"
            " medians:",
            "",
            *search_rows,
            "",
            *pack_rows,
            "",
            *write_rows,
            PLAN,
        ]
    )
    print(text)
    if args.write:
        write_section(SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
