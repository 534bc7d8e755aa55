"""Rows for memory suites, their versions and files."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any, TypedDict, cast

from state import languages, tokenize
from state.db import Connection
from state.errors import NotFound
from state.ids import new_id, now_iso
from state.json_text import loads
from state.tokenize import fts_match, query_terms


def semver_key(version: str) -> tuple:
    """Semantic-version order: numbers numerically; a pre-release sorts before its release."""
    core, _, pre = version.split("+", 1)[0].partition("-")
    numbers = tuple(int(p) if p.isdigit() else 0 for p in core.split("."))
    return numbers + ((1,) if not pre else (0, pre))


class SuiteRecord(TypedDict):
    """A row of suites, its tags decoded from JSON."""

    id: str
    slug: str
    title: str
    summary: str
    latest_version: str
    legacy: int  # 1: imported from an archive without suite/manifest.json
    created_by: str | None
    created_at: str
    updated_at: str
    visibility: str  # public | unlisted | private
    persona_type: str
    license: str
    tags: list[str]
    price_cents: int
    install_count: int
    download_count: int


class SuiteVersionSummary(TypedDict):
    """Some columns of a suite_versions row: a version as the version list shows it."""

    id: str
    version: str
    archive_sha256: str
    size_bytes: int | None  # None for versions stored before sizes were kept
    changelog: str | None
    created_by: str | None
    created_at: str


class SuiteVersionRecord(TypedDict):
    """A row of suite_versions, its manifest decoded, without the archive's bytes (see
    ``SuiteRecords.archive``) but with ``verbatim``: whether it has them."""

    id: str
    suite_id: str
    version: str
    manifest: dict[str, Any]  # manifest.json as stored
    archive_sha256: str  # of the canonical zip, or of the upload kept verbatim
    size_bytes: int | None  # None for versions stored before sizes were kept
    changelog: str | None
    created_by: str | None
    created_at: str
    verbatim: int  # computed (archive is not null): 1 when the uploaded zip is served as it was


class StoredSuiteVersion(SuiteVersionRecord):
    """A version with its files (from suite_files) and its suite."""

    files: dict[str, str]  # path -> content
    file_sha256: dict[str, str]  # path -> sha256 of the content
    suite: SuiteRecord


class InstalledOpenMemoryRecord(TypedDict):
    """A row of installed_open_memories (a suite installed into a workspace), its JSON decoded."""

    id: str
    workspace_id: str
    project_key: str | None
    suite_id: str
    slug: str
    version: str
    title: str
    provenance: dict[str, Any]  # the manifest's provenance ({} if it has none)
    archive_sha256: str
    memory_ids: list[str]  # the workspace memories it added
    conflict_ids: list[str]  # conflicts held for the person
    steps: list[str]  # the install order as carried out
    retrieval_test: dict[str, Any]  # {query, hits, passed}
    installed_by: str | None
    installed_at: str


class InstalledLens(TypedDict):
    """An installed suite as a lens (``SuiteRecords.installed_lenses``): some columns of its
    installed_open_memories row, how many memories it added and the first few of them."""

    installed_memory_id: str  # the row's id
    slug: str
    title: str
    version: str
    memory_count: int
    facts: list[str]  # the contents of its first live memories


_INSTALLED_JSON = ("provenance", "memory_ids", "conflict_ids", "steps", "retrieval_test")


def _installed(row: Any) -> InstalledOpenMemoryRecord:
    installed = dict(row)
    for key in _INSTALLED_JSON:
        installed[key] = loads(installed[key])
    return cast(InstalledOpenMemoryRecord, installed)


def _catalog_tokens(suite: SuiteRecord, tokenizer: ModuleType = tokenize) -> str:
    """What the catalog search finds a suite by: its slug, title, summary and tags."""
    return tokenizer.index_text(
        f"{suite['slug']} {suite['title']} {suite['summary']} {' '.join(suite['tags'])}"
    )


def _catalog_terms(query: str) -> list[str]:
    """A catalog query's terms: its words as English and as each language's texts hold them
    (tokenizer 7: a German summary holds German stems; the catalog is small, so every
    language is asked rather than those it holds)."""
    return query_terms(query) + tokenize.language_terms(query, languages.CODES)


# The catalog's BM25 on PostgreSQL: FTS5's bm25() of the SQLite engine's suite_fts (the same
# space-separated tokens, k1 and b, IDF ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6), computed
# over the whole catalog at each search: it is small (a suite per memory pack, not per memory).
# Equal scores: the newest first.
_PG_CATALOG_BM25 = """
with docs as (select slug, string_to_array(tokens, ' ') as tokens from suite_fts),
stats as (select count(*)::float8 as n, greatest(avg(cardinality(tokens)), 1)::float8 as avgdl from docs),
held as (
    select d.slug, t.token as term, count(*)::float8 as freq, cardinality(d.tokens)::float8 as length
    from docs d cross join lateral unnest(d.tokens) as t(token)
    where t.token = any(?::text[])
    group by d.slug, t.token, cardinality(d.tokens)
),
holders as (select term, count(*)::float8 as n from held group by term),
scored as (
    select h.slug,
           sum(greatest(ln((stats.n - holders.n + 0.5) / (holders.n + 0.5)), 1e-6)
               * h.freq * (? + 1) / (h.freq + ? * (1 - ? + ? * h.length / stats.avgdl))) as score
    from held h join holders using (term) cross join stats
    group by h.slug
)
select s.* from scored join suites s on s.slug = scored.slug
where true{filters}
order by round(scored.score::numeric, 9) desc, s.updated_at desc, s.id desc
limit cast(? as integer) offset cast(? as integer)
"""


def _suite(row: Any) -> SuiteRecord:
    suite = dict(row)
    suite["tags"] = loads(suite["tags"])
    return cast(SuiteRecord, suite)


class SuiteRecords:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def suite(self, slug: str) -> SuiteRecord:
        found = self.find(slug)
        if found is None:
            raise NotFound(f"memory suite {slug} not found")
        return found

    def find(self, slug: str) -> SuiteRecord | None:
        row = self.conn.execute("select * from suites where slug = ?", (slug,)).fetchone()
        return _suite(row) if row else None

    def add_version(
        self,
        *,
        slug: str,
        title: str,
        summary: str,
        version: str,
        legacy: bool,
        manifest: dict[str, Any],
        files: dict[str, str],
        file_sha: dict[str, str],
        archive_sha256: str,
        identity_id: str | None,
        tags: list[str],
        size_bytes: int,
        changelog: str,
        archive: bytes | None = None,
        package: dict[str, Any] | None = None,
    ) -> SuiteRecord:
        """Store one version (creating the suite on its first); call inside a transaction.

        ``package`` holds the suite's own attributes when it is created (visibility,
        persona_type, price_cents); ``archive`` the uploaded zip when it must be served
        verbatim (None: the canonical zip of ``files``)."""
        now = now_iso()
        suite = self.find(slug)
        license_ = str(manifest.get("license") or "")
        persona = str(manifest.get("persona_type") or "agent")
        if suite is None:
            package = package or {}
            suite_id = new_id("suite_")
            self.conn.execute(
                "insert into suites (id, slug, title, summary, latest_version, legacy, created_by,"
                " created_at, updated_at, visibility, persona_type, license, tags, price_cents)"
                " values (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    suite_id,
                    slug,
                    title,
                    summary,
                    version,
                    int(legacy),
                    identity_id,
                    now,
                    now,
                    package.get("visibility", "public"),
                    package.get("persona_type", persona),
                    license_,
                    json.dumps(tags, ensure_ascii=False),
                    package.get("price_cents", 0),
                ),
            )
        else:
            suite_id = suite["id"]
            # An older version imported later is kept, but never becomes the latest.
            if semver_key(version) >= semver_key(suite["latest_version"]):
                self.conn.execute(
                    "update suites set title = ?, summary = ?, latest_version = ?, legacy = ?,"
                    " license = ?, tags = ?, updated_at = ? where id = ?",
                    (
                        title,
                        summary,
                        version,
                        int(legacy),
                        license_,
                        json.dumps(tags, ensure_ascii=False),
                        now,
                        suite_id,
                    ),
                )
            self.conn.execute("delete from suite_fts where slug = ?", (slug,))
        version_id = new_id("suitever_")
        self.conn.execute(
            "insert into suite_versions (id, suite_id, version, manifest, archive_sha256,"
            " created_by, created_at, changelog, size_bytes, archive) values (?,?,?,?,?,?,?,?,?,?)",
            (
                version_id,
                suite_id,
                version,
                json.dumps(manifest, ensure_ascii=False),
                archive_sha256,
                identity_id,
                now,
                changelog,
                size_bytes,
                archive,
            ),
        )
        self.conn.executemany(
            "insert into suite_files (version_id, path, content, sha256) values (?,?,?,?)",
            [(version_id, path, content, file_sha[path]) for path, content in sorted(files.items())],
        )
        current = self.suite(slug)
        self.conn.execute(
            "insert into suite_fts (slug, tokens) values (?, ?)", (slug, _catalog_tokens(current))
        )
        return current

    def reindex(self, tokenizer: ModuleType) -> int:
        """Make the catalog index afresh with ``tokenizer`` (the current one: state/rebuild.py
        calls this when it changed); the number of suites indexed. Call inside a transaction."""
        self.conn.execute("drop table if exists suite_fts")
        option = tokenizer.FTS_TOKENIZER.replace("'", "''")
        self.conn.execute(
            f"create virtual table suite_fts using fts5(slug unindexed, tokens, tokenize = '{option}')"
        )
        suites = [_suite(row) for row in self.conn.execute("select * from suites")]
        self.conn.executemany(
            "insert into suite_fts (slug, tokens) values (?, ?)",
            [(s["slug"], _catalog_tokens(s, tokenizer)) for s in suites],
        )
        return len(suites)

    def count(self, slug: str, counter: str) -> None:
        """Add one to a suite's download or install counter."""
        column = {"download": "download_count", "install": "install_count"}[counter]
        self.conn.execute(f"update suites set {column} = {column} + 1 where slug = ?", (slug,))

    def versions(self, slug: str) -> list[SuiteVersionSummary]:
        """Every version of a suite, oldest first (without files or archive bytes)."""
        suite = self.suite(slug)
        rows = self.conn.execute(
            "select id, version, archive_sha256, size_bytes, changelog, created_by, created_at"
            " from suite_versions where suite_id = ? order by created_at, id",
            (suite["id"],),
        ).fetchall()
        return [cast(SuiteVersionSummary, dict(r)) for r in rows]

    def version_info(self, suite: SuiteRecord, version: str | None = None) -> SuiteVersionRecord:
        """One version's row (the latest by default) with its manifest, without files or the
        archive's bytes."""
        version = version or suite["latest_version"]
        row = self.conn.execute(
            "select id, suite_id, version, manifest, archive_sha256, size_bytes, changelog,"
            " created_by, created_at, archive is not null as verbatim from suite_versions"
            " where suite_id = ? and version = ?",
            (suite["id"], version),
        ).fetchone()
        if row is None:
            raise NotFound(f"memory suite {suite['slug']} has no version {version}")
        result = dict(row)
        result["manifest"] = loads(result["manifest"])
        return cast(SuiteVersionRecord, result)

    def archive(self, version_id: str) -> bytes | None:
        """The zip kept verbatim for this version (an import), or None (rebuilt from files)."""
        row = self.conn.execute("select archive from suite_versions where id = ?", (version_id,)).fetchone()
        return bytes(row[0]) if row and row[0] is not None else None

    def set_size(self, version_id: str, size_bytes: int) -> None:
        """Remember a version's archive size (versions stored before sizes were kept)."""
        self.conn.execute("update suite_versions set size_bytes = ? where id = ?", (size_bytes, version_id))

    def version(self, slug: str, version: str | None = None) -> StoredSuiteVersion:
        """One version (the latest by default) with its manifest and files."""
        suite = self.suite(slug)
        info = self.version_info(suite, version)
        files = self.conn.execute(
            "select path, content, sha256 from suite_files where version_id = ? order by path", (info["id"],)
        ).fetchall()
        return {
            **info,
            "files": {f["path"]: f["content"] for f in files},
            "file_sha256": {f["path"]: f["sha256"] for f in files},
            "suite": suite,
        }

    def catalog(
        self,
        query: str | None,
        limit: int,
        *,
        offset: int = 0,
        tag: str | None = None,
        public_only: bool = False,
    ) -> list[SuiteRecord]:
        """Suites matching the query (best first) or all (newest first), optionally only the
        public ones and only those with a tag."""
        where, params = [], []
        if public_only:
            where.append("s.visibility = 'public'")
        if tag:
            where.append("exists (select 1 from json_each(s.tags) where value = ?)")
            params.append(tag)
        terms = _catalog_terms(query) if query else []
        if terms and getattr(self.conn, "engine", "sqlite") == "postgresql":
            from state.pg.search import K1, B

            filters = "".join(f" and {w}" for w in where)
            rows = self.conn.execute(
                _PG_CATALOG_BM25.format(filters=filters),
                (sorted(set(terms)), K1, K1, B, B, *params, limit, offset),
            )
        elif terms and (match := fts_match(terms)):
            filters = "".join(f" and {w}" for w in where)
            rows = self.conn.execute(
                "select s.* from suite_fts f join suites s on s.slug = f.slug"
                f" where suite_fts match ?{filters} order by bm25(suite_fts) limit cast(? as integer) offset cast(? as integer)",
                (match, *params, limit, offset),
            )
        else:
            filters = f" where {' and '.join(where)}" if where else ""
            rows = self.conn.execute(
                f"select s.* from suites s{filters} order by s.updated_at desc, s.id desc limit cast(? as integer) offset cast(? as integer)",
                (*params, limit, offset),
            )
        return [_suite(r) for r in rows]

    def created_by(self, identity_id: str | None) -> list[SuiteRecord]:
        """The suites an identity created (every suite for None), newest first."""
        if identity_id is None:
            rows = self.conn.execute("select * from suites order by created_at desc, id desc")
        else:
            rows = self.conn.execute(
                "select * from suites where created_by = ? order by created_at desc, id desc", (identity_id,)
            )
        return [_suite(r) for r in rows]

    def slugs_like(self, base: str) -> set[str]:
        """Taken slugs among ``base`` and ``base-2``, ``base-3`` ... (for unique slugs)."""
        rows = self.conn.execute("select slug from suites where slug = ? or slug like ?", (base, f"{base}-%"))
        return {r[0] for r in rows}

    def add_installed(self, installed: InstalledOpenMemoryRecord) -> None:
        """Record a suite installed into a workspace (an installed open memory); its
        provenance, memory_ids, conflict_ids, steps and retrieval_test are stored as JSON."""
        self.conn.execute(
            "insert into installed_open_memories (id, workspace_id, project_key, suite_id, slug,"
            " version, title, provenance, archive_sha256, memory_ids, conflict_ids, steps,"
            " retrieval_test, installed_by, installed_at) values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                installed["id"],
                installed["workspace_id"],
                installed["project_key"],
                installed["suite_id"],
                installed["slug"],
                installed["version"],
                installed["title"],
                json.dumps(installed["provenance"], ensure_ascii=False),
                installed["archive_sha256"],
                json.dumps(installed["memory_ids"]),
                json.dumps(installed["conflict_ids"]),
                json.dumps(installed["steps"], ensure_ascii=False),
                json.dumps(installed["retrieval_test"], ensure_ascii=False),
                installed["installed_by"],
                installed["installed_at"],
            ),
        )

    def installed(self, imem_id: str) -> InstalledOpenMemoryRecord | None:
        """One installed open memory's row, or None."""
        row = self.conn.execute("select * from installed_open_memories where id = ?", (imem_id,)).fetchone()
        return _installed(row) if row is not None else None

    def installed_lenses(
        self, workspace_id: str, project_key: str | None, limit: int = 3, facts: int = 3
    ) -> list[InstalledLens]:
        """The newest suites installed in a workspace, each with its first few facts."""
        rows = self.conn.execute(
            "select id, slug, title, version, memory_ids from installed_open_memories"
            " where workspace_id = ? and (project_key is null or ? is null or project_key = ?)"
            " order by installed_at desc limit cast(? as integer)",
            (workspace_id, project_key, project_key, limit),
        ).fetchall()
        lenses: list[InstalledLens] = []
        for row in rows:
            ids: list[str] = loads(row["memory_ids"])
            marks = ",".join("?" * len(ids[:facts]))
            contents = (
                [
                    r[0]
                    for r in self.conn.execute(
                        f"select content from memory_records where id in ({marks}) and deleted_at is null"
                        " order by seq",
                        ids[:facts],
                    )
                ]
                if ids
                else []
            )
            lenses.append(
                {
                    "installed_memory_id": row["id"],
                    "slug": row["slug"],
                    "title": row["title"],
                    "version": row["version"],
                    "memory_count": len(ids),
                    "facts": contents,
                }
            )
        return lenses
