"""A store made by an earlier release's real code, opened by this one (issue #16, "Existing
stores"): what the earlier daemon wrote is re-indexed by this daemon's job, and searches that
the earlier tokens could not answer by words now can. SQLite (a machine's store) or
PostgreSQL (a team server's).

1. ``git archive REV`` of the earlier release into a temporary directory (and, for
   ``--engine postgresql``, a PostgreSQL 16 with pgvector from the ``pgserver`` wheel).
2. That release's daemon (from its own code; ``--role cloud --database URL`` on PostgreSQL)
   gets an agent and memory deltas over HTTP: texts with letters tokenizer 5 folds (Łódź,
   København, Tromsø, đường), two stamped conversation turns, and texts whose spellings
   tokenizer 6 meets (a Hebrew prefix, Persian letters, a nukta, a Ukrainian apostrophe,
   traditional Chinese), a German, a Polish and a Persian text that tokenizer 7 stems in
   their own language, a Lithuanian, a Serbian (Cyrillic) and a Nepali one that 8 does, and
   three notes that start with a label ("Decision: ...") that 9 no longer takes for a
   conversation's turns, and two that start with a header's ("Title: ...") that 10 does not.
3. This code's daemon on the same home (and database): the time until ``GET
   /api/local/status`` says the search index is current; where this code's search ranks each
   memory by its words, and how many other memories those words find, before (the store as
   the earlier release left it: opening it only plans the rebuild) and after; on PostgreSQL,
   whether the document counts the index keeps equal a recount of its rows.

    python bench/previous_release.py --old 21086db --engine sqlite --write
    python bench/previous_release.py --old 21086db --engine postgresql --write
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from harness import ROOT, create_agents, daemon_env, machine_line, owner_key
from latency import Daemon
from results import write_section

SECTION = "## Search: a store of an earlier release opened by this one (issue #16)"
TEXTS = [
    "The offsite moves to Łódź, by the old factory.",
    "Kontoret i København lukker kl. 16 om fredagen.",
    "[2023-05-08 19:02] Caroline: Where should we hold the retreat?",
    "[2023-05-08 19:03] Maya: Somewhere by a lake, maybe near Tromsø.",
    "Cuộc họp ở đường Lê Lợi lúc 9 giờ.",
    "הפגישה נדחתה לשבוע הבא",
    "کتاب جدید را دیروز خواندم",
    "कृपया नई फ़ाइल अपलोड करें",
    "Зустріч перенесли на п’ятницю",
    "團隊會議改到週五下午",
    "Die Besprechungen mit den Kunden wurden auf Freitag verschoben.",
    "Spotkania z klientami przeniesiono na piątek, bo serwer nie działa.",
    "دانشجویان این دانشگاه امروز امتحان دارند.",
    "Susitikimai su klientais buvo atidėti iki penktadienio, nes serveris neveikia.",
    "Састанци са купцима су одложени за петак јер сервер не ради.",
    "ग्राहकहरूसँगको बैठक शुक्रबारसम्म सारिएको छ किनभने सर्भरले काम गरेको छैन।",
    "Decision: keep SQLite in WAL mode for crash safety",
    "Decision: the billing export runs every Friday night after the backup",
    "Decision: deploy checklist is run migrations, warm the cache, flip the flag",
    "Title: Onboarding. New hires get a laptop and a VPN account on day one.",
    "Title: Runbook. Restart the queue worker, then check the queue depth.",
]
# (query, the text it is about): the letters' words alone, written without the letters (what
# tokenizer 5 folds), one with them (found by words before and after), words spelt another
# way than stored (what tokenizer 6 meets), other forms of German, Polish and Persian words
# (7) and of Lithuanian, Serbian (in Latin letters) and Nepali ones (8), and a labelled note's
# words, which tokenizer 8 also put in the context of the two notes after it (9 does not),
# and a note's that starts with a header's label, which 8 and 9 did (10 does not).
QUERIES = [
    ("Lodz", TEXTS[0]),
    ("Kobenhavn", TEXTS[1]),
    ("Tromso", TEXTS[3]),
    ("duong", TEXTS[4]),
    ("Łódź", TEXTS[0]),
    ("פגישה", TEXTS[5]),
    ("كتاب", TEXTS[6]),
    ("फाइल", TEXTS[7]),
    ("пятницю", TEXTS[8]),
    ("会议", TEXTS[9]),
    ("Besprechung Kunde", TEXTS[10]),
    ("spotkanie klient", TEXTS[11]),
    ("دانشجو", TEXTS[12]),
    ("susitikimas klientas", TEXTS[13]),
    ("kupci", TEXTS[14]),
    ("ग्राहक बैठकमा", TEXTS[15]),
    ("WAL crash safety", TEXTS[16]),
    ("billing export", TEXTS[17]),
    ("VPN laptop", TEXTS[19]),
]


class CodeDaemon(Daemon):
    """A daemon run from the checkout ``code``: on the home's SQLite store, or a cloud daemon
    on the PostgreSQL database ``url``."""

    def __init__(self, home: Path, env: dict[str, str], code: Path, url: str | None) -> None:
        super().__init__(home, {**env, "PYTHONPATH": str(code)})
        self.code, self.database = code, url

    def command(self) -> list[str]:
        extra = ["--role", "cloud", "--database", self.database] if self.database else []
        return [*super().command(), *extra]

    def start(self, timeout: float = 60.0) -> None:
        cwd = os.getcwd()
        os.chdir(self.code)  # ``python -m daemon`` imports from the working directory first
        try:
            super().start(timeout)
        finally:
            os.chdir(cwd)


def open_store(home: Path, url: str | None) -> Any:
    """This code's store on the home's SQLite file or the database ``url``."""
    from state.config import Settings, load_settings
    from state.paths import resolve_paths

    if url is None:
        from state.store import Store

        paths = resolve_paths({"MEMORYCLOUD_HOME": str(home)})
        return Store.open(paths.database, load_settings(paths.config_file))
    from state.pg.store import PgStore

    return PgStore.open(url, Settings())


def word_ranks(home: Path, url: str | None) -> dict[str, tuple[int | None, int]]:
    """query -> the BM25 rank of its memory in this code's search (None: words do not find
    it) and how many other memories its words find. In process, on the store as it is:
    opening it only plans a rebuild."""
    store = open_store(home, url)
    try:
        conn = store.conn
        namespaces = [row[0] for row in conn.execute("select distinct namespace from memory_records")]
        seq_of = {content: seq for seq, content in conn.execute("select seq, content from memory_records")}
        out = {}
        for query, text in QUERIES:
            hits = {hit.seq: hit for hit in store.search.search(query, namespaces, limit=10)}
            hit = hits.get(seq_of[text])
            others = sum(1 for seq, h in hits.items() if h.bm25_rank is not None and seq != seq_of[text])
            out[query] = (hit.bm25_rank if hit is not None else None, others)
        return out
    finally:
        store.close()


def counts_kept(url: str) -> bool:
    import psycopg

    with psycopg.connect(url) as conn:
        kept = dict(conn.execute("select term, docs from search_terms where docs > 0").fetchall())
        recount = dict(
            conn.execute(
                "select lexeme, count(*) from memory_search, unnest(tsvector_to_array(tokens)) lexeme"
                " group by lexeme"
            ).fetchall()
        )
    return kept == recount


def run(old_rev: str, engine: str, tmp: Path) -> dict[str, Any]:
    old = tmp / "old"
    old.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", old_rev], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
    server, url = None, None
    if engine == "postgresql":
        import pgserver
        import psycopg

        server = pgserver.get_server(tmp / "pgdata", cleanup_mode="stop")
        with psycopg.connect(server.get_uri(), autocommit=True) as admin:
            admin.execute("create database team")
        url = server.get_uri().replace("/postgres?", "/team?")
    try:
        home = tmp / "home"
        home.mkdir()
        env = daemon_env(home)
        daemon = CodeDaemon(home, env, old, url)
        daemon.start()
        try:
            agent = asyncio.run(create_agents(daemon.port, owner_key(home), 1))[0]
            with httpx.Client(
                base_url=daemon.url, headers={"Authorization": f"Bearer {agent['api_key']}"}, timeout=10
            ) as http:
                receipt = http.post("/api/agent/bootstrap/context", json={"reason": "agent_startup"}).json()
                for text in TEXTS:
                    http.post(
                        "/api/agent/memory-delta",
                        headers={"X-AMP-Context-Receipt": receipt["receipt_id"]},
                        json={"delta_type": "decision", "summary": text, "importance": 3},
                    ).raise_for_status()
        finally:
            daemon.stop()
        before = word_ranks(home, url)
        daemon = CodeDaemon(home, env, ROOT, url)
        started = time.perf_counter()
        daemon.start()
        try:
            with httpx.Client(
                base_url=daemon.url, headers={"Authorization": f"Bearer {owner_key(home)}"}, timeout=10
            ) as http:
                while (index := http.get("/api/local/status").json()["search_index"])["state"] != "current":
                    if time.perf_counter() - started > 120:
                        raise RuntimeError(f"the rebuild did not finish: {index['text']}")
                    time.sleep(0.1)
            current = time.perf_counter() - started
        finally:
            daemon.stop()
        after = word_ranks(home, url)
        counts = counts_kept(url) if url is not None else None
        return {"before": before, "after": after, "seconds": current, "index": index, "counts": counts}
    finally:
        if server is not None:
            server.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--old", required=True, help="the earlier release's commit (e.g. 21086db: tokenizer 4)"
    )
    parser.add_argument("--engine", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    date = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="mc-previous-release-") as tmp:
        got = run(args.old, args.engine, Path(tmp))
    new_rev = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    rows = [
        "| query | its memory | BM25 rank, the store as the earlier release left it | after the rebuild"
        " | other memories its words find, before / after |",
        "|---|---|---:|---:|---:|",
    ]
    for query, text in QUERIES:
        (before, others_before), (after, others_after) = got["before"][query], got["after"][query]
        rows.append(
            f"| {query} | {text[:40]} | {before or 'not found'} | {after or 'not found'}"
            f" | {others_before} / {others_after} |"
        )
    where = (
        "a new team database (PostgreSQL 16 + pgvector, pgserver)"
        if args.engine == "postgresql"
        else "a new home (its SQLite store)"
    )
    counts = (
        f", and the counts its index keeps {'equal' if got['counts'] else 'DO NOT equal'} a recount of its rows"
        if got["counts"] is not None
        else ""
    )
    command = "python bench/previous_release.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    text = "\n".join(
        [
            f"{SECTION}, {args.engine}",
            "",
            f"Command: `{command.strip()}` (repository root). Date: {date:%Y-%m-%d %H:%M} UTC. Earlier"
            f" release: `{args.old}`; this release: `{new_rev}`.",
            f"Machine: {machine_line()}.",
            "",
            f"The earlier release's daemon wrote {len(TEXTS)} memory deltas to {where}; this"
            " release's daemon on the same store reported its search index current"
            f" {got['seconds']:.1f} s after it was started"
            f" (`{got['index']['indexes']['memory_fts']['built_with']}`){counts}. Where this code's"
            " search ranks each memory by its words (BM25, in process; before: the store as the"
            " earlier release left it, which a query with the letters still matches), and how many"
            " other memories the same words find (top 10):",
            "",
            *rows,
            "",
        ]
    )
    print(text)
    if args.write:
        write_section(f"{SECTION}, {args.engine}", text)
    return 1 if got["counts"] is False else 0


if __name__ == "__main__":
    sys.exit(main())
