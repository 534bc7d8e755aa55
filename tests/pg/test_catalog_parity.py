"""The memory-suite catalog's search ranks alike on both engines (issue #18: "search on
PostgreSQL with the same ranking inputs"): FTS5's bm25() over suite_fts on SQLite, the same
formula over the same tokens in SQL on PostgreSQL (state/suite_records.py). The same suites
go into both stores; each query's order must be the same, where scores differ (ties may
come in either order)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from state.config import Settings
from state.pg.store import PgStore
from state.store import Store

SUITES = [
    ("postgres-ops", "Postgres operations", "backups, vacuum and upgrades of postgres", ["postgres", "ops"]),
    ("postgres-tuning", "Postgres tuning", "postgres postgres postgres: indexes and plans", ["postgres"]),
    ("sqlite-habits", "SQLite habits", "WAL mode, checkpoints and backups of one file", ["sqlite"]),
    ("deploy-runbook", "Deploy runbook", "blue-green deploys, rollbacks and the release freeze", ["deploy"]),
    ("frontend-style", "Frontend style", "React components, CSS modules and accessibility checks", ["web"]),
    ("incident-notes", "Incident notes", "what broke, the timeline and the follow-ups, backups included", []),
    ("记忆-系统", "记忆系统", "原生记忆系统的设计与备份", ["中文"]),
    ("release-train", "Release train", "weekly releases; the freeze starts Thursday", ["deploy", "release"]),
    (
        "betriebshandbuch",
        "Betriebshandbuch",
        "Die Sicherungen der Datenbanken werden jeden Freitag von uns geprüft",
        ["betrieb"],
    ),
]
QUERIES = [
    "postgres",
    "backups",
    "postgres backups",
    "deploy freeze",
    "release",
    "记忆 备份",
    "accessibility react",
    "the",
    "nothing-matches-this",
    "Sicherung Datenbank",
]


def fill(store: Store) -> None:
    with store.transaction():
        for slug, title, summary, tags in SUITES:
            store.suites.add_version(
                slug=slug,
                title=title,
                summary=summary,
                version="1.0.0",
                legacy=False,
                manifest={},
                files={"MEMORY.md": summary},
                file_sha={"MEMORY.md": "0" * 64},
                archive_sha256="0" * 64,
                identity_id=None,
                tags=tags,
                size_bytes=len(summary),
                changelog="",
            )


@pytest.fixture
def stores(tmp_path: Path, pg_url: str) -> Iterator[tuple[Store, Store]]:
    sqlite, postgres = Store.open(tmp_path / "m.db", Settings()), PgStore.open(pg_url, Settings())
    fill(sqlite)
    fill(postgres)
    yield sqlite, postgres
    sqlite.close()
    postgres.close()


def ranked(store: Store, query: str) -> list[str]:
    return [suite["slug"] for suite in store.suites.catalog(query, 20)]


@pytest.mark.parametrize("query", QUERIES)
def test_the_catalog_ranks_alike_on_both_engines(stores: tuple[Store, Store], query: str) -> None:
    sqlite, postgres = stores
    assert ranked(postgres, query) == ranked(sqlite, query)


def test_bm25_not_the_number_of_terms_held_decides(stores: tuple[Store, Store]) -> None:
    """A suite that repeats a rare term outranks one holding a common term besides: what
    counting the query terms a suite holds (this engine's earlier ranking) got wrong."""
    sqlite, postgres = stores
    for store in (sqlite, postgres):
        order = ranked(store, "postgres backups")
        assert order.index("postgres-tuning") < order.index("incident-notes"), order
        assert order[0] == "postgres-ops"


def test_a_suite_in_another_language_is_found_in_other_word_forms(stores: tuple[Store, Store]) -> None:
    """A German summary holds German stems (tokenizer 7, state/languages.py): a catalog query
    asks for its words in every language, so "Sicherung Datenbank" finds "Sicherungen der
    Datenbanken" on both engines."""
    for store in stores:
        assert ranked(store, "Sicherung Datenbank")[:1] == ["betriebshandbuch"]
        assert ranked(store, "backups")[:1] != ["betriebshandbuch"]
