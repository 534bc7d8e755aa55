"""Import directions from DESIGN.md: tui -> (HTTP) -> daemon -> startup_items, state."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "state": {"aiohttp", "textual", "daemon", "tui", "startup_items"},
    "startup_items": {"aiohttp", "textual", "daemon", "tui"},
    "tui": {"state", "daemon", "startup_items"},
    "daemon": {"tui", "textual"},
}


# Single modules a layer may import although their package is forbidden to it. The launcher is
# standard library only (it runs alone in a repository; the test below keeps it so), and it
# holds what every client of the daemon shares for reading its answers (error_message): the
# TUI takes that from it and still reaches neither the daemon's nor the store's code. The plan
# files module (standard library only too) says how a plan's files read, for the CLI and TUI.
ALLOWED = {"tui": {"startup_items.launcher", "startup_items.plan_files"}}


def _imports(path: Path) -> set[str]:
    """The absolute modules ``path`` imports (``from a.b import c``: ``a.b``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_import_directions(package):
    offenders = []
    for path in (ROOT / package).rglob("*.py"):
        bad = {
            name.split(".")[0]
            for name in _imports(path) - ALLOWED.get(package, set())
            if name.split(".")[0] in FORBIDDEN[package]
        }
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {sorted(bad)}")
    # The CLI may open the TUI: that one lazy import is the entry point, not a dependency.
    offenders = [o for o in offenders if not o.startswith("daemon/cli/lifecycle.py imports ['tui']")]
    assert offenders == []


@pytest.mark.parametrize("module", ["launcher.py", "plan_files.py"])
def test_what_the_tui_imports_of_startup_items_is_standard_library_only(module):
    """Importing one (the TUI does) runs startup_items/__init__.py and that module alone."""
    imported = {name.split(".")[0] for name in _imports(ROOT / "startup_items" / module)}
    assert imported and imported <= set(sys.stdlib_module_names), imported
    assert _imports(ROOT / "startup_items" / "__init__.py") == set()


# -- one copy of what every layer needs ---------------------------------------------------

PRODUCT = ("daemon", "state", "startup_items", "tui")


def _calls(*names: str) -> list[str]:
    """Product modules that call one of ``names`` (dotted as written: ``os.replace``)."""
    found = []
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and ast.unparse(node.func) in names:
                    found.append(path.relative_to(ROOT).as_posix())
    return sorted(set(found))


def test_one_atomic_file_writer():
    """Files are written whole through state/atomic.py; the launcher, which runs alone in a
    repository on the standard library, keeps its own few lines."""
    assert _calls("os.replace", "os.rename") == ["startup_items/launcher.py", "state/atomic.py"]
    assert _calls("tempfile.mkstemp", "tempfile.NamedTemporaryFile", "mkstemp") == ["state/atomic.py"]


# -- inside daemon/cli: one module per command group over a shared context -----------------

CLI = "daemon.cli"


def _module_names(package_dir: Path, package: str) -> dict[str, Path]:
    """Every module of the package, by dotted name (the package itself for __init__)."""
    modules = {}
    for path in package_dir.rglob("*.py"):
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join([package, *parts])] = path
    return modules


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module an ``from ... import`` names (relative ones resolved)."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def package_imports(package_dir: Path, package: str) -> tuple[dict[str, set[str]], list[str]]:
    """(module -> the package's modules it imports, anywhere in its body; the private names it
    takes from another of them: ``from a import _x``, ``import a`` ... ``a._x``)."""
    modules = _module_names(package_dir, package)
    edges: dict[str, set[str]] = {name: set() for name in modules}
    private: list[str] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}  # local name -> package module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        edges[name].add(alias.name)
                        if alias.asname:
                            aliases[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(node, name, path.name == "__init__.py")
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in modules:  # `from pkg import module`
                        edges[name].add(submodule)
                        aliases[alias.asname or alias.name] = submodule
                    elif source in modules:
                        edges[name].add(source)
                        if alias.name.startswith("_") and source != name:
                            private.append(f"{name} imports {alias.name} from {source}")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                target = ast.unparse(node.value)
                target = aliases.get(target, target)
                if target in modules and target != name:
                    private.append(f"{name} uses {target}.{node.attr}")
        edges[name].discard(name)
    return edges, private


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle (each once, as the path that closes it)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                found.append(path[path.index(target) :] + [target] if target in path else [node, target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return found


def test_the_cli_package_has_no_cycles_and_shares_nothing_private():
    edges, private = package_imports(ROOT / "daemon" / "cli", CLI)
    assert f"{CLI}.context" in edges and len(edges) >= 10  # the scan sees the package
    assert cycles(edges) == []
    assert private == []
    # What the command groups share lives in the context module, which needs none of them.
    assert edges[f"{CLI}.context"] == set()
    assert all(CLI not in targets for targets in edges.values())  # none imports the parser


def test_the_cli_checks_find_a_cycle_and_a_private_import(tmp_path):
    package = tmp_path / "cli"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg.cli import a, b\n")
    (package / "a.py").write_text("from pkg.cli.b import _helper\n")
    (package / "b.py").write_text("def f():\n    from pkg.cli import a\n    return a._secret\n")
    (package / "c.py").write_text("from . import b\nb._other()\n")
    edges, private = package_imports(package, "pkg.cli")
    assert edges["pkg.cli"] == {"pkg.cli.a", "pkg.cli.b"}
    assert cycles(edges) == [["pkg.cli.a", "pkg.cli.b", "pkg.cli.a"]]
    assert sorted(private) == [
        "pkg.cli.a imports _helper from pkg.cli.b",
        "pkg.cli.b uses pkg.cli.a._secret",
        "pkg.cli.c uses pkg.cli.b._other",
    ]


# -- the generic request path knows no dialect ---------------------------------------------

# (daemon/app.py is the composition root: it assembles the dialects, so it may name them.)
GENERIC = ("daemon/endpoints.py", "daemon/middleware.py", "daemon/dialects.py")


@pytest.mark.parametrize("module", GENERIC)
def test_the_generic_request_path_imports_no_dialect(module):
    """A dialect's per-request work and error envelope are registered by the dialect
    (daemon/dialects.py); the wrapper and the middleware import no dialect module
    (daemon.api.<dialect>, daemon.runtime.mem1)."""
    dialect_modules = {
        f"daemon.api.{p.stem}" for p in (ROOT / "daemon" / "api").glob("*.py") if p.stem != "__init__"
    } | {"daemon.runtime.mem1"}
    assert _imports(ROOT / module) & dialect_modules == set()


# -- SQL only in the repositories (state/) ---------------------------------------------------

# A string that reads as a statement, not prose: "select ... from", "insert into", "update
# X set", "delete from", DDL, "pragma x", "with x as (".
SQL_TEXT = re.compile(
    r"^\s*(select\b.*\bfrom\b|insert\s+(or\s+\w+\s+)?into\b|replace\s+into\b|update\s+\w+\s+set\b"
    r"|delete\s+from\b|(create|drop)\s+(temp\s+|unique\s+|virtual\s+)*(table|index|trigger|view)\b"
    r"|alter\s+table\b|pragma\s+\w+|with\s+(recursive\s+)?\w+\s+as\s*\()",
    re.IGNORECASE | re.DOTALL,
)
EXECUTE = {"execute", "executemany", "executescript"}
SQLITE_MODULES = {"sqlite3", "sqlean"}


def sql_uses(path: Path) -> list[str]:
    """Where a module executes SQL: calls of ``.execute``/``.executemany``/``.executescript``,
    imports of sqlite3 (or its drop-in, sqlean) and string literals that read as SQL
    (docstrings aside), each as ``line: what``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in EXECUTE:
            found.append(f"{node.lineno}: .{node.func.attr}()")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"{node.lineno}: import {n}" for n in names if n.split(".")[0] in SQLITE_MODULES]
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and SQL_TEXT.match(node.value)
        ):
            found.append(f"{node.lineno}: SQL {node.value.strip()[:40]!r}")
    return sorted(found, key=lambda s: int(s.split(":")[0]))


def modules(*folders: str, at_least: int) -> list[Path]:
    """The Python files under these folders of the repository; more than ``at_least`` of
    them, or the scan would not be seeing the packages it is meant to."""
    found = sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))
    assert len(found) > at_least, (folders, len(found))
    return found


def offenders(paths: list[Path], check: Callable[[Path], list[str]]) -> dict[str, list[str]]:
    """What ``check`` finds, by file (relative to the repository), for the files it finds any in."""
    return {p.relative_to(ROOT).as_posix(): found for p in paths if (found := check(p))}


def test_no_sql_outside_the_repositories():
    """daemon/ (HTTP handlers, domain services, jobs, the CLI) reaches the database through
    the repositories of state/ only: no module of it, nor of startup_items/ or tui/,
    executes SQL."""
    assert offenders(modules(*(p for p in PRODUCT if p != "state"), at_least=100), sql_uses) == {}


def test_the_sql_check_finds_each_form(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        '"""Select the rows from the table: prose, not SQL."""\n'
        "import sqlite3\n"
        "from sqlean import dbapi2\n"
        "def f(conn, ns):\n"
        '    """Delete from the cache what is stale."""\n'
        '    conn.execute("select 1")\n'
        '    conn.executemany("insert into t values (?)", [(1,)])\n'
        '    rows = f"select id from memory_records where namespace = {ns}"\n'
        '    return "update claims set released_at = ?", "Update the plan: set it free", rows\n'
    )
    assert sql_uses(planted) == [
        "2: import sqlite3",
        "3: import sqlean",
        "6: .execute()",
        "7: .executemany()",
        "7: SQL 'insert into t values (?)'",
        "8: SQL 'select id from memory_records where name'",
        "9: SQL 'update claims set released_at = ?'",
    ]
    planted.write_text(
        '"""Select the rows from the table."""\ndef f(job):\n    return job.run("update it")\n'
    )
    assert sql_uses(planted) == []  # prose and other calls are not SQL


# -- HTTP handlers reach the store through the domain services ------------------------------


def store_uses(path: Path) -> list[str]:
    """Where a module reaches the Store itself: an attribute ``.store`` (``services.store``,
    ``app.store``) or the app key ``keys.STORE``, each as ``line: what``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in ("store", "STORE"):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return sorted(found, key=lambda s: int(s.split(":")[0]))


def test_handlers_reach_the_store_only_through_services():
    """daemon/api (HTTP only) -> daemon/runtime (domain services) -> state: a handler asks a
    service, never a repository of the store."""
    assert offenders(modules("daemon/api", at_least=15), store_uses) == {}


def test_the_store_check_finds_each_form(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from daemon import keys\n"
        "async def handler(request, call):\n"
        "    store = request.app[keys.STORE]\n"
        "    return call.services.store.memories.count(), store\n"
    )
    assert store_uses(planted) == ["3: keys.STORE", "4: call.services.store"]
    planted.write_text("async def handler(request, call):\n    return call.services.memory_stores.list()\n")
    assert store_uses(planted) == []


# The HTTP layer, which the domain services never import: aiohttp, the handlers, the request
# wrapper, the middleware and query declarations, the app's keys and the CLI.
HTTP_LAYER = ("aiohttp", "daemon.api", "daemon.endpoints", "daemon.middleware", "daemon.validation")
HTTP_LAYER += ("daemon.http_errors", "daemon.keys", "daemon.app", "daemon.cli")


def http_imports(path: Path) -> list[str]:
    """The HTTP-layer modules ``path`` imports, anywhere in its body (``from daemon import
    keys`` counts as ``daemon.keys``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return sorted(n for n in names if any(n == m or n.startswith(m + ".") for m in HTTP_LAYER))


def test_domain_services_import_nothing_of_http():
    """daemon/runtime raises domain errors (state/errors.py) and returns data; the handlers
    and the error middleware make HTTP of them."""
    assert offenders(modules("daemon/runtime", at_least=30), http_imports) == {}


def test_the_http_import_check_finds_each_form(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from aiohttp import web\n"
        "def f():\n"
        "    from daemon.api.local import status\n"
        "    import daemon.keys\n"
        "    from daemon import endpoints\n"
        "    from daemon.runtime.access import public_memory\n"
    )
    assert http_imports(planted) == [
        "aiohttp",
        "aiohttp.web",
        "daemon.api.local",
        "daemon.api.local.status",
        "daemon.endpoints",
        "daemon.keys",
    ]
