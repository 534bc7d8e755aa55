"""The search index's background rebuild after an upgrade (issue #16): how long opening the
store takes, how long the rebuild takes in the real daemon, how long its batches are, and
what searches cost while it runs.

1. A store as the previous release indexed it: ``--memories`` memories (bench/latency.py's
   texts, in one workspace) written with tokenizer 1 (state/tokenize_v1.py) and the hashing
   embedder under its old name, in process, as tests/state/test_rebuild.py makes one.
2. ``Store.open`` with this code, which only records the rebuild: its time.
3. The real daemon (``python -m daemon daemon run``, default settings) on that home: the
   wall time until ``GET /api/local/status`` says the index is current, the job's batch
   durations (its result: median and longest), and ``GET /api/local/memories?q=`` latency
   while the rebuild runs and after.

    python bench/rebuild.py --memories 10000
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import httpx
from harness import CODE, Daemon, daemon_env, machine_line, owner_key  # noqa: F401 (CODE: sys.path)
from latency import memory_text, search_query


class PreviousHashing:
    """Made on first use: the hashing embedder under the previous release's name."""

    def __new__(cls, dimension: int):  # type: ignore[misc]
        from state.embedders import HashingEmbedder

        embedder = HashingEmbedder(dimension)
        embedder.name = "hashing-v2"
        return embedder


def make_previous_store(home: Path, count: int, rng: random.Random) -> Path:
    from state import embedders, index_builds, tokenize_v1
    from state.config import Settings
    from state.memories import NewMemory
    from state.paths import resolve_paths
    from state.store import Store

    paths = resolve_paths({"MEMORYCLOUD_HOME": str(home)}).ensure()
    current, factory = index_builds.current_tokenizer, embedders._FACTORIES["hashing"]
    index_builds.current_tokenizer = lambda: (1, tokenize_v1)
    embedders._FACTORIES["hashing"] = PreviousHashing
    try:
        store = Store.open(paths.database, Settings())
        for start in range(0, count, 500):
            with store.transaction():
                for _ in range(start, min(start + 500, count)):
                    store.memories.create(
                        NewMemory(
                            namespace="wsp_bench", kind="fact", content=memory_text(rng), source="bench"
                        )
                    )
        store.close()
    finally:
        index_builds.current_tokenizer, embedders._FACTORIES["hashing"] = current, factory
    return paths.database


def open_time(database: Path) -> float:
    """Seconds to open a copy of the store with this code (the copy keeps the original pending)."""
    from state.config import Settings
    from state.store import Store

    copy = database.with_name("open-copy.db")
    shutil.copyfile(database, copy)
    started = time.perf_counter()
    Store.open(copy, Settings()).close()
    return time.perf_counter() - started


def percentiles(values: list[float]) -> str:
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]  # noqa: E731
    return f"p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms ({len(values)} requests)"


def run(count: int) -> None:
    rng = random.Random(16)
    home = Path(tempfile.mkdtemp(prefix="mc-rebuild-"))
    try:
        started = time.perf_counter()
        database = make_previous_store(home, count, rng)
        print(f"made {count:,} memories with tokenizer 1 in {time.perf_counter() - started:.1f} s")
        print(f"Store.open with a rebuild to record: {open_time(database) * 1000:.0f} ms")
        daemon = Daemon(home=home, env=daemon_env(home))
        daemon.start()
        started = time.perf_counter()
        http = httpx.Client(
            base_url=daemon.url, headers={"Authorization": f"Bearer {owner_key(home)}"}, timeout=30
        )
        during: list[float] = []
        seen = ""
        while True:
            status = http.get("/api/local/status").json()
            index = status["search_index"]
            if index["state"] == "current":
                break
            if index.get("index") != seen:
                seen = index.get("index")
                print(f"{time.perf_counter() - started:6.1f} s  {index['text']}")
            for _ in range(5):
                query = search_query(rng)
                before = time.perf_counter()
                http.get("/api/local/memories", params={"q": query, "namespace": "wsp_bench"})
                during.append((time.perf_counter() - before) * 1000)
                time.sleep(0.05)
        took = time.perf_counter() - started
        print(f"{took:6.1f} s  search index: current")
        job = None
        while job is None or not job["runs"]:  # the run's result, once the trash is gone too
            job = next(
                j for j in http.get("/api/local/status").json()["jobs"] if j["name"] == "rebuild_search_index"
            )
            time.sleep(0.2)
        print(f"rebuild job: {job['last_result']}, whole run {job['last_duration_ms'] / 1000:.1f} s")
        after = []
        for _ in range(200):
            query = search_query(rng)
            before = time.perf_counter()
            http.get("/api/local/memories", params={"q": query, "namespace": "wsp_bench"})
            after.append((time.perf_counter() - before) * 1000)
        print(f"search during the rebuild: {percentiles(during)}")
        print(f"search after it:           {percentiles(after)}")
        print(machine_line())
        daemon.stop()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    run(parser.parse_args(argv).memories)
    return 0


if __name__ == "__main__":
    sys.exit(main())
