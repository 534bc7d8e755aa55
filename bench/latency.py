"""Latency of the hot AMP endpoints over real HTTP against a real daemon process.

What it does, in order:

1. makes a throw-away ``MEMORYCLOUD_HOME`` (file secret backend), creates an agent key with
   ``python -m daemon agent add bench --runtime codex --json`` and starts
   ``python -m daemon daemon run --port <free port>`` as a child process;
2. seeds ``--memories`` realistic mixed English/Chinese memories. ``--seed auto`` first writes
   a probe batch through ``POST /api/agent/memory-delta``; if that rate projects to more than
   ``--http-budget`` seconds for all of them, it stops the daemon, writes the rest directly
   through the Store with ``DeltaService.record`` (the same code path the endpoint uses, minus
   HTTP) and starts the daemon again. Real rows either way; the report says which path ran;
3. with ONE keep-alive ``httpx.Client`` measures search (``GET .../memory/query``, with
   vocabulary queries and with misspelt ones that tend to take the vector path),
   ``POST /api/agent/bootstrap/context`` and ``POST /api/agent/memory-delta`` (warm-up
   requests first), ``--repeat`` times, and reports the median of the per-run percentiles;
4. stops the daemon with SIGTERM, prints a Markdown table and with ``--write`` replaces its
   own ``## Latency over HTTP`` section of ``bench/RESULTS.md`` (other sections untouched).

Only loopback traffic. Run from the repository root with the project's Python::

    python bench/latency.py --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from results import RESULTS_PATH as RESULTS_FILE
from results import write_section

SECTION = "## Latency over HTTP"
HOST = "127.0.0.1"
TARGETS_MS = {"search": 10.0, "typo_search": 10.0, "bootstrap": 5.0, "delta": 2.0}
OPERATIONS = ("search", "typo_search", "bootstrap", "delta")
LABELS = {
    "search": "search `GET /api/workspaces/{wsp}/memory/query`",
    "typo_search": "search, misspelt English queries",
    "bootstrap": "`POST /api/agent/bootstrap/context`",
    "delta": "`POST /api/agent/memory-delta`",
}
PROJECTS = ("github.com/acme/webapp", "github.com/acme/billing", "github.com/acme/infra", "local/notes")
DELTA_TYPES = ("task_event", "task_event", "decision", "project_state", "failure", "open_loop", "code_memory")

# -- deterministic mixed English / Chinese texts ------------------------------------------

EN_PEOPLE = ("Alice", "Bob", "Mei", "Wei", "Priya", "Carlos", "Yuki", "the user", "the reviewer")
EN_TECH = (
    "SQLite",
    "Postgres",
    "Redis",
    "Docker",
    "Kubernetes",
    "Python 3.12",
    "Rust",
    "TypeScript",
    "React",
    "FastAPI",
    "aiohttp",
    "pytest",
    "nginx",
    "gRPC",
    "OAuth",
    "JWT",
    "S3",
    "Kafka",
    "Celery",
    "Vite",
    "Tailwind",
    "GitHub Actions",
    "Terraform",
    "sqlite-vec",
    "uv",
)
EN_COMPONENT = (
    "login flow",
    "billing service",
    "search index",
    "cache layer",
    "CI pipeline",
    "deploy script",
    "database migration",
    "API gateway",
    "settings page",
    "notification worker",
    "export job",
    "rate limiter",
    "webhook handler",
    "onboarding wizard",
    "invoice generator",
    "audit log",
    "feature flags",
    "backup cron",
    "mobile client",
    "admin dashboard",
)
EN_ACTION = (
    "fixed",
    "refactored",
    "decided to keep",
    "migrated",
    "benchmarked",
    "removed",
    "added retries to",
    "documented",
    "rewrote",
    "split",
    "profiled",
    "rolled back",
)
EN_REASON = (
    "it was flaky under load",
    "the customer asked for it",
    "p95 latency was too high",
    "tests kept timing out",
    "memory use doubled",
    "the docs were wrong",
    "it blocked the release",
    "security review flagged it",
    "it saves a network hop",
    "the old library is unmaintained",
)
EN_PROBLEM = (
    "fails on empty input",
    "leaks connections after a timeout",
    "returns stale data for five minutes",
    "ignores the timezone",
    "double-charges on retry",
    "logs secrets in debug mode",
    "needs a feature flag",
)
ZH_PEOPLE = ("小王", "李雷", "韩梅梅", "张伟", "用户", "产品经理", "运维同事")
ZH_COMPONENT = (
    "登录流程",
    "支付服务",
    "搜索索引",
    "缓存层",
    "持续集成流水线",
    "部署脚本",
    "数据库迁移",
    "网关",
    "用户设置页面",
    "通知服务",
    "导出任务",
    "限流器",
    "发票生成器",
    "审计日志",
    "记忆系统",
    "上下文包",
)
ZH_ACTION = ("修复了", "重构了", "决定保留", "迁移了", "优化了", "删除了", "重写了", "回滚了")
ZH_REASON = (
    "高负载下不稳定",
    "客户提出了需求",
    "延迟太高",
    "测试一直超时",
    "内存占用翻倍",
    "文档写错了",
    "阻塞了发布",
    "安全评审发现了问题",
    "旧的库已经没人维护",
)
ZH_PROBLEM = (
    "空输入时会报错",
    "超时后连接没有释放",
    "时区处理不对",
    "重试时会重复扣款",
    "调试模式下会打印密钥",
    "中文分词效果不好",
)
ZH_PREFERENCES = (
    "用户喜欢简洁的回答",
    "用户偏好中文回复，代码注释用英文",
    "周五下午不要部署",
    "代码评审需要两个人批准",
    "提交信息要写清楚原因",
    "先写测试再改代码",
)


def english_text(rng: random.Random) -> str:
    pick = rng.choice
    templates = (
        lambda: (
            f"{pick(EN_PEOPLE)} {pick(EN_ACTION)} the {pick(EN_COMPONENT)} with {pick(EN_TECH)}"
            f" because {pick(EN_REASON)}."
        ),
        lambda: f"Decision: use {pick(EN_TECH)} for the {pick(EN_COMPONENT)}; {pick(EN_REASON)}.",
        lambda: f"Open loop: the {pick(EN_COMPONENT)} still {pick(EN_PROBLEM)}.",
        lambda: (
            f"The {pick(EN_COMPONENT)} {pick(EN_PROBLEM)} when {pick(EN_TECH)} is upgraded;"
            f" {pick(EN_PEOPLE)} will look at it."
        ),
        lambda: (
            f"Preference: {pick(EN_PEOPLE)} wants {pick(EN_TECH)} examples in answers about"
            f" the {pick(EN_COMPONENT)}."
        ),
    )
    return pick(templates)()


def chinese_text(rng: random.Random) -> str:
    pick = rng.choice
    templates = (
        lambda: f"{pick(ZH_PEOPLE)}{pick(ZH_ACTION)}{pick(ZH_COMPONENT)}，原因是{pick(ZH_REASON)}。",
        lambda: f"决定：{pick(ZH_COMPONENT)}继续使用{pick(EN_TECH)}，因为{pick(ZH_REASON)}。",
        lambda: f"待办：{pick(ZH_COMPONENT)}{pick(ZH_PROBLEM)}，需要跟进。",
        lambda: f"偏好：{pick(ZH_PREFERENCES)}。",
    )
    return pick(templates)()


def mixed_text(rng: random.Random) -> str:
    pick = rng.choice
    return (
        f"{pick(EN_TECH)} 在{pick(ZH_COMPONENT)}里{pick(ZH_PROBLEM)}, need to check the"
        f" {pick(EN_COMPONENT)} tomorrow."
    )


def memory_text(rng: random.Random) -> str:
    """One short memory: about 60 % English, 25 % Chinese, 15 % mixed."""
    roll = rng.random()
    if roll < 0.60:
        return english_text(rng)
    return chinese_text(rng) if roll < 0.85 else mixed_text(rng)


def delta_body(rng: random.Random) -> dict[str, Any]:
    """A memory-delta request body with realistic fields."""
    body: dict[str, Any] = {
        "summary": memory_text(rng),
        "delta_type": rng.choice(DELTA_TYPES),
        "importance": rng.choices((1, 2, 3, 4, 5), weights=(1, 3, 5, 2, 1))[0],
        "project_key": rng.choice(PROJECTS),
        "retrieval_triggers": rng.sample(EN_TECH, 2) + [rng.choice(ZH_COMPONENT)],
    }
    if rng.random() < 0.3:
        body["why_it_matters"] = rng.choice(EN_REASON + ZH_REASON)
    return body


def search_query(rng: random.Random) -> str:
    """A varied query built from the same word lists (English, Chinese and mixed)."""
    pick = rng.choice
    templates = (
        lambda: pick(EN_TECH),
        lambda: pick(EN_COMPONENT),
        lambda: f"{pick(EN_COMPONENT)} {pick(EN_TECH)}",
        lambda: f"why did we change the {pick(EN_COMPONENT)}?",
        lambda: pick(ZH_COMPONENT),
        lambda: pick(ZH_REASON),
        lambda: f"{pick(ZH_COMPONENT)} {pick(EN_TECH)}",
        lambda: f"{pick(ZH_COMPONENT)}为什么{pick(ZH_PROBLEM)}",
    )
    return pick(templates)()


def typo_query(rng: random.Random) -> str:
    """An English query with one letter dropped from every word of five letters or more.

    Such queries often share no token with any memory, which sends search down its vector
    path (the KNN scan) instead of returning BM25 hits alone.
    """
    words = f"{rng.choice(EN_COMPONENT)} {rng.choice(EN_TECH)}".split()
    out = []
    for word in words:
        if len(word) >= 5:
            cut = rng.randrange(1, len(word) - 1)
            word = word[:cut] + word[cut + 1 :]
        out.append(word)
    return " ".join(out)


# -- statistics -----------------------------------------------------------------------------


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, min(len(sorted_values), round(pct / 100 * len(sorted_values) + 0.5)))
    return sorted_values[rank - 1]


@dataclass
class Stats:
    p50: float
    p95: float
    p99: float
    mean: float

    @classmethod
    def of(cls, samples_ms: list[float]) -> Stats:
        ordered = sorted(samples_ms)
        return cls(
            percentile(ordered, 50),
            percentile(ordered, 95),
            percentile(ordered, 99),
            statistics.fmean(ordered),
        )

    @classmethod
    def median_of(cls, runs: list[Stats]) -> Stats:
        return cls(*(statistics.median(getattr(r, f) for r in runs) for f in ("p50", "p95", "p99", "mean")))


@dataclass
class Report:
    memories: int
    seed_path: str
    seed_seconds: float
    runs: dict[str, list[Stats]] = field(default_factory=lambda: {op: [] for op in OPERATIONS})
    rows_at_end: int = 0
    vector_share: dict[str, float] = field(default_factory=dict)
    code: str = ""
    settings: str = ""


# -- the daemon -----------------------------------------------------------------------------


@dataclass
class Daemon:
    """A ``python -m daemon daemon run`` child process on a loopback port."""

    home: Path
    env: dict[str, str]
    port: int = 0
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def command(self) -> list[str]:
        """The daemon's command line (a benchmark may start it another way)."""
        return [sys.executable, "-m", "daemon", "daemon", "run", "--host", HOST, "--port", str(self.port)]

    def start(self, timeout: float = 30.0) -> None:
        self.port = free_port()
        log = open(self.home / "daemon-stdout.log", "ab")
        self.process = subprocess.Popen(
            self.command(),
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.process.returncode}; see {log.name}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"daemon did not answer /healthz within {timeout} s")

    def stop(self, timeout: float = 20.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.process = None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def add_agent(env: dict[str, str]) -> dict[str, Any]:
    """Create the bench agent with the real CLI; returns its JSON (api_key, workspace_id, id)."""
    out = subprocess.run(
        [sys.executable, "-m", "daemon", "agent", "add", "bench", "--runtime", "codex", "--json"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return json.loads(out.stdout)


# -- HTTP helpers ---------------------------------------------------------------------------


def check(response: httpx.Response) -> dict[str, Any]:
    if response.status_code != 200:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}:"
            f" {response.status_code} {response.text[:300]}"
        )
    return response.json()


def bootstrap(client: httpx.Client, project_key: str) -> dict[str, Any]:
    return check(
        client.post(
            "/api/agent/bootstrap/context", json={"project_key": project_key, "reason": "agent_startup"}
        )
    )


def post_delta(client: httpx.Client, receipt_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return check(
        client.post("/api/agent/memory-delta", json=body, headers={"X-AMP-Context-Receipt": receipt_id})
    )


def http_client(daemon: Daemon, api_key: str) -> httpx.Client:
    """One keep-alive client for the whole measurement."""
    return httpx.Client(
        base_url=daemon.url,
        timeout=30.0,
        headers={"Authorization": f"Bearer {api_key}"},
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
    )


# -- seeding --------------------------------------------------------------------------------


def seed_http(client: httpx.Client, rng: random.Random, count: int) -> float:
    """Write ``count`` memories through POST /api/agent/memory-delta; returns seconds."""
    receipt = bootstrap(client, PROJECTS[0])["receipt_id"]
    started = time.perf_counter()
    for _ in range(count):
        post_delta(client, receipt, delta_body(rng))
    return time.perf_counter() - started


def seed_store(home: Path, agent_id: str, rng: random.Random, count: int, batch: int = 500) -> float:
    """Write ``count`` memories directly through the Store (daemon stopped); returns seconds."""
    from daemon.runtime.changes import ContextChanges
    from daemon.runtime.deltas import DeltaService
    from state.config import load_settings
    from state.paths import resolve_paths
    from state.store import Store

    paths = resolve_paths({"MEMORYCLOUD_HOME": str(home)})
    store = Store.open(paths.database, load_settings(paths.config_file))
    started = time.perf_counter()
    try:
        identity = store.identities.get(agent_id)
        service = DeltaService(store, ContextChanges())  # no listeners: the daemon is stopped
        for first in range(0, count, batch):
            with store.transaction():
                for _ in range(min(batch, count - first)):
                    body = delta_body(rng)
                    service.record(
                        identity,
                        workspace_id=identity["workspace_id"],
                        project_key=body["project_key"],
                        delta_type=body["delta_type"],
                        summary=body["summary"],
                        why_it_matters=body.get("why_it_matters"),
                        triggers=body["retrieval_triggers"],
                        importance=body["importance"],
                        source="memory_delta",
                    )
    finally:
        store.close()
    return time.perf_counter() - started


def seed(
    daemon: Daemon, agent: dict[str, Any], rng: random.Random, args: argparse.Namespace
) -> tuple[str, float]:
    """Seed ``args.memories`` rows by the chosen path; the daemon is running on return."""
    total = args.memories
    if args.seed == "store":
        seconds = seed_store(daemon.home, agent["id"], rng, total)
        daemon.start()
        return (
            f"Store (DeltaService.record in-process, daemon stopped), {total / seconds:.0f} rows/s",
            seconds,
        )
    daemon.start()
    probe = total if args.seed == "http" else min(total, args.probe)
    with http_client(daemon, agent["api_key"]) as client:
        probe_seconds = seed_http(client, rng, probe)
        projected = probe_seconds / max(probe, 1) * total
        if args.seed == "http" or projected <= args.http_budget:
            seconds = probe_seconds + seed_http(client, rng, total - probe)
            return f"HTTP memory-delta, {total / seconds:.0f} rows/s", seconds
    daemon.stop()
    seconds = probe_seconds + seed_store(daemon.home, agent["id"], rng, total - probe)
    daemon.start()
    path = (
        f"Store (DeltaService.record in-process, daemon stopped): HTTP probe of {probe} deltas"
        f" took {probe_seconds / probe * 1000:.1f} ms each, projecting {projected:.0f} s"
        f" > {args.http_budget:.0f} s for {total}; {probe} rows via HTTP, the rest via the Store"
    )
    return path, seconds


# -- measurement ----------------------------------------------------------------------------


def timed(calls: Iterator[Callable[[], Any]]) -> list[float]:
    """Run each call and return its wall time in milliseconds."""
    samples = []
    for call in calls:
        started = time.perf_counter_ns()
        call()
        samples.append((time.perf_counter_ns() - started) / 1e6)
    return samples


def operation_calls(
    op: str, client: httpx.Client, workspace_id: str, rng: random.Random, count: int
) -> Iterator[Callable[[], Any]]:
    """``count`` ready-to-run requests of one kind (inputs drawn before timing starts)."""
    if op in ("search", "typo_search"):
        path = f"/api/workspaces/{workspace_id}/memory/query"
        make = search_query if op == "search" else typo_query
        for query in [make(rng) for _ in range(count)]:
            yield lambda q=query: check(client.get(path, params={"q": q}))
    elif op == "bootstrap":
        for project in [rng.choice(PROJECTS) for _ in range(count)]:
            yield lambda p=project: bootstrap(client, p)
    else:
        receipt = bootstrap(client, PROJECTS[0])["receipt_id"]
        for body in [delta_body(rng) for _ in range(count)]:
            yield lambda b=body: post_delta(client, receipt, b)


def measure(
    daemon: Daemon, agent: dict[str, Any], rng: random.Random, args: argparse.Namespace, report: Report
) -> None:
    with http_client(daemon, agent["api_key"]) as client:
        for run in range(1, args.repeat + 1):
            for op in OPERATIONS:
                timed(operation_calls(op, client, agent["workspace_id"], rng, args.warmup))
                samples = timed(operation_calls(op, client, agent["workspace_id"], rng, args.requests))
                stats = Stats.of(samples)
                report.runs[op].append(stats)
                print(
                    f"run {run}/{args.repeat} {op:<11} p50 {stats.p50:6.2f} ms  p95 {stats.p95:6.2f}"
                    f"  p99 {stats.p99:6.2f}  mean {stats.mean:6.2f}",
                    file=sys.stderr,
                )


def inspect_store(
    home: Path, workspace_id: str, random_seed: int, sample: int = 200
) -> tuple[int, dict[str, float]]:
    """After the daemon stopped: live memories, and per search kind the share of queries whose
    results came partly from the vector (KNN) ranking, i.e. that paid for a KNN scan."""
    from state.config import load_settings
    from state.paths import resolve_paths
    from state.store import Store

    paths = resolve_paths({"MEMORYCLOUD_HOME": str(home)})
    store = Store.open(paths.database, load_settings(paths.config_file))
    try:
        shares = {}
        for op, make in (("search", search_query), ("typo_search", typo_query)):
            rng = random.Random(random_seed)
            used = sum(
                any(
                    getattr(hit, "vector_rank", None) is not None
                    for hit in store.search.search(make(rng), [workspace_id], limit=8)
                )
                for _ in range(sample)
            )
            shares[op] = used / sample
        return store.memories.count(), shares
    finally:
        store.close()


# -- output ---------------------------------------------------------------------------------


def markdown_table(report: Report) -> str:
    lines = [
        "| operation | p50 ms | p95 ms | p99 ms | mean ms | p50 of each run | target p50 | met |",
        "|---|---:|---:|---:|---:|---|---:|---|",
    ]
    for op in OPERATIONS:
        med = Stats.median_of(report.runs[op])
        each = ", ".join(f"{r.p50:.2f}" for r in report.runs[op])
        label = LABELS[op]
        if op in report.vector_share:
            label += f" ({report.vector_share[op]:.0%} use the KNN scan)"
        met = "yes" if med.p50 <= TARGETS_MS[op] else "**no**"
        lines.append(
            f"| {label} | {med.p50:.2f} | {med.p95:.2f} | {med.p99:.2f} | {med.mean:.2f}"
            f" | {each} | <= {TARGETS_MS[op]:g} | {met} |"
        )
    return "\n".join(lines)


def machine() -> str:
    from state.db import connect

    conn = connect(":memory:")
    try:
        sqlite_version, vec_version = conn.execute("select sqlite_version(), vec_version()").fetchone()
    finally:
        conn.close()
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores (shared, noisy),"
        f" Python {platform.python_version()}, SQLite {sqlite_version}, sqlite-vec {vec_version}"
    )


def code_state() -> str:
    """The commit measured, marked dirty if the working tree had changes (they were measured)."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=RESULTS_FILE.parent,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git)"
    return out.stdout.strip()


def settings_summary(home: Path) -> str:
    """The search settings the daemon ran with (from its config file)."""
    from state.config import load_settings
    from state.paths import resolve_paths

    settings = load_settings(resolve_paths({"MEMORYCLOUD_HOME": str(home)}).config_file)
    names = ("embedder", "dimension", "vector_mode", "bm25_weight", "vector_weight", "max_items")
    return ", ".join(f"{n}={getattr(settings, n)}" for n in names if hasattr(settings, n))


def section(report: Report, args: argparse.Namespace, command: str) -> str:
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"""{SECTION}

Command: `{command}` (run from the repository root)

Date: {date}. Code: `{report.code}`. Settings: {report.settings}.
Machine: {machine()}. Client and daemon share the machine.

A real `python -m daemon daemon run` process on loopback, one keep-alive `httpx.Client`, one
request at a time. Store: N = {report.memories} seeded memories (mixed English/Chinese, 4 projects)
via {report.seed_path}; {report.rows_at_end} live memories at the end (the measured deltas add
rows). Each run: {args.warmup} warm-up then {args.requests} timed requests per operation;
{args.repeat} runs; the figures are the **median over runs** of each run's percentile (the
machine is noisy, medians are what to compare). Times are client wall time per request
(HTTP round trip included). Search queries are words and phrases from the seed vocabulary
(English, Chinese, mixed); the misspelt ones drop a letter from each word of five letters or
more. "use the KNN scan" is the share of a 200-query sample (same generator, checked on the
store afterwards) whose results include vector-ranked hits.

{markdown_table(report)}

Targets (from the issue): search p50 <= 10 ms, bootstrap/context p50 <= 5 ms, memory-delta
p50 <= 2 ms. For scale, the public AMP reference implementation measured on this machine:
bootstrap/context 5 ms at 1k deltas and 40 ms at 11k deltas, 4.5 ms per memory delta.
"""


def write_results(text: str) -> None:
    write_section(SECTION, text)


# -- main -----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Measure search, bootstrap/context and memory-delta latency over HTTP"
        " against a real daemon process (loopback only)."
    )
    parser.add_argument("--memories", type=int, default=10_000, help="memories to seed (default 10000)")
    parser.add_argument("--requests", type=int, default=300, help="timed requests per operation and run")
    parser.add_argument("--warmup", type=int, default=20, help="untimed requests before each measurement")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the report takes medians over runs")
    parser.add_argument(
        "--seed",
        choices=("auto", "http", "store"),
        default="auto",
        help="seeding path: auto = HTTP if it projects under --http-budget, else Store",
    )
    parser.add_argument(
        "--http-budget",
        type=float,
        default=60.0,
        help="seconds HTTP seeding may take before auto switches to the Store",
    )
    parser.add_argument("--probe", type=int, default=500, help="HTTP deltas timed by --seed auto")
    parser.add_argument("--random-seed", type=int, default=20240601, help="seed of the text generator")
    parser.add_argument("--write", action="store_true", help=f"update the section in {RESULTS_FILE.name}")
    parser.add_argument("--keep-home", action="store_true", help="keep the temp MEMORYCLOUD_HOME")
    args = parser.parse_args(argv)
    for name in ("memories", "requests", "repeat", "probe"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    return args


def run(args: argparse.Namespace, home: Path) -> Report:
    env = {**os.environ, "MEMORYCLOUD_HOME": str(home), "MEMORYCLOUD_SECRETS": "file"}
    rng = random.Random(args.random_seed)
    agent = add_agent(env)
    daemon = Daemon(home, env)
    try:
        seed_path, seed_seconds = seed(daemon, agent, rng, args)
        print(f"seeded {args.memories} memories in {seed_seconds:.1f} s via {seed_path}", file=sys.stderr)
        report = Report(args.memories, seed_path, seed_seconds)
        measure(daemon, agent, rng, args, report)
    finally:
        daemon.stop()
    report.rows_at_end, report.vector_share = inspect_store(home, agent["workspace_id"], args.random_seed)
    report.code = code_state()
    report.settings = settings_summary(home)
    return report


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = shlex.join(["python", os.path.relpath(__file__), *(sys.argv[1:] if argv is None else argv)])
    home = Path(tempfile.mkdtemp(prefix="mc-latency-"))
    try:
        report = run(args, home)
    finally:
        if not args.keep_home:
            shutil.rmtree(home, ignore_errors=True)
        else:
            print(f"kept MEMORYCLOUD_HOME at {home}", file=sys.stderr)
    text = section(report, args, command)
    print(text)
    if args.write:
        write_results(text)
        print(f"updated {RESULTS_FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
